//! Sending the job and printing the result: `Submitted batch job N`, `--parsable`'s `N[;cluster]`,
//! `--test-only`'s expected start, or Slurm's submission error.

use std::io::Write;
use std::time::Duration;

use sluice_wire::proto::SubmitJobReply;
use tonic::Status;

use super::{SbatchError, Submission};
use crate::jobspec;
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};

/// How many times sbatch retries while the controller is temporarily unable to take jobs
/// (Slurm's `MAX_RETRIES`); it sleeps 1, 2, 3... seconds in between.
pub const MAX_RETRIES: u64 = 15;

/// Submits, retrying while the controller is busy; prints the outcome; returns the exit code.
pub async fn submit(
    conf: &SlurmConf,
    s: &Submission,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let fail = |e: SbatchError, err: &mut dyn Write| {
        e.print(err);
        1
    };
    let target = match jobspec::clusters::pick(conf, &s.request).await {
        Ok(t) => t,
        Err(e) => return fail(e.into(), err),
    };
    let connected = match &target {
        Some(m) => crate::multicluster::connect(conf, m).await,
        None => conf.connect_ctld().await,
    };
    let mut client = match connected {
        Ok(c) => c,
        Err(CliError::Connect { .. }) => {
            return fail(failure(s, CONNECT_FAILURE.to_string()), err);
        }
        Err(e) => return fail(SbatchError::Conf(e), err),
    };
    let mut retries = 0;
    loop {
        match client.submit(s.request.clone()).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                report(s, &reply, out, err);
                if s.wait {
                    return super::wait::until_done(&mut client, reply.job_id, err).await;
                }
                return 0;
            }
            Err(status) if is_busy(&status) && retries < MAX_RETRIES => {
                jobspec::print_error(
                    err,
                    "sbatch",
                    "Slurm temporarily unable to accept job, sleeping and retrying.",
                );
                retries += 1;
                tokio::time::sleep(Duration::from_secs(retries)).await;
            }
            Err(status) => {
                crate::rpc_error::print_note(err, "sbatch", &status);
                return fail(failure(s, status_text(&status, Asker::Jobs)), err);
            }
        }
    }
}

fn failure(s: &Submission, text: String) -> SbatchError {
    if s.request.test_only {
        SbatchError::TestOnly(text)
    } else {
        SbatchError::Submit(text)
    }
}

/// The controller asks to try again later (`EAGAIN`).
fn is_busy(status: &Status) -> bool {
    status
        .message()
        .contains("Resource temporarily unavailable")
}

/// Prints the accepted submission as Slurm does.
pub fn report(s: &Submission, reply: &SubmitJobReply, out: &mut dyn Write, err: &mut dyn Write) {
    let cluster = (s.clusters_given && !reply.cluster.is_empty()).then_some(&reply.cluster);
    if s.request.test_only {
        let _ = writeln!(err, "sbatch: {}", test_only_line(s, reply));
    } else if s.parsable {
        let _ = match cluster {
            Some(c) => writeln!(out, "{};{c}", reply.job_id),
            None => writeln!(out, "{}", reply.job_id),
        };
    } else if !s.quiet {
        let _ = match cluster {
            Some(c) => writeln!(out, "Submitted batch job {} on cluster {c}", reply.job_id),
            None => writeln!(out, "Submitted batch job {}", reply.job_id),
        };
    }
    let _ = out.flush();
}

/// `--test-only`'s answer (see [`crate::srun::test_only::line`]).
fn test_only_line(s: &Submission, reply: &SubmitJobReply) -> String {
    crate::srun::test_only::line(reply, !s.request.het_components.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_wire::proto::SubmitJobRequest;

    fn sub(parsable: bool, quiet: bool, clusters: bool, test_only: bool) -> Submission {
        Submission {
            request: SubmitJobRequest {
                test_only,
                ..Default::default()
            },
            parsable,
            quiet,
            clusters_given: clusters,
            wait: false,
            notes: Vec::new(),
            job: Default::default(),
        }
    }

    fn printed(s: &Submission, reply: &SubmitJobReply) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        report(s, reply, &mut out, &mut err);
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn outputs_follow_slurm() {
        let reply = SubmitJobReply {
            job_id: 42,
            cluster: "c1".into(),
            ..Default::default()
        };
        assert_eq!(
            printed(&sub(false, false, false, false), &reply).0,
            "Submitted batch job 42\n"
        );
        assert_eq!(
            printed(&sub(false, false, true, false), &reply).0,
            "Submitted batch job 42 on cluster c1\n"
        );
        assert_eq!(printed(&sub(true, false, false, false), &reply).0, "42\n");
        assert_eq!(printed(&sub(true, false, true, false), &reply).0, "42;c1\n");
        assert_eq!(printed(&sub(false, true, false, false), &reply).0, "");
    }

    #[test]
    fn test_only_reports_on_stderr() {
        let reply = SubmitJobReply {
            job_id: 7,
            test_start: 0,
            test_nodes: "n[1-2]".into(),
            test_cpus: 4,
            test_partition: "debug".into(),
            ..Default::default()
        };
        let (out, err) = printed(&sub(false, false, false, true), &reply);
        assert_eq!(out, "");
        assert!(err.starts_with("sbatch: Job 7 to start at "), "{err}");
        assert!(
            err.ends_with(" using 4 processors on nodes n[1-2] in partition debug\n"),
            "{err}"
        );
    }

    #[test]
    fn a_heterogeneous_test_only_names_no_partition() {
        let mut s = sub(false, false, false, true);
        s.request.het_components = vec![SubmitJobRequest::default()];
        let reply = SubmitJobReply {
            job_id: 7,
            test_start: 0,
            test_nodes: "n[1-3]".into(),
            test_cpus: 6,
            test_partition: "debug".into(),
            ..Default::default()
        };
        let (out, err) = printed(&s, &reply);
        assert_eq!(out, "");
        assert!(err.starts_with("sbatch: Job 7 to start at "), "{err}");
        assert!(err.ends_with(" using 6 processors on n[1-3]\n"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }

    #[test]
    fn a_controller_out_of_resources_is_busy() {
        assert!(is_busy(&Status::unavailable(
            "Resource temporarily unavailable"
        )));
        assert!(!is_busy(&Status::unavailable("tcp connect error")));
    }
}
