//! What the controller and federation benchmarks share: job requests as `sbatch` sends them,
//! many concurrent Submit RPCs, polling a controller's job list, and editing a `slurm.conf`
//! that `sluice up` wrote before the daemons start, and timing the real `sbatch`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{JobInfo, ListJobsRequest, SubmitJobRequest};

use super::{BenchError, report};
use crate::up::plan::current_user_name;
use crate::up::process;

/// Pause before a submission refused with EAGAIN is sent again.
const RETRY: Duration = Duration::from_millis(5);

/// A batch job running `script` in `workdir`, as `sbatch` would describe it for the caller.
pub fn job(workdir: &Path, script: &str, hold: bool) -> SubmitJobRequest {
    SubmitJobRequest {
        name: "bench".to_string(),
        ntasks: Some(1),
        hold,
        script: format!("#!/bin/sh\n{script}\n"),
        workdir: workdir.display().to_string(),
        stdout: Some("/dev/null".to_string()),
        user: current_user_name(),
        gid: nix::unistd::getgid().as_raw(),
        ..Default::default()
    }
}

/// Submits `count` copies of `request` through `client` from `workers` concurrent tasks (one
/// HTTP/2 connection, many streams). Returns the job ids and the wall time until the last
/// one was accepted.
pub async fn submit_many(
    client: &CtldClient,
    request: &SubmitJobRequest,
    count: usize,
    workers: usize,
) -> Result<(Vec<u32>, Duration), BenchError> {
    let workers = workers.clamp(1, count.max(1));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..workers {
        let share = count / workers + usize::from(w < count % workers);
        let mut client = client.clone();
        let request = request.clone();
        tasks.spawn(async move {
            let mut ids = Vec::with_capacity(share);
            for _ in 0..share {
                loop {
                    match client.submit(request.clone()).await {
                        // EAGAIN (job ids being leased): retried, as sbatch does.
                        Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                            tokio::time::sleep(RETRY).await;
                        }
                        reply => {
                            ids.push(rpc("submit", reply)?.job_id);
                            break;
                        }
                    }
                }
            }
            Ok::<_, BenchError>(ids)
        });
    }
    let mut ids = Vec::with_capacity(count);
    while let Some(done) = tasks.join_next().await {
        let part = done.map_err(|e| BenchError::Command {
            command: "submit task".to_string(),
            detail: e.to_string(),
        })??;
        ids.extend(part);
    }
    Ok((ids, started.elapsed()))
}

/// The jobs `client`'s controller lists for `request`.
pub async fn list(
    client: &mut CtldClient,
    request: ListJobsRequest,
) -> Result<Vec<JobInfo>, BenchError> {
    Ok(rpc("list jobs", client.list_jobs(request).await)?.jobs)
}

/// The reply of an RPC, or a benchmark error naming `what`.
pub fn rpc<T>(what: &str, r: Result<tonic::Response<T>, tonic::Status>) -> Result<T, BenchError> {
    r.map(tonic::Response::into_inner)
        .map_err(|status| BenchError::Rpc {
            what: what.to_string(),
            status: Box::new(status),
        })
}

/// Rewrites the `slurm.conf` at `path` line by line: `edit` returns the lines to put in place
/// of each line (none to drop it); `extra` lines are appended.
pub fn edit_conf(
    path: &Path,
    edit: impl Fn(&str) -> Vec<String>,
    extra: &[String],
) -> Result<(), BenchError> {
    let io = |e: std::io::Error| BenchError::Command {
        command: format!("editing {}", path.display()),
        detail: e.to_string(),
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    let mut lines: Vec<String> = text.lines().flat_map(&edit).collect();
    lines.extend(extra.iter().cloned());
    std::fs::write(path, lines.join("\n") + "\n").map_err(io)
}

/// The `NodeName=DEFAULT` line of a conf `sluice up` wrote, with `CPUs=cpus`; other lines as
/// they are.
pub fn with_cpus(line: &str, cpus: u32) -> Vec<String> {
    if !line.starts_with("NodeName=DEFAULT") {
        return vec![line.to_string()];
    }
    let words: Vec<String> = line
        .split_whitespace()
        .map(|w| match w.starts_with("CPUs=") {
            true => format!("CPUs={cpus}"),
            false => w.to_string(),
        })
        .collect();
    vec![words.join(" ")]
}

/// The median wall time of `runs` runs of the real `sbatch --wrap true -H`.
pub fn sbatch_round_trip(conf: &Path, work: &Path, runs: usize) -> Result<Duration, BenchError> {
    let mut samples = sbatch_runs(conf, work, &["--wrap", "true", "-H"], runs)?;
    Ok(report::median(&mut samples))
}

/// The wall time of each of `runs` runs, one after the other, of the real `sbatch` with `args`
/// (process start included), against the cluster of `conf`, from `work`.
pub fn sbatch_runs(
    conf: &Path,
    work: &Path,
    args: &[&str],
    runs: usize,
) -> Result<Vec<Duration>, BenchError> {
    let sbatch = process::binary(&process::bin_dir()?, "sbatch")?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let mut cmd = std::process::Command::new(&sbatch);
        cmd.args(args)
            .current_dir(work)
            .env("SLURM_CONF", conf)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") && name != "SLURM_CONF" {
                cmd.env_remove(name);
            }
        }
        let started = Instant::now();
        let out = cmd.output().map_err(|e| BenchError::Command {
            command: "sbatch".to_string(),
            detail: e.to_string(),
        })?;
        samples.push(started.elapsed());
        if !out.status.success() {
            return Err(BenchError::Command {
                command: format!("sbatch {}", args.join(" ")),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_node_line_gets_the_cpus_and_others_stay() {
        assert_eq!(
            with_cpus("NodeName=DEFAULT CPUs=2 RealMemory=100", 64),
            ["NodeName=DEFAULT CPUs=64 RealMemory=100"]
        );
        assert_eq!(with_cpus("NodeName=n1 CPUs=2", 64), ["NodeName=n1 CPUs=2"]);
    }

    #[test]
    fn a_conf_is_edited_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("slurm.conf");
        std::fs::write(&path, "A=1\nNodeName=DEFAULT CPUs=2\nB=2\n").unwrap();
        let drop_b = |l: &str| match l.starts_with("B=") {
            true => Vec::new(),
            false => with_cpus(l, 8),
        };
        edit_conf(&path, drop_b, &["C=3".to_string()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "A=1\nNodeName=DEFAULT CPUs=8\nC=3\n");
    }

    #[test]
    fn a_job_is_described_as_sbatch_would() {
        let j = job(Path::new("/w"), "sleep 1", true);
        assert!(j.hold && j.script.starts_with("#!/bin/sh\nsleep 1"));
        assert_eq!((j.workdir.as_str(), j.ntasks), ("/w", Some(1)));
        assert!(!j.user.is_empty());
    }
}
