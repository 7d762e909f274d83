// SPDX-License-Identifier: GPL-2.0
//! mrbond-exporter: the state and counters of every rdma_mrbond bond, for
//! Prometheus. Each scrape reads the bonds over the "rdma_mrbond" generic
//! netlink family (BOND_GET dump) and the members' traffic counters from
//! sysfs, and writes them in the text exposition format.

mod expo;
mod host;
mod http;
mod metrics;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mrbondctl::error::Error;
use mrbondctl::msg::{self, Bond};
use mrbondctl::nl::Client;

use crate::host::SysHost;

#[derive(Debug, Parser)]
#[command(
    name = "mrbond-exporter",
    version,
    about = "Prometheus exporter for rdma_mrbond bonds"
)]
struct Cli {
    /// Address to serve /metrics on
    #[arg(long, default_value = "0.0.0.0:9879")]
    listen: String,
    /// Print one scrape on stdout and exit
    #[arg(long, conflicts_with = "list")]
    once: bool,
    /// Print the name of every metric family the exporter can write
    #[arg(long)]
    list: bool,
}

/// Every bond, or `None` with the reason when the module does not answer.
fn read_bonds() -> Result<Vec<Bond>, Error> {
    let mut c = Client::connect()?;
    let replies = c.dump(msg::bond_get(None)?)?;
    replies.iter().map(msg::parse_bond).collect()
}

fn scrape(host: &SysHost) -> String {
    let bonds = match read_bonds() {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("mrbond-exporter: {e}");
            None
        }
    };
    expo::encode(&metrics::collect(bonds.as_deref(), host))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.list {
        for (name, _, _) in metrics::FAMILIES {
            println!("{name}");
        }
        return ExitCode::SUCCESS;
    }
    let host = SysHost {
        root: PathBuf::from("/"),
    };
    if cli.once {
        print!("{}", scrape(&host));
        return ExitCode::SUCCESS;
    }
    let listener = match TcpListener::bind(&cli.listen) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mrbond-exporter: cannot listen on {}: {e}", cli.listen);
            return ExitCode::FAILURE;
        }
    };
    eprintln!("mrbond-exporter: serving http://{}/metrics", cli.listen);
    match http::serve(listener, &mut || scrape(&host)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mrbond-exporter: {e}");
            ExitCode::FAILURE
        }
    }
}
