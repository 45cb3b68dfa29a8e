//! While a node daemon of a step is away, srun watches the step's job and that node at the
//! controller: a node the controller set DOWN, or a job whose run ended (failed, requeued,
//! cancelled), ends srun's wait for the daemon at once with Slurm's message, instead of after
//! the whole wait.

use sluice_vocab::JobState;
use sluice_wire::client::CtldClient;
use sluice_wire::proto::{ListJobsRequest, ListNodesRequest};

/// What the controller says of a job's run and a node, asked by srun.
#[derive(Debug, Clone)]
pub struct JobWatch {
    ctld: CtldClient,
    job_id: u32,
    /// The run the step belongs to (its credential's requeue count).
    run: u32,
}

/// Why srun stops waiting for a node daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing says the daemon will not come back: keep waiting.
    Wait,
    /// The controller set the node DOWN (Slurm's "Node failure on NODE").
    NodeDown,
    /// The job's run is over: the job is in this state now (another run, or ended).
    RunOver(JobState),
}

impl JobWatch {
    /// Watches run `run` of job `job_id` through `ctld`.
    pub fn new(ctld: CtldClient, job_id: u32, run: u32) -> Self {
        Self { ctld, job_id, run }
    }

    /// Asks the controller about node `node` and the job; a controller that does not answer
    /// says nothing ([`Verdict::Wait`]).
    pub async fn check(&mut self, node: &str) -> Verdict {
        let nodes = self
            .ctld
            .list_nodes(ListNodesRequest {
                names: vec![node.to_string()],
            })
            .await;
        if let Ok(reply) = nodes
            && reply
                .into_inner()
                .nodes
                .iter()
                .any(|n| n.name == node && n.state == "DOWN")
        {
            return Verdict::NodeDown;
        }
        let jobs = self
            .ctld
            .list_jobs(ListJobsRequest {
                job_ids: vec![self.job_id],
                include_finished: true,
                ..Default::default()
            })
            .await;
        let Ok(reply) = jobs else {
            return Verdict::Wait;
        };
        let reply = reply.into_inner();
        let Some(job) = reply.jobs.iter().find(|j| j.job_id == self.job_id) else {
            return Verdict::Wait;
        };
        let state = JobState::from_stored(job.state).unwrap_or(JobState::Pending);
        run_verdict(state, job.restarts, self.run)
    }
}

/// Whether a job in `state` after `restarts` requeues is still in run `run`.
fn run_verdict(state: JobState, restarts: u32, run: u32) -> Verdict {
    if restarts != run || !matches!(state, JobState::Running | JobState::Suspended) {
        Verdict::RunOver(state)
    } else {
        Verdict::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_run_still_running_is_waited_for() {
        assert_eq!(run_verdict(JobState::Running, 0, 0), Verdict::Wait);
        assert_eq!(run_verdict(JobState::Suspended, 2, 2), Verdict::Wait);
        assert_eq!(
            run_verdict(JobState::Running, 1, 0),
            Verdict::RunOver(JobState::Running),
            "requeued and running again elsewhere"
        );
        assert_eq!(
            run_verdict(JobState::Pending, 1, 0),
            Verdict::RunOver(JobState::Pending)
        );
        assert_eq!(
            run_verdict(JobState::NodeFail, 0, 0),
            Verdict::RunOver(JobState::NodeFail)
        );
    }
}
