//! The multifactor priority's factors, each between 0 and 1, and their weighted sum.
//!
//! - Age: time since the job became eligible (its submission, or `--begin` when later) over
//!   `PriorityMaxAge`, at most 1. A job held or waiting on a dependency accrues no age (its
//!   factor is 0 while it may not start) unless `PriorityFlags=ACCRUE_ALWAYS`.
//! - Fair share: the classic factor of the job's association (`sluice_vocab::fairshare`),
//!   0 when the accounting daemon has not told us one.
//! - Job size: the larger of the job's part of the cluster's nodes and of its CPUs; with
//!   `PriorityFavorSmall=YES` one minus that, counted so that a job of one node and one CPU
//!   has factor 1.
//! - Partition: the partition's `PriorityJobFactor` over the largest of all partitions.
//! - QOS: the job's QOS priority over the largest ([`super::qos`]).
//! - TRES: per TRES, the job's request over its partition's total ([`super::tres`]).

use super::super::jobs::Job;
use super::super::{Core, SimTime, deps};
use sluice_vocab::cluster_conf::PriorityConf;

/// The normalized factors of one job, and its nice.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Factors {
    /// Age factor.
    pub age: f64,
    /// Fair-share factor.
    pub fairshare: f64,
    /// Job size factor.
    pub job_size: f64,
    /// Partition factor.
    pub partition: f64,
    /// QOS factor.
    pub qos: f64,
    /// TRES factors (cpu, mem, node; see [`super::tres`]).
    pub tres: super::tres::TresFactors,
    /// `--nice`, subtracted from the sum.
    pub nice: i32,
}

/// The factors each multiplied by its weight (what `sprio` shows without `-n`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weighted {
    /// `PriorityWeightAge` × age.
    pub age: f64,
    /// `PriorityWeightFairshare` × fair share.
    pub fairshare: f64,
    /// `PriorityWeightJobSize` × job size.
    pub job_size: f64,
    /// `PriorityWeightPartition` × partition.
    pub partition: f64,
    /// `PriorityWeightQOS` × QOS.
    pub qos: f64,
    /// Each TRES factor × its `PriorityWeightTRES` weight (cpu, mem, node).
    pub tres: super::tres::TresFactors,
}

impl Factors {
    /// Each factor times its weight.
    pub fn weighted(&self, w: &PriorityConf) -> Weighted {
        Weighted {
            age: self.age * f64::from(w.weight_age),
            fairshare: self.fairshare * f64::from(w.weight_fairshare),
            job_size: self.job_size * f64::from(w.weight_job_size),
            partition: self.partition * f64::from(w.weight_partition),
            qos: self.qos * f64::from(w.weight_qos),
            tres: {
                let mut t = [0.0; 3];
                for &(kind, weight) in &w.weight_tres {
                    let i = super::tres::slot(kind);
                    t[i] = self.tres[i] * f64::from(weight);
                }
                t
            },
        }
    }

    /// The job's priority: the weighted sum less its nice, at least 1.
    pub fn priority(&self, w: &PriorityConf) -> u32 {
        let x = self.weighted(w);
        let sum =
            x.age + x.fairshare + x.job_size + x.partition + x.qos + x.tres.iter().sum::<f64>();
        let p = sum.round() - f64::from(self.nice);
        // In range by the clamp; `as` saturates anyway.
        p.clamp(1.0, f64::from(u32::MAX - 1)) as u32
    }
}

/// The factors of `job` at `now`.
pub fn of(core: &Core, job: &Job, now: SimTime) -> Factors {
    let conf = &core.conf.priority;
    Factors {
        age: age(core, job, now, conf),
        fairshare: core
            .prio
            .fairshare
            .get(&(job.launch.account.clone(), job.launch.user.clone()))
            .copied()
            .unwrap_or(0.0),
        job_size: job_size(core, job, conf.favor_small),
        partition: partition(core, job),
        qos: super::qos::factor(core, job),
        tres: super::tres::factors(core, job),
        nice: job.req.place.nice,
    }
}

fn age(core: &Core, job: &Job, now: SimTime, conf: &PriorityConf) -> f64 {
    if conf.max_age_secs == 0 {
        return 0.0;
    }
    let from = if conf.accrue_always {
        job.submit_time
    } else {
        if job.hold.is_some() || deps::blocking_reason(&core.jobs, job, now).is_some() {
            return 0.0;
        }
        let begin = job
            .req
            .place
            .begin
            .map_or(job.submit_time, SimTime::from_secs);
        job.submit_time.max(begin)
    };
    let secs = now.since(from).min(conf.max_age_secs);
    secs as f64 / conf.max_age_secs as f64
}

fn job_size(core: &Core, job: &Job, favor_small: bool) -> f64 {
    let nodes = core.nodes.nodes.len().max(1) as f64;
    let cpus: f64 = core
        .nodes
        .nodes
        .iter()
        .map(|n| f64::from(n.cpus))
        .sum::<f64>()
        .max(1.0);
    let asked_nodes = f64::from(job.req.min_nodes.max(1));
    let asked_cpus = f64::from(job.req.ntasks.max(1)) * f64::from(job.req.cpus_per_task.max(1));
    if favor_small {
        let beyond = ((asked_nodes - 1.0) / nodes).max((asked_cpus - 1.0) / cpus);
        (1.0 - beyond).clamp(0.0, 1.0)
    } else {
        (asked_nodes / nodes).max(asked_cpus / cpus).min(1.0)
    }
}

fn partition(core: &Core, job: &Job) -> f64 {
    let parts = &core.conf.partitions;
    let max = parts
        .iter()
        .map(|p| p.priority_job_factor)
        .max()
        .unwrap_or(0);
    match parts.get(job.partition.get()) {
        Some(p) if max > 0 => f64::from(p.priority_job_factor) / f64::from(max),
        _ => 0.0,
    }
}
