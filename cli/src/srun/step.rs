//! Creating srun's step. Inside an allocation each step takes CPUs the job's other steps do
//! not hold; while they are taken the controller refuses with `Requested nodes are busy`,
//! and srun says so once, asks again with a bounded backoff, and says when the step was
//! created, as Slurm's srun does.

use std::io::Write;
use std::time::Duration;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{CreateStepReply, CreateStepRequest, JobShare};
use tokio::sync::mpsc;
use tonic::Code;

use super::Interrupt;
use super::args::SrunOpts;
use crate::rpc_error::{Asker, status_text};

/// The controller's text for a step whose CPUs other steps hold (`ESLURM_NODES_BUSY`).
const NODES_BUSY: &str = "Requested nodes are busy";

/// First wait before asking again; doubled each time up to [`MAX_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(200);
const MAX_WAIT: Duration = Duration::from_secs(2);

/// Why no step was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepFailure {
    /// The controller refused it; its text.
    Refused(String),
    /// srun was interrupted (with this signal number) while waiting for CPUs.
    Interrupted(i32),
}

/// The step request for `opts`. `in_allocation`: srun runs inside an existing job, where
/// `-s/--oversubscribe` shares CPUs with the other steps (`--overlap`) and `--exclusive`
/// (dedicated CPUs) is the default.
pub fn request(opts: &SrunOpts, job_id: u32, name: &str, in_allocation: bool) -> CreateStepRequest {
    let share_steps = in_allocation && opts.job.share == Some(JobShare::Oversubscribe);
    CreateStepRequest {
        job_id,
        min_nodes: opts.job.nodes.map(|n| n.min),
        max_nodes: opts.job.nodes.map(|n| n.max),
        ntasks: opts.job.ntasks,
        name: name.to_string(),
        cpus_per_task: opts.job.cpus_per_task,
        overlap: opts.overlap || share_steps,
        nodelist: opts.nodelist.clone(),
        ntasks_per_node: opts.job.ntasks_per_node,
        whole: opts.step.whole,
        relative: opts.step.relative,
        overcommit: opts.job.overcommit,
        het_step_id: None,
    }
}

/// The wait before the `attempt`-th retry (0-based).
pub fn backoff(attempt: u32) -> Duration {
    FIRST_WAIT
        .saturating_mul(1u32.checked_shl(attempt).unwrap_or(u32::MAX))
        .min(MAX_WAIT)
}

/// Creates the step, waiting while its CPUs are busy (with `-I`, no longer than `patience`:
/// zero refuses it at the first busy answer); prints Slurm's waiting lines unless `quiet`.
pub async fn create(
    ctld: &mut CtldClient,
    req: CreateStepRequest,
    (quiet, patience): (bool, Option<Duration>),
    err: &mut dyn Write,
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> Result<CreateStepReply, StepFailure> {
    let job_id = req.job_id;
    let mut attempt = 0;
    let give_up = patience.map(|p| tokio::time::Instant::now() + p);
    loop {
        let status = match ctld.create_step(req.clone()).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                if attempt > 0 && !quiet {
                    let _ = writeln!(
                        err,
                        "srun: Step created for StepId={job_id}.{}",
                        reply.step_id
                    );
                }
                return Ok(reply);
            }
            Err(status) => status,
        };
        let text = status_text(&status, Asker::Jobs);
        let impatient = give_up.is_some_and(|at| tokio::time::Instant::now() >= at);
        if status.code() != Code::ResourceExhausted || text != NODES_BUSY || impatient {
            return Err(StepFailure::Refused(text));
        }
        if attempt == 0 && !quiet {
            let _ = writeln!(
                err,
                "srun: Job {job_id} step creation temporarily disabled, retrying ({text})"
            );
        }
        let wait = backoff(attempt);
        let pause = match give_up {
            Some(at) => tokio::time::sleep_until(at.min(tokio::time::Instant::now() + wait)),
            None => tokio::time::sleep(wait),
        };
        tokio::pin!(pause);
        loop {
            tokio::select! {
                () = &mut pause => break,
                Some(sig) = interrupts.recv() => {
                    // Signals srun passes on to tasks have no tasks to reach yet.
                    if !sig.ends_wait() {
                        continue;
                    }
                    let signal = sig.number();
                    let _ = writeln!(err, "srun: Cancelled pending job step with signal {signal}");
                    return Err(StepFailure::Interrupted(signal));
                }
            }
        }
        attempt = attempt.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srun::args::run_opts as opts;

    #[test]
    fn backoff_doubles_up_to_a_bound() {
        let waits: Vec<u128> = (0..6).map(|i| backoff(i).as_millis()).collect();
        assert_eq!(waits, vec![200, 400, 800, 1600, 2000, 2000]);
        assert_eq!(backoff(u32::MAX), MAX_WAIT);
    }

    #[test]
    fn step_requests_carry_the_step_options() {
        let r = request(&opts("-N1-2 -n3 -c2 -w n1 true"), 7, "true", true);
        assert_eq!((r.min_nodes, r.max_nodes), (Some(1), Some(2)));
        assert_eq!((r.ntasks, r.cpus_per_task), (Some(3), Some(2)));
        assert_eq!(r.nodelist, vec!["n1"]);
        assert!(!r.overlap);
        assert!(request(&opts("--overlap true"), 7, "true", true).overlap);
        let r = request(&opts("--whole -r 1 true"), 7, "true", true);
        assert!(r.whole);
        assert_eq!(r.relative, Some(1));
        assert!(!request(&opts("--whole --exact true"), 7, "true", true).whole);
    }

    #[test]
    fn oversubscribe_shares_cpus_only_inside_an_allocation() {
        assert!(request(&opts("-s true"), 7, "true", true).overlap);
        assert!(!request(&opts("-s true"), 7, "true", false).overlap);
        assert!(!request(&opts("--exclusive true"), 7, "true", true).overlap);
    }
}
