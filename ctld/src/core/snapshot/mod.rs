//! What the controller store saves of the core: one [`JobSnap`] per job and one [`NodeSnap`]
//! per node. They are plain data naming partitions and nodes by name, not by table index, since
//! a configuration change may reorder the tables; the derived state (queues, bitmaps, reverse
//! indexes, counters) is not saved but rebuilt by [`super::restore`].
//!
//! The store writes [`SNAPSHOT_FORMAT`] next to each saved record, so a later change of these
//! structs (or of their encoding, see `crate::store::codec`) can migrate older records.
//! Additive changes need no migration: new fields take `#[serde(default)]`.

use super::deps::{Dep, DepKind, DepStatus, Dependencies};
use super::ids::IdLease;
use super::jobs::{HoldKind, Job, LaunchSpec};
use super::request::{JobShare, PlaceOpts};

mod node;
mod reasons;

pub use node::{BaseSnap, NodeSnap};
pub(crate) use reasons::reason_from_str;

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
use super::steps::{OpenStepSnap, StepSnap};
use super::{Core, SimTime};
use serde::{Deserialize, Serialize};
use sluice_vocab::{ClusterId, FedJobId};
use std::sync::Arc;

/// The version of the saved job and node records: 1 was JSON, 2 is MessagePack with named
/// fields (the store's `codec` reads both).
pub const SNAPSHOT_FORMAT: u32 = 2;

/// Everything the store holds for the core, as loaded at start.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The cluster the state belongs to (`None` for a new state directory).
    pub cluster: Option<String>,
    /// Every saved job, by ascending id.
    pub jobs: Vec<JobSnap>,
    /// Every saved node state.
    pub nodes: Vec<NodeSnap>,
    /// The job ids left in the saved id source (`None` when none was saved yet).
    pub job_ids: Option<Vec<(u32, u32)>>,
    /// Each partition's state (`UP`, `DOWN`, `DRAIN`, `INACTIVE`) by name, once an
    /// administrator changed one (empty before: the configuration's states hold).
    pub partitions: Vec<(String, String)>,
}

/// A partition state as saved.
pub fn part_state_name(s: crate::conf::PartState) -> &'static str {
    use crate::conf::PartState;
    match s {
        PartState::Up => "UP",
        PartState::Down => "DOWN",
        PartState::Drain => "DRAIN",
        PartState::Inactive => "INACTIVE",
    }
}

/// A saved partition state back (`None` for an unknown name).
pub fn part_state_from(s: &str) -> Option<crate::conf::PartState> {
    use crate::conf::PartState;
    [
        PartState::Up,
        PartState::Down,
        PartState::Drain,
        PartState::Inactive,
    ]
    .into_iter()
    .find(|p| part_state_name(*p) == s)
}

impl Snapshot {
    /// The saved id source as a lease for a cluster with federation id `origin`, or `None`
    /// when none was saved (a new cluster: lease from the dbd, or start at `FirstJobId`).
    pub fn id_lease(&self, origin: Option<ClusterId>) -> Option<IdLease> {
        self.job_ids
            .as_deref()
            .map(|r| IdLease::from_ranges(origin, r))
    }
}

/// Who held a job, as saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldSnap {
    /// [`HoldKind::User`].
    User,
    /// [`HoldKind::Admin`].
    Admin,
}

/// One dependency, as saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepSnap {
    /// `after`, `afterany`, `afterok`, `afternotok` or `singleton`.
    pub kind: String,
    /// The job it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
    /// `after:id+minutes`, in seconds.
    #[serde(default)]
    pub delay_secs: u64,
    /// `None` while waiting, `Some(t)` once satisfied from `t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub satisfied_at: Option<u64>,
    /// It can never be met.
    #[serde(default)]
    pub failed: bool,
}

/// A job's dependencies, as saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsSnap {
    /// `?`-joined.
    pub any: bool,
    /// The dependencies.
    pub items: Vec<DepSnap>,
}

