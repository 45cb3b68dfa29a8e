//! `sluice-stepd`: the supervisor of one batch script, started by the node daemon (see
//! `sluice_noded::supervise`). Not meant to be run by hand.

use std::process::ExitCode;

use sluice_noded::supervise::{self, PROGRAM, Plan};

fn main() -> ExitCode {
    let run = Plan::parse(std::env::args_os().skip(1)).and_then(|plan| supervise::supervise(&plan));
    match run {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PROGRAM}: error: {e}");
            ExitCode::FAILURE
        }
    }
}
