// SPDX-License-Identifier: GPL-2.0
//! mrbondctl's command line (clap), in iproute2's grammar:
//! `mrbondctl [OPTIONS] OBJECT [COMMAND [ARGS]]`, `show` the default
//! command of every object, and settings as keyword pairs (`policy lqf`,
//! `member mlx5_0 weight 200`), which [`crate::keywords`] and
//! [`crate::knob_args`] parse. `main.rs` dispatches it; `mrbondctl-docs`
//! renders it as man pages and completions.

use std::time::Duration;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "mrbondctl",
    version,
    about = "Configure and monitor rdma_mrbond bonded RDMA devices (mrbondN)",
    after_help = "Exit status: 0 ok, 1 kernel or runtime error, 2 usage error."
)]
pub struct Cli {
    #[command(flatten)]
    pub opts: Opts,

    #[command(subcommand)]
    pub object: Object,
}

/// The options iproute2's tools share.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct Opts {
    /// JSON output (every show, bond add, monitor; errors on stderr)
    #[arg(short, long, global = true)]
    pub json: bool,
    /// Pretty-print JSON (implies -j)
    #[arg(short, long, global = true)]
    pub pretty: bool,
    /// Text: add counters
    #[arg(short, long, global = true)]
    pub stats: bool,
    /// Text: add details (knob settings and every member's knob status)
    #[arg(short, long, global = true)]
    pub details: bool,
}

impl Opts {
    /// JSON output, plain or pretty.
    pub fn json(&self) -> bool {
        self.json || self.pretty
    }
}

