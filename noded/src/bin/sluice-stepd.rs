//! `sluice-stepd`: the supervisor of one batch script or srun step task, started by the node
//! daemon (see `sluice_noded::supervise` and `supervise_task`). Not meant to be run by hand.

use std::process::ExitCode;

use sluice_noded::supervise::{self, PROGRAM, Plan};
use sluice_noded::supervise_task;

fn main() -> ExitCode {
    let run = Plan::parse(std::env::args_os().skip(1)).and_then(|plan| {
        if plan.task {
            supervise_task::supervise_task(&plan)
        } else {
            supervise::supervise(&plan)
        }
    });
    match run {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PROGRAM}: error: {e}");
            ExitCode::FAILURE
        }
    }
}
