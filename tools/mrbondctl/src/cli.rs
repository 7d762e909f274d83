// SPDX-License-Identifier: GPL-2.0
//! mrbondctl's command line (clap): the parser `main.rs` dispatches, and
//! the definition `mrbondctl-docs` renders as a man page and completions.

use std::time::Duration;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::attrs::{AdminState, Mode, Policy};
use crate::msg::MemberSpec;

#[derive(Debug, Parser)]
#[command(
    name = "mrbondctl",
    version,
    about = "Configure and monitor rdma_mrbond bonded RDMA devices (mrbondN)",
    after_help = "Exit status: 0 ok, 1 kernel or runtime error, 2 usage error."
)]
pub struct Cli {
    /// JSON output (bond show, bond add, monitor; errors on stderr)
    #[arg(short, long, global = true)]
    pub json: bool,

    #[command(subcommand)]
    pub cmd: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
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
pub enum EcnCmd {
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
pub enum PfcCmd {
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
pub enum BondCmd {
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
pub enum PolicyCmd {
    /// Set the QP placement policy of a bond (BOND_SET)
    Set {
        /// Bond name
        name: String,
        /// New policy
        policy: Policy,
    },
}

#[derive(Debug, Subcommand)]
pub enum MemberCmd {
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
