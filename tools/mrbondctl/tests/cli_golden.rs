// SPDX-License-Identifier: GPL-2.0
//! `cli_grammar_golden`: the `--help` of every command, compared with the
//! files under `tests/golden/`, so that a change of the grammar is a
//! reviewed change of those files. `MRBONDCTL_BLESS=1 cargo test -p
//! mrbondctl --test cli_golden` rewrites them.

use std::path::PathBuf;

use clap::CommandFactory;
use mrbondctl::cli::Cli;

/// `(file name, help text)` of `cmd` and of every subcommand below it.
fn helps(cmd: &clap::Command, name: &str, out: &mut Vec<(String, String)>) {
    out.push((
        format!("{name}.txt"),
        cmd.clone().render_long_help().to_string(),
    ));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        helps(sub, &format!("{name}-{}", sub.get_name()), out);
    }
}

#[test]
fn help_matches_golden_files() {
    let mut cmd = Cli::command();
    cmd.build();
    let mut all = Vec::new();
    helps(&cmd, "mrbondctl", &mut all);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("MRBONDCTL_BLESS").is_some();
    let mut stale = Vec::new();
    for (file, text) in &all {
        let path = dir.join(file);
        if bless {
            std::fs::write(&path, text).expect("writes a golden file");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(golden) if golden == *text => {}
            Ok(golden) => stale.push(format!(
                "{file} differs:\n--- golden\n{golden}\n+++ now\n{text}"
            )),
            Err(e) => stale.push(format!("{file}: {e}")),
        }
    }
    // No golden file of a command that is gone.
    let names: Vec<&str> = all.iter().map(|(f, _)| f.as_str()).collect();
    for entry in std::fs::read_dir(&dir).expect("reads tests/golden") {
        let file = entry.expect("a directory entry").file_name();
        let file = file.to_string_lossy();
        if !names.contains(&file.as_ref()) {
            stale.push(format!("{file}: no such command any more"));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}