/// One job as saved; see [`Job`] for the meaning of each field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSnap {
    pub id: u32,
    /// `(array job id, task index)` of an array task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<(u32, u32)>,
    /// The array's `%` throttle (0: none), saved with each task.
    #[serde(default)]
    pub array_throttle: u32,
    /// `(heterogeneous job id, offset)` of a heterogeneous job's component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub het: Option<(u32, u32)>,
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub partition: String,
    pub min_nodes: u32,
    pub max_nodes: u32,
    pub ntasks: u32,
    pub cpus_per_task: u32,
    pub mem_per_node_mb: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    /// Minutes; `None` is UNLIMITED.
    pub time_limit_min: Option<u32>,
    /// `--oversubscribe`/`--exclusive` (absent: neither, as in saves that predate them).
    #[serde(default, skip_serializing_if = "JobShare::is_unset")]
    pub share: JobShare,
    /// `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--signal`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub place: PlaceOpts,
    /// Its `--signal` was sent in the current run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub signal_sent: bool,
    /// What its partition can never give it ([`JobReason::as_str`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_limit: Option<String>,
    /// The [`sluice_vocab::JobState`] stored value.
    pub state: u32,
    /// [`JobReason::as_str`].
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<HoldSnap>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deps: Option<DepsSnap>,
    pub requeue: bool,
    /// `-k/--no-kill`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_kill: bool,
    /// What the failure management granted its current run (absent: nothing yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoverySnap>,
    /// `PrologSlurmctld` was running for its current run: it runs again after a restart.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prolog_slurmctld: bool,
    /// `PrologFlags=Alloc`: the nodes whose prolog has not reported success for its current
    /// run; its batch launch waits for them, after a restart too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alloc_prologs: Vec<String>,
    /// CONFIGURING, its batch script was launched on its batch host already (it did not wait
    /// for every node): not launched again after a restart.
    #[serde(default, skip_serializing_if = "is_false")]
    pub launched_early: bool,
    /// CONFIGURING on cloud nodes that boot for it: its script waits for every node.
    #[serde(default, skip_serializing_if = "is_false")]
    pub cloud_boot: bool,
    pub submit_time: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<u64>,
    #[serde(default)]
    pub suspended_secs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended_at: Option<u64>,
    /// Names of the nodes of the current (or last) run.
    #[serde(default)]
    pub nodes: Vec<String>,
    #[serde(default)]
    pub exit_code: i32,
    #[serde(default)]
    pub exit_signal: i32,
    #[serde(default)]
    pub completing: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kill_at: Option<u64>,
    #[serde(default)]
    pub restarts: u32,
    #[serde(default)]
    pub next_step: u32,
    /// Who cancelled it (absent in saves older than this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requester_uid: Option<u32>,
    /// CPUs held on each of `nodes` (empty: whole nodes, as saved before CPU allocation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alloc_cpus: Vec<u32>,
    /// Consumable memory in MB held on each of `nodes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alloc_mem_mb: Vec<u64>,
    /// Cores held on each of `nodes` (`CR_Core`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alloc_cores: Vec<Vec<u16>>,
    /// Its nodes are its alone (`OverSubscribe=EXCLUSIVE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub alloc_exclusive: bool,
    /// Suspended by an administrator (its resources given back; not the timeslicer's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin_suspended: bool,
    /// CPUs its steps hold (absent in saves older than step CPU accounting: none held).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSnap>,
    /// Steps given out and not yet done, with how each started (absent in saves older than
    /// step starts kept: their ends are recorded without a start).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_steps: Vec<OpenStepSnap>,
    /// What it runs; saved once per [`JobSnap::launch_owner`], not in the job record.
    #[serde(skip)]
    pub launch: Arc<LaunchSpec>,
    /// Its federation state, for a federated job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fed: Option<super::federation::FedJob>,
}

/// The saved counts of a job's failure management (`nonstop::JobRecovery` without what its
/// event subscribers last heard, which a restart forgets with the subscribers).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecoverySnap {
    pub replaced: u32,
    pub dropped: u32,
    pub delay_granted: bool,
    pub extended_min: u32,
}

