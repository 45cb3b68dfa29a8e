//! Applying records, in memory, to the rows they touch. A batch loads every row its records
//! can touch (all runs and step keys of the jobs named, the open events of the nodes named, the
//! default accounts of the users named), applies the records in seq order here, and then writes
//! only what changed. This keeps the rules pure and makes a 1,000-record batch a handful of
//! statements instead of several per record.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sluice_vocab::states::JobState;

use crate::store::models::i64_of;
use crate::store::models::job_resizes::ResizeRow;
use crate::store::models::jobs::JobRunRow;
use crate::store::models::node_events::NodeEventRow;
use crate::store::models::steps::{StepKey, StepRow};
use crate::store::models::to_i32;
use crate::store::types::records::{
    EventEffect, JobEnded, JobResized, JobStarted, JobSubmitted, JobSuspended, NodeEvent,
    RecordKind, Step,
};

/// A row with where it lives: `stored` rows are updated, the others inserted; only `dirty` rows
/// are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tracked<T> {
    pub row: T,
    pub stored: bool,
    pub dirty: bool,
}

impl<T> Tracked<T> {
    fn stored(row: T) -> Self {
        Self {
            row,
            stored: true,
            dirty: false,
        }
    }

    fn new(row: T) -> Self {
        Self {
            row,
            stored: false,
            dirty: true,
        }
    }
}

fn stored_state(state: JobState) -> i64 {
    i64::from(state.stored())
}

/// The rows one batch of records touches, of one cluster.
#[derive(Debug)]
pub(super) struct Batch {
    cluster: String,
    /// The QOS of the jobs submitted in this batch (`job_qos`), by job id.
    pub qos: Vec<(i64, String)>,
    /// Runs by (job_id, run).
    pub runs: BTreeMap<(i64, i32), Tracked<JobRunRow>>,
    /// Steps by key: every stored step of the jobs named by step records, and the new ones.
    pub steps: BTreeMap<StepKey, Tracked<StepRow>>,
    /// Open events of the nodes named (stored ones have their id; new ones id 0).
    pub events: Vec<Tracked<NodeEventRow>>,
    /// New earlier allocations of runs (resizes), to insert.
    pub resizes: Vec<ResizeRow>,
    /// The wckeys submit records set, by job: (first submission, wckey; "" = none).
    pub wckeys: BTreeMap<i64, (i64, String)>,
    /// The heterogeneous components submit records name, by job: (first submission,
    /// heterogeneous job id, offset).
    pub hets: BTreeMap<i64, (i64, i64, i32)>,
    /// Keys (job_id, run, time_end) of the earlier allocations stored or added.
    known_resizes: BTreeSet<(i64, i32, i64)>,
    default_accounts: HashMap<String, String>,
}

impl Batch {
    /// A batch over the loaded rows: every run and step of the jobs the records name, the
    /// open events of the nodes they name, the earlier allocations of the jobs resized, and
    /// user → default account.
    pub fn new(
        cluster: &str,
        runs: Vec<JobRunRow>,
        steps: Vec<StepRow>,
        open_events: Vec<NodeEventRow>,
        resizes: Vec<ResizeRow>,
        default_accounts: HashMap<String, String>,
    ) -> Self {
        Self {
            cluster: cluster.to_string(),
            qos: Vec::new(),
            runs: runs
                .into_iter()
                .map(|r| ((r.job_id, r.run), Tracked::stored(r)))
                .collect(),
            steps: steps
                .into_iter()
                .map(|s| (s.key(), Tracked::stored(s)))
                .collect(),
            events: open_events.into_iter().map(Tracked::stored).collect(),
            resizes: Vec::new(),
            wckeys: BTreeMap::new(),
            hets: BTreeMap::new(),
            known_resizes: resizes
                .iter()
                .map(|r| (r.job_id, r.run, r.time_end))
                .collect(),
            default_accounts,
        }
    }

    /// Applies one record.
    pub fn apply(&mut self, kind: &RecordKind) {
        match kind {
            RecordKind::JobSubmitted(r) => self.submitted(r),
            RecordKind::JobStarted(r) => self.started(r),
            RecordKind::JobEnded(r) => self.ended(r),
            RecordKind::JobSuspended(r) => self.suspended(r),
            RecordKind::JobResized(r) => self.resized(r),
            RecordKind::Step(r) => self.step(r),
            RecordKind::NodeEvent(r) => self.node_event(r),
            // Kept by the usage rollups' ingest step (`store::usage`), not by job rows.
            RecordKind::ClusterCapacity(_) => {}
        }
    }

