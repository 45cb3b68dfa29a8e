//! `sbatch -W/--wait`: after the submission, wait for the job (every task of an array) to end
//! and exit with its exit code, as Slurm's sbatch does: a task ended by a signal counts as 1,
//! an array exits with its tasks' highest code.

use std::io::Write;
use std::time::Duration;

use sluice_vocab::JobState;
use sluice_wire::client::CtldClient;
use sluice_wire::proto::{JobInfo, ListJobsRequest};

use crate::jobspec;
use crate::rpc_error::{Asker, status_text};

/// The first pause between two looks at the job; each pause is a second longer, up to
/// [`MAX_POLL`] (Slurm's sbatch also backs off while it waits).
const FIRST_POLL: Duration = Duration::from_secs(1);
/// The longest pause between two looks.
const MAX_POLL: Duration = Duration::from_secs(5);

/// Waits until every task of `job_id` has ended; returns sbatch's exit code.
pub async fn until_done(client: &mut CtldClient, job_id: u32, err: &mut dyn Write) -> i32 {
    let mut pause = FIRST_POLL;
    loop {
        let request = ListJobsRequest {
            job_ids: vec![job_id],
            include_finished: true,
            ..Default::default()
        };
        match client.list_jobs(request).await {
            Ok(reply) => {
                if let Some(code) = exit_code(&reply.into_inner().jobs) {
                    return code;
                }
            }
            Err(status) => {
                let text = status_text(&status, Asker::Views);
                jobspec::print_error(err, "sbatch", &format!("slurm_load_jobs: {text}"));
                return 1;
            }
        }
        tokio::time::sleep(pause).await;
        pause = (pause + Duration::from_secs(1)).min(MAX_POLL);
    }
}

/// sbatch's exit code once every job of `jobs` has ended, `None` while one has not. A job
/// the controller no longer knows (purged after `MinJobAge`) ends the wait with 1.
pub fn exit_code(jobs: &[JobInfo]) -> Option<i32> {
    if jobs.is_empty() {
        return Some(1);
    }
    let mut code = 0;
    for job in jobs {
        let finished = JobState::from_stored(job.state).is_some_and(JobState::is_finished);
        if !finished {
            return None;
        }
        let this = if job.signal != 0 { 1 } else { job.exit_code };
        code = code.max(this);
    }
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: JobState, exit_code: i32, signal: i32) -> JobInfo {
        JobInfo {
            state: state.stored(),
            exit_code,
            signal,
            ..Default::default()
        }
    }

    #[test]
    fn the_highest_code_once_all_have_ended() {
        assert_eq!(exit_code(&[job(JobState::Completed, 0, 0)]), Some(0));
        assert_eq!(exit_code(&[job(JobState::Failed, 3, 0)]), Some(3));
        assert_eq!(exit_code(&[job(JobState::Cancelled, 0, 9)]), Some(1));
        assert_eq!(
            exit_code(&[
                job(JobState::Completed, 0, 0),
                job(JobState::Failed, 7, 0),
                job(JobState::Failed, 2, 0)
            ]),
            Some(7)
        );
        assert_eq!(
            exit_code(&[job(JobState::Completed, 0, 0), job(JobState::Running, 0, 0)]),
            None
        );
        assert_eq!(exit_code(&[job(JobState::Pending, 0, 0)]), None);
        assert_eq!(exit_code(&[]), Some(1));
    }
}