impl RecoverySnap {
    /// What `core`'s failure management holds for job `id`, if anything was granted.
    pub fn of(core: &Core, id: FedJobId) -> Option<Self> {
        let r = core.nonstop.as_ref()?.jobs.get(&id)?;
        let snap = Self {
            replaced: r.replaced,
            dropped: r.dropped,
            delay_granted: r.delay_granted,
            extended_min: r.extended_min,
        };
        (snap != Self::default()).then_some(snap)
    }

    /// Gives job `id` these counts again (after a restart).
    pub fn restore(&self, core: &mut Core, id: FedJobId) {
        if let Some(state) = core.nonstop.as_mut() {
            let r = state.jobs.entry(id).or_default();
            r.replaced = self.replaced;
            r.dropped = self.dropped;
            r.delay_granted = self.delay_granted;
            r.extended_min = self.extended_min;
        }
    }
}

impl JobSnap {
    /// The saved form of `job`, a job of `core`.
    pub fn of(core: &Core, job: &Job) -> Self {
        let nodes = core.nodes();
        let alloc = core.job_alloc(job.id);
        Self {
            id: job.id.get(),
            array: job.array.map(|a| (a.job.get(), a.task)),
            het: job.het.map(|h| (h.leader.get(), h.offset)),
            array_throttle: job
                .array
                .and_then(|a| core.jobs.arrays.get(&a.job))
                .map_or(0, |m| m.throttle),
            name: job.name.clone(),
            uid: job.uid,
            gid: job.gid,
            partition: core
                .partitions()
                .get(job.partition.get())
                .map(|p| p.name.clone())
                .unwrap_or_default(),
            min_nodes: job.req.min_nodes,
            max_nodes: job.req.max_nodes,
            ntasks: job.req.ntasks,
            cpus_per_task: job.req.cpus_per_task,
            mem_per_node_mb: job.req.mem_per_node_mb,
            constraint: job.req.constraint.clone(),
            time_limit_min: match job.req.time_limit {
                crate::conf::TimeLimit::Minutes(m) => Some(m),
                crate::conf::TimeLimit::Unlimited => None,
            },
            share: job.req.share,
            place: job.req.place.clone(),
            signal_sent: job.signal_sent,
            part_limit: job.part_limit.map(|r| r.as_str().to_string()),
            state: job.state.stored(),
            reason: job.reason.as_str().to_string(),
            hold: job.hold.map(|h| match h {
                HoldKind::User => HoldSnap::User,
                HoldKind::Admin => HoldSnap::Admin,
            }),
            deps: job.deps.as_deref().map(deps_snap),
            requeue: job.requeue,
            no_kill: job.no_kill,
            recovery: RecoverySnap::of(core, job.id),
            prolog_slurmctld: core
                .power
                .configuring
                .get(&job.id)
                .is_some_and(|c| c.prolog_running),
            alloc_prologs: core
                .power
                .configuring
                .get(&job.id)
                .into_iter()
                .flat_map(|c| &c.node_prologs)
                .filter_map(|i| nodes.get(i.get() as usize).map(|n| n.name.clone()))
                .collect(),
            launched_early: core
                .power
                .configuring
                .get(&job.id)
                .is_some_and(|c| c.launched),
            cloud_boot: core
                .power
                .configuring
                .get(&job.id)
                .is_some_and(|c| c.cloud_boot),
            submit_time: job.submit_time.secs(),
            start_time: job.start_time.map(SimTime::secs),
            end_time: job.end_time.map(SimTime::secs),
            suspended_secs: job.suspended_secs,
            suspended_at: job.suspended_at.map(SimTime::secs),
            nodes: job
                .nodes
                .iter()
                .filter_map(|i| nodes.get(i.get() as usize).map(|n| n.name.clone()))
                .collect(),
            exit_code: job.exit_code,
            exit_signal: job.exit_signal,
            completing: job.completing,
            kill_at: job.kill_at.map(SimTime::secs),
            restarts: job.restarts,
            next_step: job.next_step,
            requester_uid: job.requester_uid,
            alloc_cpus: alloc.map(|a| a.cpus.clone()).unwrap_or_default(),
            alloc_mem_mb: alloc.map(|a| a.mem_mb.clone()).unwrap_or_default(),
            alloc_cores: alloc.map(|a| a.cores.clone()).unwrap_or_default(),
            alloc_exclusive: alloc.is_some_and(|a| a.exclusive),
            admin_suspended: core.is_manually_suspended(job.id),
            steps: StepSnap::of_job(core, job.id),
            open_steps: OpenStepSnap::of_job(job),
            launch: job.launch.clone(),
            fed: job.fed.as_deref().cloned(),
        }
    }

