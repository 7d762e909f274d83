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
use mrbondctl::cli::{BondCmd, Cli, EcnCmd, MemberCmd, MonitorArgs, Object, Opts, PfcCmd};
use mrbondctl::error::Error;
use mrbondctl::msg::{self, Bond, MemberSpec};
use mrbondctl::nl::{Client, Notification};
use mrbondctl::{keywords, knob_args, knob_output, knob_show, output, sys};

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

/// BOND_GET of one bond (`name`) or a dump of all.
fn get_bonds(c: &mut Client, name: Option<&str>) -> Result<Vec<Bond>, Error> {
    let req = msg::bond_get(name)?;
    let replies = match name {
        Some(_) => c.request(req)?,
        None => c.dump(req)?,
    };
    if c.dump_interrupted {
        eprintln!("mrbondctl: dump was interrupted and may be inconsistent");
    }
    parse_replies(&replies)
}

/// Prints a JSON value, pretty with `-p`.
fn emit_json(v: &serde_json::Value, opts: Opts) -> Result<(), Error> {
    let text = if opts.pretty {
        serde_json::to_string_pretty(v).map_err(|e| Error::Local(e.to_string()))?
    } else {
        v.to_string()
    };
    emit(&text)
}

/// Prints every bond's text, a blank line between bonds.
fn emit_texts(texts: Vec<String>) -> Result<(), Error> {
    let mut out = io::stdout().lock();
    write!(out, "{}", texts.join("\n"))?;
    out.flush()?;
    Ok(())
}

/// `show` of an object: `json` renders one bond, `text` one bond's text.
fn show(
    c: &mut Client,
    name: Option<&str>,
    opts: Opts,
    json: impl Fn(&Bond) -> serde_json::Value,
    text: impl Fn(&Bond, Opts) -> String,
) -> Result<(), Error> {
    let bonds = get_bonds(c, name)?;
    if opts.json() {
        return emit_json(
            &serde_json::Value::Array(bonds.iter().map(&json).collect()),
            opts,
        );
    }
    emit_texts(bonds.iter().map(|b| text(b, opts)).collect())
}

fn member_show(
    c: &mut Client,
    name: Option<&str>,
    ibdev: Option<&str>,
    opts: Opts,
) -> Result<(), Error> {
    let bonds = get_bonds(c, name)?;
    if let Some(dev) = ibdev {
        if !bonds
            .iter()
            .any(|b| b.members.iter().any(|m| m.ibdev == dev))
        {
            return Err(Error::Local(format!(
                "{dev} is not a member of {}",
                name.unwrap_or("any bond")
            )));
        }
    }
    if opts.json() {
        return emit_json(&output::members_json(&bonds, ibdev, &ifname), opts);
    }
    let texts = bonds
        .iter()
        .filter(|b| ibdev.is_none_or(|d| b.members.iter().any(|m| m.ibdev == d)))
        .map(|b| {
            let members = b
                .members
                .iter()
                .filter(|m| ibdev.is_none_or(|d| d == m.ibdev));
            format!("{}:\n{}", b.name, output::members_text(members, &ifname))
        })
        .collect();
    emit_texts(texts)
}

fn bond_cmd(c: &mut Client, cmd: Option<BondCmd>, opts: Opts) -> Result<(), Error> {
    match cmd.unwrap_or(BondCmd::Show { dev: None }) {
        BondCmd::Show { dev } => show(
            c,
            dev.as_deref(),
            opts,
            |b| output::bond_json(b, &ifname),
            |b, o| output::bond_text(b, &ifname, o),
        ),
        BondCmd::Add { dev, args } => {
            let a = keywords::parse_bond_add(&args).unwrap_or_else(|e| usage_error(&e));
            let lacp = match a.lacp_source {
                Some(ifn) => Some(sys::if_nametoindex(&ifn).ok_or(Error::NoSuchDevice(ifn))?),
                None => None,
            };
            let replies = c.request(msg::bond_new(&dev, a.mode, a.policy, lacp, &a.members)?)?;
            if opts.json() {
                let created = match parse_replies(&replies)?.into_iter().next() {
                    Some(b) if !b.name.is_empty() => b,
                    _ => Bond {
                        name: dev,
                        ..Bond::default()
                    },
                };
                emit_json(&output::created_json(&created), opts)?;
            }
            Ok(())
        }
        BondCmd::Set { dev, args } => {
            let policy = keywords::parse_bond_set(&args).unwrap_or_else(|e| usage_error(&e));
            c.request(msg::bond_set(&dev, policy)?).map(drop)
        }
        BondCmd::Del { dev } => c.request(msg::bond_del(&dev)?).map(drop),
    }
}

fn member_cmd(c: &mut Client, cmd: Option<MemberCmd>, opts: Opts) -> Result<(), Error> {
    let usage = |r: Result<MemberSpec, String>| r.unwrap_or_else(|e| usage_error(&e));
    let (op, name, spec) = match cmd.unwrap_or(MemberCmd::Show {
        dev: None,
        ibdev: None,
    }) {
        MemberCmd::Show { dev, ibdev } => {
            return member_show(c, dev.as_deref(), ibdev.as_deref(), opts)
        }
        MemberCmd::Add { dev, ibdev, args } => (
            Cmd::MemberAdd,
            dev,
            usage(keywords::parse_member_add(&ibdev, &args)),
        ),
        MemberCmd::Set { dev, ibdev, args } => (
            Cmd::MemberSet,
            dev,
            usage(keywords::parse_member_set(&ibdev, &args)),
        ),
        MemberCmd::Del { dev, ibdev } => (Cmd::MemberDel, dev, MemberSpec::new(&ibdev)),
    };
    c.request(msg::member_op(op, &name, &spec)?).map(drop)
}

