// SPDX-License-Identifier: GPL-2.0
//! `mrbondctl apply`: every bond file of the configuration directory (or
//! the bonds named) read, planned against the running bond
//! ([`crate::config::plan`]) and carried out request by request; with
//! `--dry-run`, only printed. The systemd unit `rdma-mrbond@<bond>.service`
//! runs it at boot and when a member device arrives.

use std::path::Path;

use crate::cli::ApplyArgs;
use crate::cm_order;
use crate::config::{self, Action, BondConfig};
use crate::error::Error;
use crate::msg::{self, Bond, MemberSpec};
use crate::nl::Client;
use crate::sys;

/// The running bond `name`, `None` if there is none.
fn running(c: &mut Client, name: &str) -> Result<Option<Bond>, Error> {
    match c.request(msg::bond_get(Some(name))?) {
        Ok(replies) => Ok(replies.iter().map(msg::parse_bond).next().transpose()?),
        // No such bond: ENODEV (BOND_GET's do) or ENOENT.
        Err(Error::Kernel(k)) if k.errno == libc::ENODEV || k.errno == libc::ENOENT => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where the RDMA devices are in sysfs.
const RDMA_CLASS: &str = "/sys/class/infiniband";

fn rdma_device_exists(ibdev: &str) -> bool {
    Path::new(RDMA_CLASS).join(ibdev).exists()
}

/// The systemd unit that applies bond `name`'s file.
pub fn unit_of(name: &str) -> String {
    format!("rdma-mrbond@{name}.service")
}

/// `--units-for IBDEV`: the units of the bonds whose files name `ibdev` as
/// a member, on one line, for the udev rule's `SYSTEMD_WANTS`; nothing
/// when no file names it. A file that does not parse is reported and
/// skipped: the others' bonds still come up.
pub fn print_units_for(args: &ApplyArgs, ibdev: &str) -> Result<(), Error> {
    // No directory, no bonds: udev asks about every RDMA device.
    if !args.config_dir.is_dir() {
        return Ok(());
    }
    let mut units = Vec::new();
    for (name, text) in files(args)? {
        match config::parse(&name, &text) {
            Ok(cfg) if cfg.bond.members.iter().any(|m| m.ibdev == ibdev) => {
                units.push(unit_of(&name))
            }
            Ok(_) => {}
            Err(e) => eprintln!("mrbondctl: {name}.conf: {e}"),
        }
    }
    if !units.is_empty() {
        println!("{}", units.join(" "));
    }
    Ok(())
}

/// The bond files to apply: those named, or every `*.conf` of the
/// directory, in name order.
fn files(args: &ApplyArgs) -> Result<Vec<(String, String)>, Error> {
    let mut names: Vec<String> = if args.bonds.is_empty() {
        let dir = std::fs::read_dir(&args.config_dir)
            .map_err(|e| Error::Local(format!("{}: {e}", args.config_dir.display())))?;
        dir.filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".conf")
                    .map(str::to_string)
            })
            .collect()
    } else {
        args.bonds.clone()
    };
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let path = Path::new(&args.config_dir).join(format!("{n}.conf"));
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::Local(format!("{}: {e}", path.display())))?;
            Ok((n, text))
        })
        .collect()
}

fn execute(c: &mut Client, cfg: &BondConfig, lacp: Option<u32>, a: &Action) -> Result<(), Error> {
    let name = cfg.name.as_str();
    let req = match a {
        Action::Create(b) => msg::bond_new(name, b.mode, b.policy, lacp, &b.members)?,
        Action::Wait(_) => return Ok(()),
        Action::SetPolicy(p) => msg::bond_set(name, *p)?,
        Action::AddMember(m) => msg::member_op(crate::attrs::Cmd::MemberAdd, name, m)?,
        Action::DelMember(d) => {
            msg::member_op(crate::attrs::Cmd::MemberDel, name, &MemberSpec::new(d))?
        }
        Action::SetWeight(d, w) => msg::member_op(
            crate::attrs::Cmd::MemberSet,
            name,
            &MemberSpec {
                weight: Some(*w),
                ..MemberSpec::new(d)
            },
        )?,
        Action::SetEcn(v) => msg::ecn_set(name, v)?,
        Action::SetPfc(b) => msg::pfc_set(name, Some(*b), None)?,
        Action::SetOverride(d, o) => msg::pfc_set(name, None, Some((d.as_str(), *o)))?,
    };
    c.request(req).map(drop)
}

