//! Job accounting: ingesting the controllers' record batches (see [`records`](crate::store::records))
//! and sacct's query over the stored runs, read page by page so a huge result never sits in
//! memory and never holds the store for long.
//!
//! Query semantics ([`JobQuery`]):
//! * empty lists match everything; `job_ids` match a run's job id or its array job id;
//! * the window: `start`/`end` of 0 leave that side open, so 0/0 is all time (sacct computes
//!   its default window, "since midnight", itself). A run matches when it could have run inside
//!   the window: it ended at or after `start` (or has not ended), and it was submitted (with
//!   `job_ids`) or became eligible (without) at or before `end`. As in Slurm, without `job_ids` a
//!   windowed query skips runs that never became eligible (eligible time 0);
//! * with `states`, each state brings its own window instead (Slurm's): PENDING = pending at
//!   some time inside it, RUNNING and SUSPENDED = running at some time inside it, any other
//!   state = ended inside it in that state; with no window at all (0/0), simply the runs in
//!   those states;
//! * `nodes` keeps the runs whose node list names one of them; `wckeys` the runs of jobs
//!   submitted under one of them (the wckey is read from `job_wckeys` for every row);
//! * without `duplicates` only each job's newest run is shown, and never REVOKED copies; with
//!   `federation` also no run whose job id the result shows again, submitted over a day later;
//! * a run whose allocation changed while it ran (failure management) reads as Slurm's records
//!   of a resized job: one RESIZING record per earlier allocation, ended at the change, then
//!   the current one, submitted, eligible and started at the last change; every record is
//!   matched on its own (the RESIZING ones with or without `duplicates`, as in Slurm), and
//!   each takes the steps that started in its time;
//! * with `fields`, the text fields the client does not read (and no condition needs) may
//!   come empty: the SQLite reader neither reads nor copies them ([`JobQuery::reads`]);
//! * rows come ordered by cluster, submit time, job id, run; each carries its steps (batch step
//!   first, then extern, then numbered steps) unless `no_steps`. How each page stays an index range is in
//!   [`query`].

use std::collections::{HashMap, HashSet};

mod fed_dups;
mod query;
mod resized;
#[cfg(test)]
mod source_tests;
mod sqlite_scan;
mod types;
mod window;

pub use types::{JobCursor, JobPage, JobQuery, TextField};

use crate::store::models::{job_het, node_events};
use crate::store::records;
use crate::store::types::records::{JobRun, NodeEventInfo, Record, Step};
use crate::store::{Apply, Store, StoreError};
use query::RunSource;

impl Store {
    /// `RecordBatch`: applies the records of `cluster`'s outbox stream `stream` above the
    /// stream's applied seq, in one transaction, and returns the new applied seq (see
    /// [`records`](crate::store::records)).
    pub fn record_batch(
        &self,
        cluster: &str,
        stream: u64,
        records: &[Record],
    ) -> Result<u64, StoreError> {
        self.change(Apply::Commit, |c| {
            records::ingest(c, cluster, stream, records)
        })
    }

    /// One page of at most `limit` runs matching `query`, after `after` (the first page when
    /// `None`). Each page is its own read, so ingest goes on between pages. On SQLite a page
    /// is read on a reader connection (see [`readers`](super::readers)), beside the store's
    /// connection, through SQLite's cached statements ([`sqlite_scan`]).
    pub fn list_jobs(
        &self,
        query: &JobQuery,
        after: Option<&JobCursor>,
        limit: usize,
    ) -> Result<JobPage, StoreError> {
        let limit = limit.max(1);
        let Some(readers) = &self.readers else {
            return self.read(|c| page(&mut query::Diesel(c), query, after, limit));
        };
        let result = readers.read(|c| page(&mut sqlite_scan::Sqlite(c), query, after, limit));
        self.note(&result, false);
        result
    }