    /// The job whose saved launch spec this job uses: the array's job id for an array task
    /// (whose tasks share one spec), else its own id.
    pub fn launch_owner(&self) -> u32 {
        self.array.map_or(self.id, |a| a.0)
    }
}

fn deps_snap(d: &Dependencies) -> DepsSnap {
    DepsSnap {
        any: d.any,
        items: d
            .items
            .iter()
            .map(|dep| DepSnap {
                kind: dep_kind_name(dep.kind).to_string(),
                target: dep.target.map(|t| t.get()),
                delay_secs: dep.delay_secs,
                satisfied_at: match dep.status {
                    DepStatus::Satisfied(at) => Some(at.secs()),
                    _ => None,
                },
                failed: dep.status == DepStatus::Failed,
            })
            .collect(),
    }
}

/// The saved name of a dependency type.
pub(crate) fn dep_kind_name(kind: DepKind) -> &'static str {
    match kind {
        DepKind::After => "after",
        DepKind::AfterAny => "afterany",
        DepKind::AfterOk => "afterok",
        DepKind::AfterNotOk => "afternotok",
        DepKind::AfterCorr => "aftercorr",
        DepKind::Singleton => "singleton",
    }
}

/// A saved dependency back in the core's form; `None` for an unknown type or target.
pub(crate) fn dep_from_snap(d: &DepSnap) -> Option<Dep> {
    let kind = [
        DepKind::After,
        DepKind::AfterAny,
        DepKind::AfterOk,
        DepKind::AfterNotOk,
        DepKind::AfterCorr,
        DepKind::Singleton,
    ]
    .into_iter()
    .find(|k| dep_kind_name(*k) == d.kind)?;
    let target = match d.target {
        Some(t) => Some(sluice_vocab::FedJobId::from_raw(t).ok()?),
        None => None,
    };
    let status = match (d.failed, d.satisfied_at) {
        (true, _) => DepStatus::Failed,
        (false, Some(at)) => DepStatus::Satisfied(SimTime::from_secs(at)),
        (false, None) => DepStatus::Waiting,
    };
    Some(Dep {
        kind,
        target,
        delay_secs: d.delay_secs,
        status,
    })
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_saved_id_source_continues_where_it_stopped() {
        use crate::core::JobIdSource;
        let snap = Snapshot {
            job_ids: Some(vec![(41, 2), (100, 0), (500, 1)]),
            ..Snapshot::default()
        };
        let mut lease = snap.id_lease(None).unwrap();
        let ids: Vec<u32> = std::iter::from_fn(|| lease.next_id())
            .map(|i| i.get())
            .collect();
        assert_eq!(ids, [41, 42, 500]);
        assert!(Snapshot::default().id_lease(None).is_none());
        let first = sluice_vocab::LocalJobId::new(sluice_vocab::ids::MAX_LOCAL_ID - 1).unwrap();
        let mut counter = IdLease::counter(None, first);
        assert_eq!(counter.ranges(), [(first.get(), 2)]);
        assert_eq!(counter.next_id().map(|i| i.get()), Some(first.get()));
    }

    #[test]
    fn dependencies_round_trip() {
        let d = Dependencies {
            any: true,
            items: vec![
                Dep {
                    kind: DepKind::AfterOk,
                    target: sluice_vocab::FedJobId::from_raw(7).ok(),
                    delay_secs: 0,
                    status: DepStatus::Satisfied(SimTime::from_secs(99)),
                },
                Dep {
                    kind: DepKind::Singleton,
                    target: None,
                    delay_secs: 60,
                    status: DepStatus::Failed,
                },
            ],
        };
        let snap = deps_snap(&d);
        let back: Vec<Dep> = snap.items.iter().filter_map(dep_from_snap).collect();
        assert_eq!(back, d.items);
    }
}