    /// The run, created empty if no record made it yet (a start or end whose submit record the
    /// controller never sent still leaves a row), marked dirty.
    fn run_mut(&mut self, job_id: u32, run: u32) -> &mut JobRunRow {
        let key = (i64::from(job_id), to_i32(run));
        if !self.runs.contains_key(&key) {
            let row = JobRunRow::empty(&self.cluster, key.0, key.1);
            self.runs.insert(key, Tracked::new(row));
            self.refresh_latest(key.0);
        }
        let cluster = &self.cluster;
        let tracked = self
            .runs
            .entry(key)
            .or_insert_with(|| Tracked::new(JobRunRow::empty(cluster, key.0, key.1)));
        tracked.dirty = true;
        &mut tracked.row
    }

    /// Marks the newest run of `job_id` as `latest` and the others not.
    fn refresh_latest(&mut self, job_id: i64) {
        let range = (job_id, i32::MIN)..=(job_id, i32::MAX);
        let newest = self.runs.range(range.clone()).map(|(k, _)| k.1).max();
        for ((_, run), t) in self.runs.range_mut(range) {
            let latest = Some(*run) == newest;
            if t.row.latest != latest {
                t.row.latest = latest;
                t.dirty = true;
            }
        }
    }

    fn submitted(&mut self, r: &JobSubmitted) {
        let account = if r.account.is_empty() {
            self.default_accounts
                .get(&r.user)
                .cloned()
                .unwrap_or_default()
        } else {
            r.account.clone()
        };
        let job = i64::from(r.job_id);
        // A job seen before may have had a wckey to clear; a new one without any writes none.
        let known = self
            .runs
            .range((job, i32::MIN)..=(job, i32::MAX))
            .next()
            .is_some();
        if known || !r.wckey.is_empty() {
            self.wckeys.insert(job, (r.submit, r.wckey.clone()));
        }
        if r.het_job_id != 0 {
            let offset = i32::try_from(r.het_offset).unwrap_or(i32::MAX);
            self.hets
                .entry(job)
                .or_insert((r.submit, i64::from(r.het_job_id), offset));
        }
        let row = self.run_mut(r.job_id, r.run);
        row.array_job_id = i64::from(r.array_job_id);
        row.array_task_id = r.array_task_id.map_or(-1, i64::from);
        row.name.clone_from(&r.name);
        row.uid = i64::from(r.uid);
        row.gid = i64::from(r.gid);
        row.user_name.clone_from(&r.user);
        row.account = account;
        row.partition_name.clone_from(&r.partition);
        row.time_submit = r.submit;
        // 0: the record amends a known run (a new time limit or name), its eligible time stays.
        if r.eligible != 0 {
            row.time_eligible = r.eligible;
        }
        row.time_limit_min = r.time_limit_min;
        row.req_cpus = i64::from(r.req_cpus);
        row.req_mem_mb = i64_of(r.req_mem_mb);
        row.workdir.clone_from(&r.workdir);
        row.job_comment.clone_from(&r.comment);
        if !r.qos.is_empty() {
            self.qos.push((i64::from(r.job_id), r.qos.clone()));
        }
    }

    fn started(&mut self, r: &JobStarted) {
        let row = self.run_mut(r.job_id, r.run);
        row.time_start = r.start;
        if r.eligible != 0 {
            row.time_eligible = r.eligible;
        }
        if row.time_submit == 0 {
            row.time_submit = if r.eligible != 0 { r.eligible } else { r.start };
        }
        row.node_list.clone_from(&r.node_list);
        row.node_count = i64::from(r.node_count);
        row.cpus = i64::from(r.cpus);
        row.mem_mb = i64_of(r.mem_mb);
        row.state = stored_state(JobState::Running);
    }

    fn ended(&mut self, r: &JobEnded) {
        let row = self.run_mut(r.job_id, r.run);
        if row.suspend_since != 0 {
            row.suspended_secs += (r.end - row.suspend_since).max(0);
            row.suspend_since = 0;
        }
        row.time_end = r.end;
        row.state = i64::from(r.state);
        row.exit_code = r.exit_code;
        row.exit_signal = r.signal;
        row.reason.clone_from(&r.reason);
        row.requester_uid = r.requester_uid.map_or(-1, i64::from);
        if r.state == JobState::Requeued.stored() {
            let ended = row.clone();
            self.requeued(&ended);
        }
    }

    /// A requeued run ends; the job waits again as the next run, submitted when requeued (as
    /// Slurm resets the submit time). A submit record for that run, if the controller sends
    /// one, refines it.
    fn requeued(&mut self, ended: &JobRunRow) {
        let Some(next) = ended.run.checked_add(1) else {
            return;
        };
        if self.runs.contains_key(&(ended.job_id, next)) {
            return;
        }
        let mut row = JobRunRow::empty(&self.cluster, ended.job_id, next);
        row.array_job_id = ended.array_job_id;
        row.array_task_id = ended.array_task_id;
        row.name.clone_from(&ended.name);
        row.uid = ended.uid;
        row.gid = ended.gid;
        row.user_name.clone_from(&ended.user_name);
        row.account.clone_from(&ended.account);
        row.partition_name.clone_from(&ended.partition_name);
        row.time_submit = ended.time_end;
        row.time_eligible = ended.time_end;
        row.time_limit_min = ended.time_limit_min;
        row.req_cpus = ended.req_cpus;
        row.req_mem_mb = ended.req_mem_mb;
        row.workdir.clone_from(&ended.workdir);
        row.job_comment.clone_from(&ended.job_comment);
        self.runs.insert((ended.job_id, next), Tracked::new(row));
        self.refresh_latest(ended.job_id);
    }