#[derive(Debug, Subcommand)]
pub enum Object {
    /// Create, change, delete and show bonds [default: show]
    Bond {
        #[command(subcommand)]
        cmd: Option<BondCmd>,
    },
    /// Add, change, remove and show bond members [default: show]
    Member {
        #[command(subcommand)]
        cmd: Option<MemberCmd>,
    },
    /// ECN marking, default traffic class and DCQCN parameters [default: show]
    Ecn {
        #[command(subcommand)]
        cmd: Option<EcnCmd>,
    },
    /// Per-priority flow control of a bond's members [default: show]
    Pfc {
        #[command(subcommand)]
        cmd: Option<PfcCmd>,
    },
    /// Print bond, member and knob changes as they happen (group "events")
    Monitor(MonitorArgs),
    /// Make bonds what their files in /etc/rdma_mrbond/ declare: create,
    /// change, or leave alone (a second run changes nothing)
    Apply(ApplyArgs),
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Print what would be done, do nothing
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Where the <bond>.conf files are
    #[arg(long, value_name = "DIR", default_value = "/etc/rdma_mrbond")]
    pub config_dir: std::path::PathBuf,
    /// Print the units of the bonds whose files name this member RDMA
    /// device, and do nothing else (the udev rule's helper)
    #[arg(long, value_name = "IBDEV", conflicts_with_all = ["dry_run", "bonds"])]
    pub units_for: Option<String>,
    /// Bonds to apply [every file in the directory]
    pub bonds: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum BondCmd {
    /// Show one bond, or all, with their members (BOND_GET)
    #[command(visible_alias = "list")]
    Show {
        /// Bond name [all bonds if omitted]
        dev: Option<String>,
    },
    /// Create a bond over an explicit member list (BOND_NEW)
    #[command(after_help = "ARGS: [ mode { rail | active-backup } ] \
                            [ policy { wrr | lqf | hash | rr | pinned } ] \
                            [ lacp-source IFNAME ] member IBDEV [ weight N ] \
                            [ member IBDEV [ weight N ] ]...\n\
                            Left out, mode and policy take the kernel's defaults.")]
    Add {
        /// Name of the new bond device (e.g. mrbond0)
        dev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 1.., required = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Change a bond's placement policy (BOND_SET)
    #[command(after_help = "ARGS: policy { wrr | lqf | hash | rr | pinned }")]
    Set {
        /// Bond name
        dev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 1.., required = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Destroy a bond (BOND_DEL)
    #[command(visible_alias = "delete")]
    Del {
        /// Bond name
        dev: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemberCmd {
    /// Show the members of one bond, or of all (BOND_GET)
    #[command(visible_alias = "list")]
    Show {
        /// Bond name [all bonds if omitted]
        dev: Option<String>,
        /// Member RDMA device [all members if omitted]
        ibdev: Option<String>,
    },
    /// Add a member to a bond (MEMBER_ADD)
    #[command(after_help = "ARGS: [ weight N ]   (wrr weight, 1..1000)")]
    Add {
        /// Bond name
        dev: String,
        /// Member RDMA device
        ibdev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 0.., allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Change a member's weight, admin state or capacity (MEMBER_SET)
    #[command(after_help = "ARGS: [ weight N ] [ admin { up | drain | down } ] \
                            [ capacity-mbps N ]\n\
                            capacity-mbps: what wrr measures the member's utilisation \
                            against; 0 takes its link speed.")]
    Set {
        /// Bond name
        dev: String,
        /// Member RDMA device
        ibdev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 1.., required = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove a member from a bond (MEMBER_DEL)
    #[command(visible_alias = "delete")]
    Del {
        /// Bond name
        dev: String,
        /// Member RDMA device
        ibdev: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum EcnCmd {
    /// Show ECN settings and every member's status; -s adds the ECN/CNP
    /// counters (BOND_GET)
    #[command(visible_alias = "list")]
    Show {
        /// Bond name [all bonds if omitted]
        dev: Option<String>,
    },
    /// Change ECN settings (ECN_SET)
    #[command(
        after_help = "ARGS: [ enable { on | off } ] [ tclass N ] [ np-enable N ] \
                            [ rp-rpg-gd N ] ... (DCQCN parameters by their mlx5 names, \
                            with - or _; numbers decimal or 0x-hex; ranges are the \
                            kernel's to check)"
    )]
    Set {
        /// Bond name
        dev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 1.., required = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PfcCmd {
    /// Show the PFC bitmap and every member's target and status; -s adds
    /// PAUSE and per-priority PFC counters (BOND_GET)
    #[command(visible_alias = "list")]
    Show {
        /// Bond name [all bonds if omitted]
        dev: Option<String>,
    },
    /// Change the PFC bitmap or a member's override and apply it, member
    /// by member (PFC_SET)
    #[command(after_help = "ARGS: [ bitmap N | prio-pfc PRIO:{ on | off } ... ] \
                            [ member IBDEV override { N | none } ]\n\
                            prio-pfc changes the priorities it names and keeps the \
                            others, as dcb pfc does.")]
    Set {
        /// Bond name
        dev: String,
        /// Keyword pairs (see below)
        #[arg(value_name = "ARGS", num_args = 1.., required = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// Exit after N events (exit status 1 if --timeout passes first)
    #[arg(short, long, value_name = "N")]
    pub count: Option<u64>,
    /// Exit after SECS seconds (fractions allowed)
    #[arg(short, long, value_name = "SECS", value_parser = parse_secs)]
    pub timeout: Option<Duration>,
}

pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s.parse().map_err(|_| format!("invalid number \"{s}\""))?;
    Duration::try_from_secs_f64(secs).map_err(|_| format!("invalid duration \"{s}\""))
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
    fn show_is_every_object_default() {
        for object in ["bond", "member", "ecn", "pfc"] {
            let cli = parse(&[object]).expect("parses");
            let defaulted = match cli.object {
                Object::Bond { cmd } => cmd.is_none(),
                Object::Member { cmd } => cmd.is_none(),
                Object::Ecn { cmd } => cmd.is_none(),
                Object::Pfc { cmd } => cmd.is_none(),
                Object::Monitor(_) | Object::Apply(_) => false,
            };
            assert!(defaulted, "{object}");
        }
    }

    #[test]
    fn options_anywhere() {
        let cli = parse(&["bond", "show", "mrbond0", "-p", "-s", "-d"]).expect("parses");
        assert!(cli.opts.json() && cli.opts.stats && cli.opts.details && !cli.opts.json);
    }

    #[test]
    fn bond_add_takes_keyword_pairs() {
        let cli = parse(&[
            "-j", "bond", "add", "mrbond0", "mode", "rail", "member", "mlx5_0", "weight", "200",
        ])
        .expect("parses");
        let Object::Bond {
            cmd: Some(BondCmd::Add { dev, args }),
        } = cli.object
        else {
            panic!("wrong command");
        };
        assert_eq!(dev, "mrbond0");
        assert_eq!(args, ["mode", "rail", "member", "mlx5_0", "weight", "200"]);
    }

    #[test]
    fn usage_errors() {
        let usage = |args: &[&str]| parse(args).map(|_| ()).map_err(|e| e.exit_code());
        assert_eq!(usage(&["bond", "add", "mrbond0"]), Err(2));
        assert_eq!(usage(&["bond", "set", "b"]), Err(2));
        assert_eq!(usage(&["member", "set", "b", "rxe0"]), Err(2));
        assert_eq!(usage(&["member", "add", "b"]), Err(2));
        assert_eq!(usage(&["monitor", "--timeout", "-1"]), Err(2));
        assert_eq!(usage(&["ecn", "set", "b"]), Err(2));
        assert_eq!(usage(&["policy", "set", "b", "rr"]), Err(2));
        assert_eq!(usage(&["member", "add", "b", "rxe0"]), Ok(()));
        assert_eq!(
            usage(&["monitor", "-j", "--count", "3", "--timeout", "0.5"]),
            Ok(())
        );
        assert_eq!(usage(&["pfc", "show"]), Ok(()));
        assert_eq!(
            usage(&["pfc", "set", "b", "prio-pfc", "3:on", "4:off"]),
            Ok(())
        );
    }
}
