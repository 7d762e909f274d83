// SPDX-License-Identifier: GPL-2.0
//! What the exporter reads besides the bond: the traffic counters of each
//! member's port and netdev, from sysfs (one value per file).

use std::fs;
use std::path::PathBuf;

/// A member port's RDMA traffic, each counter where the HCA has it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortTraffic {
    pub tx_bytes: Option<u64>,
    pub rx_bytes: Option<u64>,
    pub tx_packets: Option<u64>,
    pub rx_packets: Option<u64>,
}

/// The machine under the exporter, a double in tests.
pub trait Host {
    /// The name of the netdev with `ifindex`.
    fn ifname(&self, ifindex: u32) -> Option<String>;
    /// Port 1's traffic of RDMA device `ibdev`.
    fn port_traffic(&self, ibdev: &str) -> PortTraffic;
    /// (transmitted, received) bytes of netdev `name`.
    fn netdev_bytes(&self, name: &str) -> Option<(u64, u64)>;
}

/// The running system, under `root` (`/` but in tests).
pub struct SysHost {
    pub root: PathBuf,
}

impl SysHost {
    fn read(&self, path: &str) -> Option<u64> {
        let text = fs::read_to_string(self.root.join(path)).ok()?;
        text.trim().parse().ok()
    }
}

/// A name that may stand in a sysfs path: no separators, no `..`.
fn plain(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/')
}

impl Host for SysHost {
    fn ifname(&self, ifindex: u32) -> Option<String> {
        mrbondctl::sys::if_indextoname(ifindex)
    }

    fn port_traffic(&self, ibdev: &str) -> PortTraffic {
        if !plain(ibdev) {
            return PortTraffic::default();
        }
        let port = format!("sys/class/infiniband/{ibdev}/ports/1");
        // The IBA's PortXmitData and PortRcvData count 4-byte words.
        let words = |name: &str| {
            self.read(&format!("{port}/counters/{name}"))
                .and_then(|w| w.checked_mul(4))
        };
        let count = |name: &str, hw: &str| {
            self.read(&format!("{port}/counters/{name}"))
                .or_else(|| self.read(&format!("{port}/hw_counters/{hw}")))
        };
        PortTraffic {
            tx_bytes: words("port_xmit_data"),
            rx_bytes: words("port_rcv_data"),
            // rxe has no PMA counters, only its own packet counts.
            tx_packets: count("port_xmit_packets", "sent_pkts"),
            rx_packets: count("port_rcv_packets", "rcvd_pkts"),
        }
    }

    fn netdev_bytes(&self, name: &str) -> Option<(u64, u64)> {
        if !plain(name) {
            return None;
        }
        let stat = |s: &str| self.read(&format!("sys/class/net/{name}/statistics/{s}"));
        Some((stat("tx_bytes")?, stat("rx_bytes")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> SysHost {
        let root = std::env::temp_dir().join(format!(
            "mrbond-exporter-test-{}-{}",
            std::process::id(),
            files.len()
        ));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().expect("has a parent")).expect("mkdir");
            fs::write(p, text).expect("write");
        }
        SysHost { root }
    }

    #[test]
    fn pma_counters_in_bytes_and_rxe_packets() {
        let h = tree(&[
            (
                "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data",
                "10\n",
            ),
            (
                "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data",
                "3\n",
            ),
            (
                "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_packets",
                "2\n",
            ),
            (
                "sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts",
                "7\n",
            ),
            (
                "sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts",
                "8\n",
            ),
            ("sys/class/net/eth1/statistics/tx_bytes", "100\n"),
            ("sys/class/net/eth1/statistics/rx_bytes", "200\n"),
        ]);
        let mlx = h.port_traffic("mlx5_0");
        assert_eq!((mlx.tx_bytes, mlx.rx_bytes), (Some(40), Some(12)));
        assert_eq!((mlx.tx_packets, mlx.rx_packets), (Some(2), None));
        let rxe = h.port_traffic("rxe0");
        assert_eq!(
            (rxe.tx_bytes, rxe.tx_packets, rxe.rx_packets),
            (None, Some(7), Some(8))
        );
        assert_eq!(h.netdev_bytes("eth1"), Some((100, 200)));
        assert_eq!(h.netdev_bytes("../eth1"), None);
        assert_eq!(h.port_traffic(".."), PortTraffic::default());
        let _ = fs::remove_dir_all(&h.root);
    }
}
