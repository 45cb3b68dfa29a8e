//! `sprio`: the priority factors of pending jobs under `priority/multifactor`. The weights and
//! the priority type come from the controller's configuration (`GetConfig`, what `scontrol
//! show config` prints), the jobs and their normalized factors from `ListJobs`.
//!
//! * [`args`]: options; [`render`]: formats, header, weights line and job lines.

pub mod args;
pub mod render;

use std::io::Write;

use sluice_vocab::JobState;
use sluice_wire::proto::{GetConfigRequest, JobInfo, ListJobsRequest};

use crate::cmdutil;
use crate::multicluster::{self, Selection};
use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::SlurmConf;
use args::{HELP, Invocation, SprioOpts, USAGE};
use render::{PrioRow, Weights};

/// Runs the `sprio` binary.
pub fn main() -> i32 {
    let code = run(
        &cmdutil::args(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    let _ = std::io::stdout().flush();
    code
}

fn fail(err: &mut dyn Write, text: &str) -> i32 {
    let _ = writeln!(err, "{text}");
    1
}

/// Runs sprio with `args` against the cluster named by `SLURM_CONF`.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let opts = match args::parse(args) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, HELP),
        Ok(Invocation::Usage) => return print(out, USAGE),
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(text) => return fail(err, &text),
    };
    let mut uids = Vec::new();
    for u in &opts.users {
        match cmdutil::uid_of(u) {
            Some(uid) => uids.push(uid),
            None => return fail(err, &format!("sprio: error: Invalid user: {u}")),
        }
    }
    let conf = match SlurmConf::from_env() {
        Ok(c) => c,
        Err(e) => return fail(err, &format!("sprio: error: {e}")),
    };
    let Some(rt) = cmdutil::runtime("sprio", err) else {
        return 1;
    };
    rt.block_on(show(&conf, &opts, uids, out, err))
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

/// What sprio learns from the controller.
struct Fetched {
    kind: String,
    weights: Weights,
    jobs: Vec<JobInfo>,
}

async fn fetch(conf: &SlurmConf, opts: &SprioOpts, uids: Vec<u32>) -> Result<Fetched, String> {
    let mut ctld = match &opts.clusters {
        None => conf.connect_ctld().await.map_err(|e| e.to_string())?,
        // As Slurm's sprio, -M talks to the first cluster named.
        Some(names) => {
            let members = multicluster::resolve(conf, &Selection::parse(names))
                .await
                .map_err(|e| e.lines().join("\n"))?;
            let m = members.first().ok_or("no cluster")?;
            multicluster::connect(conf, m)
                .await
                .map_err(|e| e.to_string())?
        }
    };
    let entries = ctld
        .get_config(GetConfigRequest {})
        .await
        .map_err(|s| status_text(&s, Asker::Views))?
        .into_inner()
        .entries;
    let get = |key: &str| {
        entries
            .iter()
            .find(|e| e.name == key)
            .map(|e| e.value.clone())
            .unwrap_or_default()
    };
    let num = |key: &str| get(key).parse::<u32>().unwrap_or(0);
    let weights = Weights {
        age: num("PriorityWeightAge"),
        fairshare: num("PriorityWeightFairShare"),
        job_size: num("PriorityWeightJobSize"),
        partition: num("PriorityWeightPartition"),
        qos: num("PriorityWeightQOS"),
        tres: Weights::parse_tres(&get("PriorityWeightTRES")),
        tres_text: get("PriorityWeightTRES"),
    };
    let kind = get("PriorityType");
    if kind == "priority/basic" {
        return Ok(Fetched {
            kind,
            weights,
            jobs: Vec::new(),
        });
    }
    let jobs = ctld
        .list_jobs(ListJobsRequest {
            job_ids: opts.jobs.clone(),
            uids,
            states: vec![JobState::Pending.stored()],
            partitions: opts.partitions.clone(),
            ..Default::default()
        })
        .await
        .map_err(|s| status_text(&s, Asker::Views))?
        .into_inner()
        .jobs;
    Ok(Fetched {
        kind,
        weights,
        jobs,
    })
}

async fn show(
    conf: &SlurmConf,
    opts: &SprioOpts,
    uids: Vec<u32>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let fetched = match fetch(conf, opts, uids).await {
        Ok(f) => f,
        Err(text) => {
            return fail(
                err,
                &format!("Couldn't get priority factors from controller: {text}"),
            );
        }
    };
    if fetched.kind == "priority/basic" {
        let _ = write!(
            err,
            "You are not running a supported priority plugin\n({}).\nOnly 'priority/multifactor' is supported.\n",
            fetched.kind
        );
        return 1;
    }
    let w = fetched.weights;
    let format = opts.format.clone().unwrap_or_else(|| {
        render::default_format(&w, opts.long, opts.norm, !opts.users.is_empty())
    });
    let layout = match render::parse(&format) {
        Ok(l) => l,
        Err(text) => return fail(err, &text),
    };
    let mut jobs = fetched.jobs;
    jobs.sort_by_key(|j| j.job_id);
    let rows: Vec<PrioRow> = jobs.iter().filter_map(row).collect();
    if rows.is_empty() && (opts.jobs_given || !opts.users.is_empty()) {
        let _ = writeln!(out, "Unable to find jobs matching user/id(s) specified");
        return 0;
    }
    for l in render::lines(&layout, &rows, &w, opts.no_header, opts.weights) {
        let _ = writeln!(out, "{l}");
    }
    0
}

/// A pending job's line, when the controller gave its factors.
fn row(j: &JobInfo) -> Option<PrioRow> {
    let f = j.factors.as_ref()?;
    let job_id = match j.array_task_id {
        Some(t) => format!("{}_{t}", j.array_job_id),
        None => j.job_id.to_string(),
    };
    Some(PrioRow {
        job_id,
        partition: j.partition.clone(),
        user: j.user.clone(),
        account: f.account.clone(),
        cluster: j.cluster.clone(),
        priority: j.priority,
        age: f.age,
        fairshare: f.fairshare,
        job_size: f.job_size,
        part: f.partition,
        qos: f.qos,
        tres: f.tres.iter().map(|t| (t.name.clone(), t.factor)).collect(),
        nice: f.nice,
    })
}

#[cfg(test)]
mod render_tests;
