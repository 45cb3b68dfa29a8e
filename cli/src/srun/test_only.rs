//! `srun --test-only`: asks the controller when and where the job would start (the will-run
//! test sbatch's `--test-only` makes) and prints it, as Slurm's srun does; nothing is
//! allocated and nothing runs.

use std::io::Write;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{SubmitJobReply, SubmitJobRequest};

use crate::jobspec;
use crate::rpc_error::{Asker, status_text};
use crate::timefmt::Zone;

/// Runs the test for `req`; returns srun's exit code.
pub async fn run(ctld: &mut CtldClient, mut req: SubmitJobRequest, err: &mut dyn Write) -> i32 {
    req.test_only = true;
    match ctld.submit(req).await {
        Ok(reply) => {
            let _ = writeln!(err, "srun: {}", line(&reply.into_inner()));
            0
        }
        Err(status) => {
            let text = status_text(&status, Asker::Jobs);
            jobspec::print_error(err, "srun", &format!("allocation failure: {text}"));
            1
        }
    }
}

/// `Job N to start at T using C processors on nodes L in partition P`, for a job that is not
/// heterogeneous (sbatch's line too).
pub fn line(reply: &SubmitJobReply) -> String {
    let when = crate::timefmt::timestamp_or(reply.test_start, Zone::Local, "Unknown");
    format!(
        "Job {} to start at {when} using {} processors on nodes {} in partition {}",
        reply.job_id, reply.test_cpus, reply.test_nodes, reply.test_partition
    )
}
