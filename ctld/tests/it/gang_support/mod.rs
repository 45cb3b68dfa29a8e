//! Shared helpers of the gang scheduling scenarios: the seed's five-node cluster, a clock
//! that ticks every simulated second as the runtime does, and a `squeue`-like view.

use sluice_ctld::core::{AcctRecord, SubmitRequest};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture, T0};
use sluice_vocab::{FedJobId, JobState};
use std::collections::HashMap;

/// The seed's cluster: `n[12-16]`, 8 CPUs (2 sockets of 4 cores) each, partition `active`
/// with `OverSubscribe=FORCE`, `PreemptMode=GANG`, 30 s timeslices, plus `extra` lines;
/// job ids start at `first_id` (the seed's numbering).
pub fn seed_cluster(first_id: u32, extra: &[&str]) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .job_ids(first_id, 1000)
        .nodes(
            "n[12-16]",
            "Sockets=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=2000",
        )
        .partition(
            "active",
            "Nodes=n[12-16] Default=YES MaxTime=INFINITE OverSubscribe=FORCE",
        )
        .conf("PreemptMode=GANG")
        .conf("SchedulerTimeSlice=30")
        .conf("SchedulerType=sched/builtin")
        // No heartbeats in these scenarios: nodes never time out.
        .conf("SlurmdTimeout=0");
    for line in extra {
        b = b.conf(line);
    }
    let mut fx = b.build();
    fx.register_all();
    // The timeslicer's clock starts with the controller's first tick.
    fx.tick();
    fx
}

/// `sbatch -N<nodes> [-n<ntasks>] ./myload 300`.
pub fn myload(fx: &mut CoreFixture, nodes: u32, ntasks: Option<u32>) -> FedJobId {
    let mut req = SubmitRequest::new(1000, "myload").nodes(nodes);
    req.ntasks = ntasks;
    let id = fx.submit(req).expect("submit");
    fx.schedule();
    id
}

/// Ticks once per simulated second until `secs` after [`T0`].
pub fn run_to(fx: &mut CoreFixture, secs: u64) {
    while fx.now.since(T0) < secs {
        fx.advance(1);
        fx.tick();
    }
}

/// squeue's TIME: run time so far, suspended time excluded, as `M:SS`.
pub fn time_used(fx: &CoreFixture, id: FedJobId) -> String {
    let Some(job) = fx.core.job(id) else {
        return "gone".into();
    };
    let start = job.start_time.unwrap_or(fx.now);
    let secs = fx
        .now
        .since(start)
        .saturating_sub(fx.core.suspended_secs(id, fx.now));
    format!("{}:{:02}", secs / 60, secs % 60)
}

/// One squeue line: `id ST TIME NODELIST`, e.g. `3 R 0:13 n[12-16]`.
pub fn line(fx: &CoreFixture, id: FedJobId) -> String {
    let st = match fx.state(id) {
        JobState::Running => "R",
        JobState::Suspended => "S",
        JobState::Pending => "PD",
        _ => "?",
    };
    format!("{id} {st} {} {}", time_used(fx, id), fx.nodes_of(id))
}

/// squeue for `ids`, sorted as the seed prints them: running first, then suspended, each by
/// job id.
pub fn squeue(fx: &CoreFixture, ids: &[FedJobId]) -> Vec<String> {
    let mut ids = ids.to_vec();
    ids.sort_by_key(|&id| (fx.state(id) != JobState::Running, id));
    ids.iter().map(|&id| line(fx, id)).collect()
}

/// Seconds each job ran (not suspended), counted from the accounting records the core
/// emitted (start, suspend, resume) up to now.
pub fn run_secs_from_records(fx: &CoreFixture) -> HashMap<FedJobId, u64> {
    let mut running_since: HashMap<FedJobId, u64> = HashMap::new();
    let mut total: HashMap<FedJobId, u64> = HashMap::new();
    for rec in &fx.out.acct {
        match rec {
            AcctRecord::JobStarted { job, start, .. } => {
                running_since.insert(*job, start.secs());
            }
            AcctRecord::JobSuspended {
                job, at, suspended, ..
            } => {
                if *suspended {
                    if let Some(s) = running_since.remove(job) {
                        *total.entry(*job).or_default() += at.secs() - s;
                    }
                } else {
                    running_since.insert(*job, at.secs());
                }
            }
            _ => {}
        }
    }
    for (job, s) in running_since {
        *total.entry(job).or_default() += fx.now.secs() - s;
    }
    total
}
