// SPDX-License-Identifier: GPL-2.0
//! The bond ahead of its members in rdma_cm's device order.
//!
//! rdma_cm's active side binds a connection to the first RDMA device of its
//! list that holds the source address's GID, and the list is in
//! registration order: a member registered before its bond (the order at
//! boot, where the HCA's driver loads first) takes connections by address
//! away from the bond. The kernel offers no way to reorder that list, so
//! `apply` re-registers such a member, which puts it behind the bond; the
//! bond keeps the member's slot while it is away and re-attaches it when it
//! comes back under its name.
//!
//! How a member is re-registered depends on its driver:
//! - soft RoCE (rxe): `rdma link del`, then `rdma link add` over the same
//!   netdev;
//! - an HCA whose RDMA device sits on the auxiliary bus (mlx5_ib, irdma,
//!   ...): that auxiliary device unbound from its driver and bound again,
//!   which re-creates the RDMA device and leaves the netdev alone;
//! - anything else is reported and left where it is.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;

/// How a member's RDMA device can be registered anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reregister {
    /// Soft RoCE over `netdev`.
    Rxe { netdev: String },
    /// `device` of the auxiliary bus, bound to the driver at `driver`.
    Auxiliary { driver: PathBuf, device: String },
    /// No way known from here; says why.
    Unknown(String),
}

/// How `ibdev` under `class` (`/sys/class/infiniband`) is re-registered.
pub fn how(class: &Path, ibdev: &str) -> Reregister {
    let dev = class.join(ibdev);
    // rxe's own attribute: the netdev it runs over.
    if let Ok(parent) = std::fs::read_to_string(dev.join("parent")) {
        return Reregister::Rxe {
            netdev: parent.trim().to_string(),
        };
    }
    let Ok(parent) = std::fs::canonicalize(dev.join("device")) else {
        return Reregister::Unknown("no parent device".into());
    };
    let bus = std::fs::canonicalize(parent.join("subsystem")).ok();
    let driver = std::fs::canonicalize(parent.join("driver")).ok();
    match (bus, driver, parent.file_name()) {
        (Some(bus), Some(driver), Some(name)) if bus.file_name() == Some("auxiliary".as_ref()) => {
            Reregister::Auxiliary {
                driver,
                device: name.to_string_lossy().into_owned(),
            }
        }
        (Some(bus), _, _) => Reregister::Unknown(format!(
            "its device is on the {} bus, not the auxiliary bus",
            bus.file_name()
                .map_or_else(|| "?".into(), |b| b.to_string_lossy())
        )),
        _ => Reregister::Unknown("no bus or driver for its device".into()),
    }
}

/// The members registered before the bond (a lower RDMA device index),
/// in the members' order.
pub fn ahead_of_bond(
    bond_index: u32,
    indices: &[(String, u32)],
    members: &[String],
) -> Vec<String> {
    members
        .iter()
        .filter(|m| {
            indices
                .iter()
                .any(|(name, index)| name == *m && *index < bond_index)
        })
        .cloned()
        .collect()
}