    fn suspended(&mut self, r: &JobSuspended) {
        let row = self.run_mut(r.job_id, r.run);
        if r.suspended {
            if row.suspend_since == 0 {
                row.suspend_since = r.at;
                row.state = stored_state(JobState::Suspended);
            }
        } else if row.suspend_since != 0 {
            row.suspended_secs += (r.at - row.suspend_since).max(0);
            row.suspend_since = 0;
            row.state = stored_state(JobState::Running);
        }
    }

    /// The allocation of a started run changes: the one in force until `r.at` is kept as an
    /// earlier record of the run (with the run's suspended time so far), the run holds the new
    /// one. A change before the run started only sets its allocation. Two changes in one
    /// second keep the first earlier record: the allocation between them lasted no time.
    fn resized(&mut self, r: &JobResized) {
        let cluster = self.cluster.clone();
        let row = self.run_mut(r.job_id, r.run);
        let earlier = (row.time_start != 0).then(|| {
            let at = r.at.max(row.time_start);
            let open = if row.suspend_since != 0 {
                (at - row.suspend_since).max(0)
            } else {
                0
            };
            ResizeRow {
                cluster,
                job_id: row.job_id,
                run: row.run,
                time_end: at,
                node_list: row.node_list.clone(),
                node_count: row.node_count,
                cpus: row.cpus,
                mem_mb: row.mem_mb,
                suspended_secs: row.suspended_secs + open,
                time_limit_min: row.time_limit_min,
            }
        });
        row.node_list.clone_from(&r.node_list);
        row.node_count = i64::from(r.node_count);
        row.cpus = i64::from(r.cpus);
        row.mem_mb = i64_of(r.mem_mb);
        if let Some(e) = earlier
            && self.known_resizes.insert((e.job_id, e.run, e.time_end))
        {
            self.resizes.push(e);
        }
    }

    /// A step record replaces the step, except for what it does not know: an end record sent
    /// by a controller that lost the step's start (it restarted meanwhile) has no start, name or
    /// nodes, and those of the earlier record stay.
    fn step(&mut self, r: &Step) {
        let mut row = StepRow::new(&self.cluster, r);
        let key = row.key();
        let before = self.steps.get(&key);
        let stored = before.is_some_and(|t| t.stored);
        if let Some(old) = before.map(|t| &t.row) {
            if row.time_start == 0 {
                row.time_start = old.time_start;
            }
            if row.name.is_empty() {
                row.name.clone_from(&old.name);
            }
            if row.node_list.is_empty() {
                row.node_list.clone_from(&old.node_list);
                row.node_count = old.node_count;
            }
            if row.ntasks == 0 {
                row.ntasks = old.ntasks;
            }
            if row.cpus == 0 {
                row.cpus = old.cpus;
            }
            row.keep_usage_of(old);
        }
        self.steps.insert(
            key,
            Tracked {
                row,
                stored,
                dirty: true,
            },
        );
    }

    fn node_event(&mut self, r: &NodeEvent) {
        let open = |e: &Tracked<NodeEventRow>| e.row.node_name == r.node && e.row.time_end == 0;
        let close = |e: &mut Tracked<NodeEventRow>| {
            e.row.time_end = r.at.max(e.row.time_start);
            e.dirty = true;
        };
        match r.effect() {
            EventEffect::CloseAll => self.events.iter_mut().filter(|e| open(e)).for_each(close),
            EventEffect::ClosePowerDown => self
                .events
                .iter_mut()
                .filter(|e| open(e) && e.row.kind == NodeEvent::POWER_DOWN)
                .for_each(close),
            EventEffect::Open => {
                let same = self
                    .events
                    .iter_mut()
                    .find(|e| open(e) && e.row.kind == r.kind);
                if let Some(e) = same {
                    // Still down (or drained): a new reason replaces the old one.
                    e.row.reason.clone_from(&r.reason);
                    e.row.reason_uid = i64::from(r.reason_uid);
                    e.dirty = true;
                } else {
                    self.events.push(Tracked::new(NodeEventRow {
                        id: 0,
                        cluster: self.cluster.clone(),
                        node_name: r.node.clone(),
                        time_start: r.at,
                        time_end: 0,
                        kind: r.kind.clone(),
                        reason: r.reason.clone(),
                        reason_uid: i64::from(r.reason_uid),
                        cpus: i64::from(r.cpus),
                    }));
                }
            }
        }
    }
}