    /// The job ids sacct's `-j` names on `clusters` (every cluster when empty): `ids`, each
    /// widened to every component when it is a heterogeneous job's id, and the components
    /// `het` (`123+1`: heterogeneous job, offset) alone. Empty when nothing was named or
    /// only components that do not exist.
    pub fn named_jobs(
        &self,
        clusters: &[String],
        ids: &[u32],
        het: &[(u32, u32)],
    ) -> Result<Vec<u32>, StoreError> {
        let leaders: Vec<i64> = ids.iter().map(|&i| i64::from(i)).collect();
        let wanted: Vec<(i64, i32)> = het
            .iter()
            .filter_map(|&(h, o)| Some((i64::from(h), i32::try_from(o).ok()?)))
            .collect();
        // `sacct -j 123` shows every component of heterogeneous job 123, `123+1` one of them:
        // one read of the components of every heterogeneous job named either way.
        let mut named: Vec<i64> = leaders.clone();
        named.extend(wanted.iter().map(|w| w.0));
        named.sort_unstable();
        named.dedup();
        // A read: on a SQLite file it runs on a reader connection, beside the writer.
        let rows = self.read(|c| Ok(job_het::components(c, clusters, &named)?))?;
        let found = named_of(rows, &leaders, &wanted);
        let mut all = ids.to_vec();
        all.extend(found.into_iter().filter_map(|j| u32::try_from(j).ok()));
        all.sort_unstable();
        all.dedup();
        Ok(all)
    }

    /// The node events of `cluster` (of `node` only, if given), oldest first.
    pub fn list_node_events(
        &self,
        cluster: &str,
        node: Option<&str>,
    ) -> Result<Vec<NodeEventInfo>, StoreError> {
        self.read(|c| {
            let rows = node_events::list(c, cluster, node)?;
            Ok(rows.into_iter().map(NodeEventInfo::from).collect())
        })
    }
}

/// The job ids among the components `rows` (heterogeneous job id, offset, job id) that
/// `leaders` (every component) or `wanted` (one component each) name.
fn named_of(rows: Vec<(i64, i32, i64)>, leaders: &[i64], wanted: &[(i64, i32)]) -> Vec<i64> {
    let leaders: HashSet<i64> = leaders.iter().copied().collect();
    let wanted: HashSet<(i64, i32)> = wanted.iter().copied().collect();
    rows.into_iter()
        .filter(|&(h, o, _)| leaders.contains(&h) || wanted.contains(&(h, o)))
        .map(|(_, _, j)| j)
        .collect()
}

/// One page of `query` after `after` read from `src`: its cursor, the matching runs split
/// into their records, with their steps.
fn page<S: RunSource>(
    src: &mut S,
    query: &JobQuery,
    after: Option<&JobCursor>,
    limit: usize,
) -> Result<JobPage, StoreError>
where
    StoreError: From<S::Error>,
{
    let scan = query::scan(src, query, after, limit)?;
    let next = scan
        .more
        .then(|| scan.rows.last())
        .flatten()
        .map(|r| JobCursor {
            cluster: r.cluster.clone(),
            submit: r.time_submit,
            job_id: r.job_id,
            run: r.run,
        });
    let nodes: HashSet<String> = query.nodes.iter().cloned().collect();
    let kept: Vec<_> = scan
        .rows
        .into_iter()
        .filter(|r| window::keep(r, query, &nodes))
        .collect();
    let kept = fed_dups::drop_superseded(src, query, &nodes, kept)?;
    let mut runs: Vec<JobRun> = resized::records(src, kept)?
        .into_iter()
        .filter(|r| window::keep_record(r, query, &nodes))
        .map(JobRun::from)
        .collect();
    attach_side(
        src,
        &mut runs,
        query.reads(TextField::WcKey),
        query.reads(TextField::Qos),
    )?;
    if !query.wckeys.is_empty() {
        runs.retain(|r| query.wckeys.contains(&r.wckey));
    }
    attach_het(src, &mut runs)?;
    if !query.no_steps {
        attach_steps(src, &mut runs)?;
    }
    Ok(JobPage { runs, next })
}

/// The job ids of `runs`, by cluster.
fn ids_by_cluster(runs: &[JobRun]) -> HashMap<String, Vec<i64>> {
    let mut by_cluster: HashMap<String, Vec<i64>> = HashMap::new();
    for r in runs {
        by_cluster
            .entry(r.cluster.clone())
            .or_default()
            .push(i64::from(r.job_id));
    }
    by_cluster
}