/// Puts the bond ahead of the members rdma_cm would otherwise pick over it
/// ([`cm_order`]); `cm-order leave` and a member that cannot be
/// re-registered get a warning. `index`: the bond's RDMA device index.
fn bond_first(cfg: &BondConfig, index: u32, dry_run: bool) -> Result<(), Error> {
    let name = cfg.name.as_str();
    let members: Vec<String> = cfg.bond.members.iter().map(|m| m.ibdev.clone()).collect();
    let class = Path::new(RDMA_CLASS);
    for ibdev in cm_order::ahead_of_bond(index, &cm_order::device_indices()?, &members) {
        let how = cm_order::how(class, &ibdev);
        let line = format!("{name}: {ibdev} is ahead of the bond in rdma_cm's device order");
        match &how {
            _ if cfg.cm_order_leave => {
                eprintln!("mrbondctl: {line} (cm-order leave): connections by address may use it directly")
            }
            cm_order::Reregister::Unknown(why) => eprintln!(
                "mrbondctl: {line}, and cannot be re-registered ({why}): connections by address may use it directly"
            ),
            _ if dry_run => println!("would: re-register {ibdev} ({line})"),
            _ => {
                println!("re-register {ibdev} ({line})");
                cm_order::reregister(class, &ibdev, &how)?;
            }
        }
    }
    Ok(())
}

/// Applies every file; a bond whose file is wrong or whose plan fails is
/// reported and the others still applied; the exit status says whether
/// all went.
pub fn run(c: &mut Client, args: &ApplyArgs) -> Result<(), Error> {
    let mut failed = Vec::new();
    for (name, text) in files(args)? {
        let result = (|| {
            let cfg = config::parse(&name, &text)
                .map_err(|e| Error::Local(format!("{name}.conf: {e}")))?;
            let lacp = match &cfg.bond.lacp_source {
                Some(ifn) => {
                    Some(sys::if_nametoindex(ifn).ok_or_else(|| Error::NoSuchDevice(ifn.clone()))?)
                }
                None => None,
            };
            let current = running(c, &name)?;
            let plan = config::plan(&cfg, current.as_ref(), lacp, &rdma_device_exists)
                .map_err(Error::Local)?;
            for a in &plan {
                let request = !matches!(a, Action::Wait(_));
                println!(
                    "{}{}",
                    if args.dry_run && request {
                        "would: "
                    } else {
                        ""
                    },
                    config::describe(&name, a)
                );
                if !args.dry_run {
                    execute(c, &cfg, lacp, a)?;
                }
            }
            if current.is_some() && plan.iter().all(|a| matches!(a, Action::Wait(_))) {
                println!("{name}: as configured");
            }
            // The bond's index: BOND_GET's from before, or, for a bond just
            // created, from asking again; none before it exists (a dry run,
            // or members not there yet).
            let created = !args.dry_run && plan.iter().any(|a| matches!(a, Action::Create(_)));
            let index = if created {
                running(c, &name)?.and_then(|b| b.ibdev_index)
            } else {
                current.and_then(|b| b.ibdev_index)
            };
            match index {
                Some(index) => bond_first(&cfg, index, args.dry_run),
                None => Ok(()),
            }
        })();
        if let Err(e) = result {
            eprintln!("mrbondctl: {name}: {e}");
            failed.push(name);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Local(format!("not applied: {}", failed.join(" "))))
    }
}
