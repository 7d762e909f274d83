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
use std::time::Instant;

use clap::Parser;

use mrbondctl::attrs::{self, Cmd, MCGRP_EVENTS};
use mrbondctl::cli::{BondCmd, Cli, Command, EcnCmd, MemberCmd, MonitorArgs, PfcCmd, PolicyCmd};
use mrbondctl::error::Error;
use mrbondctl::msg::{self, Bond, MemberSpec};
use mrbondctl::nl::{Client, Notification};
use mrbondctl::{knob_args, knob_output, output, sys};

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