/// A usage error in the keyword arguments: clap's format, exit status 2.
fn usage_error(msg: &str) -> ! {
    command_usage_error(&[], msg)
}

/// A usage error of subcommand `path` (`["bond", "add"]`), with its usage.
fn command_usage_error(path: &[&str], msg: &str) -> ! {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    for name in path {
        match cmd.find_subcommand(name) {
            Some(s) => cmd = s.clone(),
            None => break,
        }
    }
    cmd.error(clap::error::ErrorKind::InvalidValue, msg).exit()
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

fn ecn_cmd(c: &mut Client, cmd: Option<EcnCmd>, opts: Opts) -> Result<(), Error> {
    let (name, settings) = match cmd.unwrap_or(EcnCmd::Show { dev: None }) {
        EcnCmd::Show { dev } => {
            return show(
                c,
                dev.as_deref(),
                opts,
                knob_show::ecn_json,
                knob_show::ecn_text,
            )
        }
        EcnCmd::Set { dev, args } => (dev, args),
    };
    let values = knob_args::parse_ecn(&settings).unwrap_or_else(|e| usage_error(&e));
    c.request(msg::ecn_set(&name, &values)?)?;
    let mask = values.iter().fold(0u32, |m, (id, _)| m | (1 << id));
    warn_not_applied(c, &name, mask)
}

fn pfc_cmd(c: &mut Client, cmd: Option<PfcCmd>, opts: Opts) -> Result<(), Error> {
    let (name, settings) = match cmd.unwrap_or(PfcCmd::Show { dev: None }) {
        PfcCmd::Show { dev } => {
            return show(
                c,
                dev.as_deref(),
                opts,
                knob_show::pfc_json,
                knob_show::pfc_text,
            )
        }
        PfcCmd::Set { dev, args } => (dev, args),
    };
    let args = knob_args::parse_pfc(&settings).unwrap_or_else(|e| usage_error(&e));
    // prio-pfc changes the priorities it names in the bond's bitmap.
    let current = if args.prio.is_empty() {
        None
    } else {
        get_bonds(c, Some(&name))?
            .first()
            .and_then(|b| b.pfc_bitmap)
    };
    let bitmap = args.bitmap_from(current);
    let member = args.member.as_ref().map(|(d, o)| (d.as_str(), *o));
    let result = c.request(msg::pfc_set(&name, bitmap, member)?);
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

fn monitor(c: &mut Client, args: &MonitorArgs, opts: Opts) -> Result<(), Error> {
    let json = opts.json();
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
        let cmd = *g.cmd();
        if cmd != Cmd::MemberChangeNtf && cmd != Cmd::BondChangeNtf {
            continue;
        }
        let b = match msg::parse_bond(&g) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("mrbondctl: skipping notification: {e}");
                continue;
            }
        };
        if cmd == Cmd::BondChangeNtf {
            if json {
                emit(&output::bond_change_json(&b).to_string())?;
            } else {
                emit(&output::bond_change_text(&b))?;
            }
            seen += 1;
            continue;
        }
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

/// Usage errors in keyword arguments exit (status 2) before anything talks
/// to the kernel, as clap's own do.
fn check_usage(object: &Object) {
    let (path, checked) = match object {
        Object::Bond {
            cmd: Some(BondCmd::Add { args, .. }),
        } => (["bond", "add"], keywords::parse_bond_add(args).map(drop)),
        Object::Bond {
            cmd: Some(BondCmd::Set { args, .. }),
        } => (["bond", "set"], keywords::parse_bond_set(args).map(drop)),
        Object::Member {
            cmd: Some(MemberCmd::Add { ibdev, args, .. }),
        } => (
            ["member", "add"],
            keywords::parse_member_add(ibdev, args).map(drop),
        ),
        Object::Member {
            cmd: Some(MemberCmd::Set { ibdev, args, .. }),
        } => (
            ["member", "set"],
            keywords::parse_member_set(ibdev, args).map(drop),
        ),
        Object::Ecn {
            cmd: Some(EcnCmd::Set { args, .. }),
        } => (["ecn", "set"], knob_args::parse_ecn(args).map(drop)),
        Object::Pfc {
            cmd: Some(PfcCmd::Set { args, .. }),
        } => (["pfc", "set"], knob_args::parse_pfc(args).map(drop)),
        _ => return,
    };
    if let Err(e) = checked {
        command_usage_error(&path, &e);
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    let opts = cli.opts;
    check_usage(&cli.object);
    if let Object::Monitor(a) = &cli.object {
        if a.count == Some(0) {
            return Ok(());
        }
    }
    // udev's helper: runs before the module may be loaded, so no netlink.
    if let Object::Apply(a) = &cli.object {
        if let Some(ibdev) = &a.units_for {
            return mrbondctl::apply::print_units_for(a, ibdev);
        }
    }
    let mut c = Client::connect()?;
    match cli.object {
        Object::Bond { cmd } => bond_cmd(&mut c, cmd, opts),
        Object::Member { cmd } => member_cmd(&mut c, cmd, opts),
        Object::Ecn { cmd } => ecn_cmd(&mut c, cmd, opts),
        Object::Pfc { cmd } => pfc_cmd(&mut c, cmd, opts),
        Object::Monitor(a) => monitor(&mut c, &a, opts),
        Object::Apply(a) => mrbondctl::apply::run(&mut c, &a),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.opts.json();
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
