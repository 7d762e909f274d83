// SPDX-License-Identifier: GPL-2.0
//! mrbondctl: configure and monitor rdma_mrbond bonds (mrbondN RDMA devices)
//! over the "rdma_mrbond" generic netlink family.
//!
//! This file is the command line (clap) and the glue between it, the
//! request builders in [`msg`], the transport in [`nl`] and the renderers
//! in [`output`]. Exit status: 0 success, 1 kernel or runtime error,
//! 2 usage error.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args, Parser, Subcommand};

use mrbondctl::attrs::{self, AdminState, Cmd, Mode, Policy, MCGRP_EVENTS};
use mrbondctl::error::Error;
use mrbondctl::msg::{self, Bond, MemberSpec};
use mrbondctl::nl::{Client, Notification};
use mrbondctl::{knob_args, knob_output, output, sys};

#[derive(Debug, Parser)]
#[command(
    name = "mrbondctl",
    version,
    about = "Configure and monitor rdma_mrbond bonded RDMA devices (mrbondN)",
    after_help = "Exit status: 0 ok, 1 kernel or runtime error, 2 usage error."
)]
struct Cli {
    /// JSON output (bond show, bond add, monitor; errors on stderr)
    #[arg(short, long, global = true)]
    json: bool,

    #[command(subcommand)]
    cmd: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create, delete and show bonds
    #[command(subcommand)]
    Bond(BondCmd),
    /// Change a bond's placement policy
    #[command(subcommand)]
    Policy(PolicyCmd),
    /// Add, remove and configure bond members
    #[command(subcommand)]
    Member(MemberCmd),
    /// ECN marking, default traffic class and DCQCN parameters of a bond
    #[command(subcommand)]
    Ecn(EcnCmd),
    /// Per-priority flow control of a bond's members
    #[command(subcommand)]
    Pfc(PfcCmd),
    /// Print member usability changes as they happen (group "events")
    Monitor(MonitorArgs),
}

