//! Signals to one part of a running job rather than the whole job: one step
//! (`scancel 12.3`, `scancel -s USR1 12.3`) or the batch shell alone (`scancel -b`). The job
//! itself is not ended: a step's `srun` reports its end, and a batch shell's end is the job's.

use super::completion::SIGKILL;
use super::jobs::JobRef;
use super::lifecycle::each;
use super::outbox::{NodeCommand, Outbox};
use super::{Caller, Core};
use crate::error::CtldError;
use sluice_vocab::JobState;

/// Which part of a job a signal is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobPart {
    /// A step, by its id.
    Step(u32),
    /// The batch script and what it started (but no step).
    Batch,
}

/// Sends `signal` (`None`: SIGKILL, which is how a step is cancelled) to `part` of the jobs
/// `job` names, on the nodes that part runs on.
pub fn on_signal_part(
    core: &mut Core,
    out: &mut impl Outbox,
    caller: Caller,
    job: JobRef,
    part: JobPart,
    signal: Option<i32>,
) -> Result<(), CtldError> {
    let ids = core.jobs.resolve(job)?;
    let signal = signal.unwrap_or(SIGKILL);
    each(core, caller, &ids, |core, id| {
        let job = &core.jobs.map[&id];
        match (job.state, job.completing) {
            (_, true) => return Err(CtldError::AlreadyDone),
            (s, _) if s.is_finished() => return Err(CtldError::AlreadyDone),
            (JobState::Pending, _) => return Err(CtldError::JobPending),
            _ => {}
        }
        let nodes = match part {
            // Steps take their nodes from the start of the job's (see CreateStep).
            JobPart::Step(step) if step >= job.next_step => return Err(CtldError::InvalidJobId),
            JobPart::Step(_) => job.nodes.clone(),
            JobPart::Batch if !job.runs_batch_script() => return Err(CtldError::InvalidJobId),
            JobPart::Batch => job.nodes.first().copied().into_iter().collect(),
        };
        out.node(NodeCommand::SignalPart {
            job: id,
            nodes,
            part,
            signal,
        });
        Ok(())
    })
}
