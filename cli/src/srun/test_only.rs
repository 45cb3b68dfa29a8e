//! `srun --test-only`: asks the controller when and where the job would start (the will-run
//! test sbatch's `--test-only` makes) and prints it, as Slurm's srun does; nothing is
//! allocated and nothing runs.

use std::io::Write;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{SubmitJobReply, SubmitJobRequest};

use crate::rpc_error::{Asker, status_text};
use crate::timefmt::Zone;

/// Runs the test for `req`; returns srun's exit code. Each component of `srun A : B` is
/// tested on its own and gets a line of its own, as Slurm's srun does (it asks once per
/// component; sbatch asks for the heterogeneous job as a whole). A refusal is reported as
/// Slurm's `slurm_perror` words it, without srun's prefix, and ends the test.
pub async fn run(ctld: &mut CtldClient, mut req: SubmitJobRequest, err: &mut dyn Write) -> i32 {
    let later = std::mem::take(&mut req.het_components);
    for mut one in std::iter::once(req).chain(later) {
        one.test_only = true;
        match ctld.submit(one).await {
            Ok(reply) => {
                let _ = writeln!(err, "srun: {}", line(&reply.into_inner(), false));
            }
            Err(status) => {
                crate::rpc_error::print_note(err, "srun", &status);
                let _ = writeln!(
                    err,
                    "allocation failure: {}",
                    status_text(&status, Asker::Jobs)
                );
                return 1;
            }
        }
    }
    0
}

/// The test's answer as Slurm 22.05 words it (sbatch's line too): `Job N to start at T using
/// C processors on nodes L in partition P`; a heterogeneous job's (`het`) names no partition
/// and says `on <nodes>` (Slurm's `slurm_het_job_will_run`): the first component's id, the
/// latest start of the components, their processors summed and all their nodes. No
/// foreseeable start reads `Unknown` (Slurm's `slurm_make_time_str`).
pub fn line(reply: &SubmitJobReply, het: bool) -> String {
    let when = crate::timefmt::timestamp_or(reply.test_start, Zone::Local, "Unknown");
    if het {
        return format!(
            "Job {} to start at {when} using {} processors on {}",
            reply.job_id, reply.test_cpus, reply.test_nodes
        );
    }
    format!(
        "Job {} to start at {when} using {} processors on nodes {} in partition {}",
        reply.job_id, reply.test_cpus, reply.test_nodes, reply.test_partition
    )
}