/// Every RDMA device's name and index, from `rdma -j dev show`.
pub fn device_indices() -> Result<Vec<(String, u32)>, Error> {
    let out = Command::new("rdma")
        .args(["-j", "dev", "show"])
        .output()
        .map_err(|e| Error::Local(format!("rdma dev show: {e}")))?;
    if !out.status.success() {
        return Err(Error::Local(format!(
            "rdma dev show: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    parse_device_indices(&out.stdout)
}

fn parse_device_indices(json: &[u8]) -> Result<Vec<(String, u32)>, Error> {
    let devs: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| Error::Local(format!("rdma dev show: {e}")))?;
    Ok(devs
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let name = d.get("ifname")?.as_str()?.to_string();
            let index = u32::try_from(d.get("ifindex")?.as_u64()?).ok()?;
            Some((name, index))
        })
        .collect())
}

fn run(cmd: &[&str]) -> Result<(), Error> {
    let out = Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .map_err(|e| Error::Local(format!("{}: {e}", cmd.join(" "))))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::Local(format!(
            "{}: {}",
            cmd.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Registers `ibdev` anew as `how` says, and waits (up to 30 s) for it to
/// be back under its name.
pub fn reregister(class: &Path, ibdev: &str, how: &Reregister) -> Result<(), Error> {
    match how {
        Reregister::Rxe { netdev } => {
            run(&["rdma", "link", "del", ibdev])?;
            run(&[
                "rdma", "link", "add", ibdev, "type", "rxe", "netdev", netdev,
            ])?;
        }
        Reregister::Auxiliary { driver, device } => {
            let write = |file: &str| {
                std::fs::write(driver.join(file), device)
                    .map_err(|e| Error::Local(format!("{}/{file}: {e}", driver.display())))
            };
            write("unbind")?;
            write("bind")?;
        }
        Reregister::Unknown(why) => {
            return Err(Error::Local(format!(
                "{ibdev} cannot be re-registered: {why}"
            )))
        }
    }
    for _ in 0..300 {
        if class.join(ibdev).exists() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(Error::Local(format!(
        "{ibdev} did not come back under its name after its re-registration"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn members_registered_before_the_bond() {
        let idx = [
            ("mlx5_0".to_string(), 0),
            ("mlx5_1".to_string(), 3),
            ("mrbond0".to_string(), 2),
        ];
        let members = [
            "mlx5_0".to_string(),
            "mlx5_1".to_string(),
            "gone".to_string(),
        ];
        assert_eq!(ahead_of_bond(2, &idx, &members), ["mlx5_0"]);
    }

    #[test]
    fn indices_from_rdma_json() {
        let json =
            br#"[{"ifindex":0,"ifname":"rxe0","node_type":"ca"},{"ifindex":4,"ifname":"mrbond0"}]"#;
        assert_eq!(
            parse_device_indices(json).expect("parses"),
            [("rxe0".to_string(), 0), ("mrbond0".to_string(), 4)]
        );
        assert!(parse_device_indices(b"not json").is_err());
    }

    /// A sysfs-like tree: an rxe device, an mlx5 device on the auxiliary
    /// bus, and one on PCI directly.
    #[test]
    fn how_by_driver() {
        let root = std::env::temp_dir().join(format!("mrbond-cm-order-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let class = root.join("class/infiniband");
        let aux = root.join("devices/pci0/0000:01:00.0/mlx5_core.rdma.0");
        let pci = root.join("devices/pci0/0000:02:00.0");
        for d in [
            class.join("rxe0"),
            class.join("mlx5_0"),
            class.join("hfi1_0"),
            aux.clone(),
            pci.clone(),
            root.join("bus/auxiliary/drivers/mlx5_ib"),
            root.join("bus/pci/drivers/hfi1"),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(class.join("rxe0/parent"), "enp1s0\n").expect("write");
        symlink(&aux, class.join("mlx5_0/device")).expect("symlink");
        symlink(root.join("bus/auxiliary"), aux.join("subsystem")).expect("symlink");
        symlink(
            root.join("bus/auxiliary/drivers/mlx5_ib"),
            aux.join("driver"),
        )
        .expect("symlink");
        symlink(&pci, class.join("hfi1_0/device")).expect("symlink");
        symlink(root.join("bus/pci"), pci.join("subsystem")).expect("symlink");
        symlink(root.join("bus/pci/drivers/hfi1"), pci.join("driver")).expect("symlink");

        assert_eq!(
            how(&class, "rxe0"),
            Reregister::Rxe {
                netdev: "enp1s0".into()
            }
        );
        let Reregister::Auxiliary { driver, device } = how(&class, "mlx5_0") else {
            panic!("mlx5_0: {:?}", how(&class, "mlx5_0"));
        };
        assert!(driver.ends_with("bus/auxiliary/drivers/mlx5_ib"));
        assert_eq!(device, "mlx5_core.rdma.0");
        assert_eq!(
            how(&class, "hfi1_0"),
            Reregister::Unknown("its device is on the pci bus, not the auxiliary bus".into())
        );
        assert!(matches!(how(&class, "nosuch"), Reregister::Unknown(_)));
        // Unbind, bind, then back under its name.
        reregister(&class, "mlx5_0", &how(&class, "mlx5_0")).expect("re-registers");
        let drv = root.join("bus/auxiliary/drivers/mlx5_ib");
        assert_eq!(
            std::fs::read_to_string(drv.join("unbind")).expect("unbind"),
            "mlx5_core.rdma.0"
        );
        assert_eq!(
            std::fs::read_to_string(drv.join("bind")).expect("bind"),
            "mlx5_core.rdma.0"
        );
        std::fs::remove_dir_all(&root).expect("cleanup");
    }
}