/// Gives each run its job's wckey and QOS (kept beside `job_runs`, which is at diesel's 32
/// columns), those of the two the query reads.
fn attach_side<S: RunSource>(
    src: &mut S,
    runs: &mut [JobRun],
    wckey: bool,
    qos_too: bool,
) -> Result<(), S::Error> {
    if !wckey && !qos_too {
        return Ok(());
    }
    let by_cluster = ids_by_cluster(runs);
    let mut wckeys: HashMap<(String, i64), String> = HashMap::new();
    let mut qos: HashMap<(String, i64), String> = HashMap::new();
    for (cluster, mut ids) in by_cluster {
        ids.sort_unstable();
        ids.dedup();
        if wckey {
            for (job, w) in src.wckeys_of(&cluster, &ids)? {
                wckeys.insert((cluster.clone(), job), w);
            }
        }
        if qos_too {
            for (job, q) in src.qos_of(&cluster, &ids)? {
                qos.insert((cluster.clone(), job), q);
            }
        }
    }
    for r in runs.iter_mut() {
        let key = (r.cluster.clone(), i64::from(r.job_id));
        // A job's runs share its wckey and QOS.
        if let Some(w) = wckeys.get(&key) {
            r.wckey.clone_from(w);
        }
        if let Some(q) = qos.get(&key) {
            r.qos.clone_from(q);
        }
    }
    Ok(())
}

/// Gives each of `runs` its heterogeneous job and offset, when it is a component of one.
fn attach_het<S: RunSource>(src: &mut S, runs: &mut [JobRun]) -> Result<(), S::Error> {
    let mut found: HashMap<(String, i64), (i64, i32)> = HashMap::new();
    for (cluster, mut ids) in ids_by_cluster(runs) {
        ids.sort_unstable();
        ids.dedup();
        for (job, het) in src.het_of(&cluster, &ids)? {
            found.insert((cluster.clone(), job), het);
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    for r in runs.iter_mut() {
        if let Some(&(leader, offset)) = found.get(&(r.cluster.clone(), i64::from(r.job_id))) {
            r.het_job_id = u32::try_from(leader).unwrap_or(0);
            r.het_offset = u32::try_from(offset).unwrap_or(0);
        }
    }
    Ok(())
}

/// Slurm's step order: the batch step (-4), the extern step (-5), then numbered steps.
fn step_order(s: &Step) -> (bool, u32) {
    (s.step_id >= 0, s.step_id.unsigned_abs())
}

fn attach_steps<S: RunSource>(src: &mut S, runs: &mut [JobRun]) -> Result<(), S::Error> {
    let mut by_cluster: HashMap<&str, Vec<i64>> = HashMap::new();
    for r in runs.iter() {
        by_cluster
            .entry(&r.cluster)
            .or_default()
            .push(i64::from(r.job_id));
    }
    let mut steps_of: HashMap<(String, u32, u32), Vec<Step>> = HashMap::new();
    for (cluster, mut ids) in by_cluster {
        ids.sort_unstable();
        ids.dedup();
        for row in src.steps_of(cluster, &ids)? {
            let step = Step::from(row);
            steps_of
                .entry((cluster.to_string(), step.job_id, step.run))
                .or_default()
                .push(step);
        }
    }
    // A resized run is several records in a row (see `resized`): each takes the steps that
    // started before the next one began.
    for i in 0..runs.len() {
        let key = (runs[i].cluster.clone(), runs[i].job_id, runs[i].run);
        let next_start = runs
            .get(i + 1)
            .filter(|n| (n.cluster.as_str(), n.job_id, n.run) == (key.0.as_str(), key.1, key.2))
            .map(|n| n.start);
        let Some(all) = steps_of.get_mut(&key) else {
            continue;
        };
        let mut steps = match next_start {
            Some(t) => {
                let (mine, later) = std::mem::take(all).into_iter().partition(|s| s.start < t);
                *all = later;
                mine
            }
            None => std::mem::take(all),
        };
        steps.sort_by_key(step_order);
        runs[i].steps = steps;
    }
    Ok(())
}