#[derive(Debug, Subcommand)]
enum EcnCmd {
    /// Change ECN settings (ECN_SET): enable on|off, tclass N, and DCQCN
    /// parameters by their mlx5 names (np-enable N, rp-rpg-gd N, ...)
    Set {
        /// Bond name
        name: String,
        /// KEY VALUE pairs
        #[arg(value_name = "KEY VALUE", num_args = 1.., required = true, allow_hyphen_values = true)]
        settings: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
enum PfcCmd {
    /// Change the PFC bitmap or a member's override and apply it, member by
    /// member (PFC_SET): [bitmap 0xNN] [member DEV override 0xNN|none]
    Set {
        /// Bond name
        name: String,
        /// bitmap N, member DEV override N|none
        #[arg(value_name = "KEY VALUE", num_args = 1.., required = true)]
        settings: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
enum BondCmd {
    /// Create a bond over an explicit member list (BOND_NEW)
    Add {
        /// Name of the new bond device (e.g. mrbond0)
        name: String,
        /// Deployment mode [kernel default if omitted]
        #[arg(long)]
        mode: Option<Mode>,
        /// QP placement policy [kernel default if omitted]
        #[arg(long)]
        policy: Option<Policy>,
        /// Bond netdev whose slaves' LACP state gates the members
        #[arg(long, value_name = "IFNAME")]
        lacp_source: Option<String>,
        /// Member RDMA device, optionally with its wrr weight (1..1000);
        /// repeat the option or list several
        #[arg(
            long = "member",
            value_name = "IBDEV[:WEIGHT]",
            required = true,
            num_args = 1..,
            value_parser = MemberSpec::parse
        )]
        members: Vec<MemberSpec>,
    },
    /// Destroy a bond (BOND_DEL)
    #[command(visible_alias = "delete")]
    Del {
        /// Bond name
        name: String,
    },
    /// Show one bond, or all bonds, with their members (BOND_GET)
    #[command(visible_alias = "list")]
    Show {
        /// Bond name [all bonds if omitted]
        name: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum PolicyCmd {
    /// Set the QP placement policy of a bond (BOND_SET)
    Set {
        /// Bond name
        name: String,
        /// New policy
        policy: Policy,
    },
}

#[derive(Debug, Subcommand)]
enum MemberCmd {
    /// Add a member to a bond (MEMBER_ADD)
    Add {
        /// Bond name
        name: String,
        /// Member RDMA device, optionally with its wrr weight (1..1000)
        #[arg(value_name = "IBDEV[:WEIGHT]", value_parser = MemberSpec::parse)]
        member: MemberSpec,
    },
    /// Remove a member from a bond (MEMBER_DEL)
    #[command(visible_alias = "delete")]
    Del {
        /// Bond name
        name: String,
        /// Member RDMA device
        ibdev: String,
    },
    /// Change a member's weight, admin state or capacity (MEMBER_SET)
    #[command(group(ArgGroup::new("change").required(true).multiple(true)))]
    Set {
        /// Bond name
        name: String,
        /// Member RDMA device
        ibdev: String,
        /// New wrr weight (1..1000)
        #[arg(long, value_name = "N", group = "change")]
        weight: Option<u32>,
        /// New admin state
        #[arg(long, group = "change")]
        admin: Option<AdminState>,
        /// Capacity in Mb/s that wrr measures the member's utilisation
        /// against; 0 takes its link speed
        #[arg(long, value_name = "MBPS", group = "change")]
        capacity_mbps: Option<u32>,
    },
}

#[derive(Debug, Args)]
struct MonitorArgs {
    /// Exit after N events (exit status 1 if --timeout passes first)
    #[arg(short, long, value_name = "N")]
    count: Option<u64>,
    /// Exit after SECS seconds (fractions allowed)
    #[arg(short, long, value_name = "SECS", value_parser = parse_secs)]
    timeout: Option<Duration>,
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s.parse().map_err(|_| format!("invalid number \"{s}\""))?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("invalid duration \"{s}\""))
}

/// Writes one line to stdout and flushes it (monitor output is consumed live).
fn emit(line: &str) -> Result<(), Error> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

fn ifname(index: u32) -> Option<String> {
    sys::if_indextoname(index)
}

fn parse_replies(replies: &[msg::GenlMsg]) -> Result<Vec<Bond>, Error> {
    replies.iter().map(msg::parse_bond).collect()
}

fn bond_show(c: &mut Client, name: Option<&str>, json: bool) -> Result<(), Error> {
    let req = msg::bond_get(name)?;
    let replies = match name {
        Some(_) => c.request(req)?,
        None => c.dump(req)?,
    };
    if c.dump_interrupted {
        eprintln!("mrbondctl: dump was interrupted and may be inconsistent");
    }
    let bonds = parse_replies(&replies)?;
    if json {
        return emit(&output::bonds_json(&bonds, &ifname).to_string());
    }
    let text: Vec<String> = bonds
        .iter()
        .map(|b| output::bond_text(b, &ifname))
        .collect();
    let mut out = io::stdout().lock();
    write!(out, "{}", text.join("\n"))?;
    out.flush()?;
    Ok(())
}

fn bond_cmd(c: &mut Client, cmd: BondCmd, json: bool) -> Result<(), Error> {
    match cmd {
        BondCmd::Add {
            name,
            mode,
            policy,
            lacp_source,
            members,
        } => {
            let lacp = match lacp_source {
                Some(dev) => Some(sys::if_nametoindex(&dev).ok_or(Error::NoSuchDevice(dev))?),
                None => None,
            };
            let replies = c.request(msg::bond_new(&name, mode, policy, lacp, &members)?)?;
            if json {
                let created = match parse_replies(&replies)?.into_iter().next() {
                    Some(b) if !b.name.is_empty() => b,
                    _ => Bond {
                        name,
                        ..Bond::default()
                    },
                };
                emit(&output::created_json(&created).to_string())?;
            }
            Ok(())
        }
        BondCmd::Del { name } => c.request(msg::bond_del(&name)?).map(drop),
        BondCmd::Show { name } => bond_show(c, name.as_deref(), json),
    }
}

fn member_cmd(c: &mut Client, cmd: MemberCmd) -> Result<(), Error> {
    let (op, name, spec) = match cmd {
        MemberCmd::Add { name, member } => (Cmd::MemberAdd, name, member),
        MemberCmd::Del { name, ibdev } => (
            Cmd::MemberDel,
            name,
            MemberSpec {
                ibdev,
                weight: None,
                admin: None,
                capacity_mbps: None,
            },
        ),
        MemberCmd::Set {
            name,
            ibdev,
            weight,
            admin,
            capacity_mbps,
        } => (
            Cmd::MemberSet,
            name,
            MemberSpec {
                ibdev,
                weight,
                admin,
                capacity_mbps,
            },
        ),
    };
    c.request(msg::member_op(op, &name, &spec)?).map(drop)
}

/// A usage error in the keyword arguments: clap's format, exit status 2.
fn usage_error(msg: &str) -> ! {
    use clap::CommandFactory;
    Cli::command()
        .error(clap::error::ErrorKind::InvalidValue, msg)
        .exit()
}

/// After a set: warns (stderr) about members where the knobs are not
/// applied, so that nothing passes for a silent success.
fn warn_not_applied(c: &mut Client, name: &str, knobs: u32) -> Result<(), Error> {
    let replies = c.request(msg::bond_get(Some(name))?)?;
    for b in parse_replies(&replies)? {
        for w in knob_output::not_applied_warnings(&b, knobs) {
            eprintln!("mrbondctl: {w}");
        }
    }
    Ok(())
}

fn ecn_cmd(c: &mut Client, cmd: EcnCmd) -> Result<(), Error> {
    let EcnCmd::Set { name, settings } = cmd;
    let values = knob_args::parse_ecn(&settings).unwrap_or_else(|e| usage_error(&e));
    c.request(msg::ecn_set(&name, &values)?)?;
    let mask = values.iter().fold(0u32, |m, (id, _)| m | (1 << id));
    warn_not_applied(c, &name, mask)
}

fn pfc_cmd(c: &mut Client, cmd: PfcCmd) -> Result<(), Error> {
    let PfcCmd::Set { name, settings } = cmd;
    let args = knob_args::parse_pfc(&settings).unwrap_or_else(|e| usage_error(&e));
    let member = args.member.as_ref().map(|(d, o)| (d.as_str(), *o));
    let result = c.request(msg::pfc_set(&name, args.bitmap, member)?);
    // Every member's outcome when the bond applied the request, also when
    // a member failed; none for a refused request, which changed nothing.
    let applied = match &result {
        Ok(_) => true,
        Err(Error::Kernel(k)) => k
            .msg
            .as_deref()
            .is_some_and(|m| m.starts_with(attrs::PFC_MEMBER_FAILED)),
        Err(_) => false,
    };
    let pfc_enable = 1 << attrs::ECN_KNOBS;
    let warned = if applied {
        warn_not_applied(c, &name, pfc_enable)
    } else {
        Ok(())
    };
    result?;
    warned
}

fn monitor(c: &mut Client, args: &MonitorArgs, json: bool) -> Result<(), Error> {
    c.subscribe(MCGRP_EVENTS)?;
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut seen: u64 = 0;
    loop {
        if args.count.is_some_and(|n| seen >= n) {
            return Ok(());
        }
        let Some(n) = c.next_notification(deadline)? else {
            return match args.count {
                Some(_) => Err(Error::Local(format!("timed out after {seen} event(s)"))),
                None => Ok(()),
            };
        };
        let g = match n {
            Notification::Overrun => {
                eprintln!("mrbondctl: event queue overflowed, events were lost");
                continue;
            }
            Notification::Msg(g) => g,
        };
        if *g.cmd() != Cmd::MemberChangeNtf {
            continue;
        }
        let b = match msg::parse_bond(&g) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("mrbondctl: skipping notification: {e}");
                continue;
            }
        };
        for m in &b.members {
            if json {
                emit(&output::event_json(&b, m).to_string())?;
            } else {
                emit(&output::event_text(&b, m))?;
            }
            seen += 1;
            if args.count.is_some_and(|n| seen >= n) {
                return Ok(());
            }
        }
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    let json = cli.json;
    if let Command::Monitor(a) = &cli.cmd {
        if a.count == Some(0) {
            return Ok(());
        }
    }
    let mut c = Client::connect()?;
    match cli.cmd {
        Command::Bond(cmd) => bond_cmd(&mut c, cmd, json),
        Command::Policy(PolicyCmd::Set { name, policy }) => {
            c.request(msg::bond_set(&name, policy)?).map(drop)
        }
        Command::Member(cmd) => member_cmd(&mut c, cmd),
        Command::Ecn(cmd) => ecn_cmd(&mut c, cmd),
        Command::Pfc(cmd) => pfc_cmd(&mut c, cmd),
        Command::Monitor(a) => monitor(&mut c, &a, json),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // Reader went away (e.g. `mrbondctl monitor | head -1`): not an error.
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            if json {
                eprintln!("{}", output::error_json(&e));
            } else {
                eprintln!("mrbondctl: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("mrbondctl").chain(args.iter().copied()))
    }

    #[test]
    fn bond_add_parses_members_and_enums() {
        let cli = parse(&[
            "-j",
            "bond",
            "add",
            "mrbond0",
            "--mode",
            "active-backup",
            "--policy",
            "lqf",
            "--member",
            "rxe0:100",
            "--member",
            "rxe1",
            "mlx5_0:7",
        ])
        .expect("parses");
        assert!(cli.json);
        let Command::Bond(BondCmd::Add {
            name,
            mode,
            policy,
            members,
            lacp_source,
        }) = cli.cmd
        else {
            panic!("wrong command");
        };
        assert_eq!(name, "mrbond0");
        assert_eq!(mode, Some(Mode::ActiveBackup));
        assert_eq!(policy, Some(Policy::Lqf));
        assert_eq!(lacp_source, None);
        let devs: Vec<_> = members
            .iter()
            .map(|m| (m.ibdev.as_str(), m.weight))
            .collect();
        assert_eq!(
            devs,
            [("rxe0", Some(100)), ("rxe1", None), ("mlx5_0", Some(7))]
        );
    }

    #[test]
    fn usage_errors() {
        let usage = |args: &[&str]| parse(args).map(|_| ()).map_err(|e| e.exit_code());
        assert_eq!(usage(&["bond", "add", "mrbond0"]), Err(2)); // no member
        assert_eq!(
            usage(&["bond", "add", "b", "--member", "r", "--policy", "wfq"]),
            Err(2)
        );
        assert_eq!(usage(&["bond", "add", "b", "--member", "r:x"]), Err(2));
        assert_eq!(usage(&["member", "set", "b", "rxe0"]), Err(2)); // nothing to set
        assert_eq!(
            usage(&["member", "set", "b", "rxe0", "--admin", "off"]),
            Err(2)
        );
        assert_eq!(usage(&["policy", "set", "b"]), Err(2));
        assert_eq!(usage(&["monitor", "--timeout", "-1"]), Err(2));
        assert_eq!(
            usage(&["member", "set", "b", "rxe0", "--admin", "drain"]),
            Ok(())
        );
        assert_eq!(
            usage(&["monitor", "-j", "--count", "3", "--timeout", "0.5"]),
            Ok(())
        );
        assert_eq!(usage(&["bond", "show"]), Ok(()));
        assert_eq!(usage(&["ecn", "set", "b"]), Err(2));
        assert_eq!(
            usage(&["ecn", "set", "b", "enable", "on", "rp-rpg-gd", "11"]),
            Ok(())
        );
        assert_eq!(
            usage(&["pfc", "set", "b", "member", "rxe0", "override", "none"]),
            Ok(())
        );
    }
}
