// SPDX-License-Identifier: GPL-2.0
//! Renders mrbondctl's command line (`mrbondctl::cli`) into DIR as man
//! pages (`mrbondctl.8`, and `mrbondctl-bond.8` and so on for every
//! subcommand, which the first one lists) and the completions
//! `mrbondctl.bash` (bash) and `_mrbondctl` (zsh), so that they follow
//! every change of the parser.
//! `make -C tools/mrbondctl install` installs them.

use std::fs::File;
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::shells::{Bash, Zsh};
use mrbondctl::cli::Cli;

/// The page of `cmd` and of each of its subcommands, named as the page of
/// their parent lists them (`mrbondctl-bond`).
fn man_pages(cmd: &clap::Command, dir: &Path) -> std::io::Result<()> {
    // clap's own `help` subcommands need no page: `--help` is on each.
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("{}-{}", cmd.get_name(), sub.get_name());
        man_pages(&sub.clone().name(name), dir)?;
    }
    let mut page = File::create(dir.join(format!("{}.8", cmd.get_name())))?;
    clap_mangen::Man::new(cmd.clone())
        .section("8")
        .manual("rdma_mrbond")
        .render(&mut page)
}

fn render(dir: &Path) -> std::io::Result<()> {
    let mut cmd = Cli::command();
    cmd.build();
    man_pages(&cmd, dir)?;
    let mut bash = File::create(dir.join("mrbondctl.bash"))?;
    clap_complete::generate(Bash, &mut cmd, "mrbondctl", &mut bash);
    let mut zsh = File::create(dir.join("_mrbondctl"))?;
    clap_complete::generate(Zsh, &mut cmd, "mrbondctl", &mut zsh);
    Ok(())
}

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: mrbondctl-docs DIR");
        return ExitCode::from(2);
    };
    match render(Path::new(&dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mrbondctl-docs: {e}");
            ExitCode::FAILURE
        }
    }
}
