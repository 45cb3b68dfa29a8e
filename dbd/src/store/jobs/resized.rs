//! sacct's records of a run whose allocation changed while it ran (failure management replaced
//! or dropped a node). Slurm ends such a job's record in state RESIZING at the change and
//! starts a new one, submitted, eligible and started then, with the new allocation; sacct shows
//! the RESIZING records with or without `-D`. Here a run row holds its current allocation and
//! `job_resizes` the earlier ones: each run that has any reads as those records, in time order.

use std::collections::BTreeMap;

use sluice_vocab::states::JobState;

use super::query::RunSource;
use crate::store::models::job_resizes::{self, ResizeRow};
use crate::store::models::jobs::JobRunRow;

/// `rows` with each resized run split into its records.
pub(super) fn records<S: RunSource>(
    src: &mut S,
    rows: Vec<JobRunRow>,
) -> Result<Vec<JobRunRow>, S::Error> {
    let mut ids: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.time_start != 0) {
        ids.entry(r.cluster.clone()).or_default().push(r.job_id);
    }
    let mut earlier: BTreeMap<(String, i64, i32), Vec<ResizeRow>> = BTreeMap::new();
    for (cluster, mut job_ids) in ids {
        job_ids.sort_unstable();
        job_ids.dedup();
        for r in src.resizes_of(&cluster, &job_ids)? {
            earlier
                .entry((cluster.clone(), r.job_id, r.run))
                .or_default()
                .push(r);
        }
    }
    if earlier.is_empty() {
        return Ok(rows);
    }
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        match earlier.get(&(row.cluster.clone(), row.job_id, row.run)) {
            Some(resizes) if row.time_start != 0 => split(row, resizes, &mut out),
            _ => out.push(row),
        }
    }
    Ok(out)
}

/// Pushes the records of `run`, resized at `resizes` (ordered by time).
fn split(run: JobRunRow, resizes: &[ResizeRow], out: &mut Vec<JobRunRow>) {
    let resizing = i64::from(JobState::Resizing.stored());
    for (i, seg) in job_resizes::segments(run.time_start, run.time_end, resizes)
        .into_iter()
        .enumerate()
    {
        let mut r = run.clone();
        if i > 0 {
            // A record after a change starts at it, as Slurm's new record does.
            (r.time_submit, r.time_eligible) = (seg.start, seg.start);
        }
        r.time_start = seg.start;
        match seg.earlier {
            Some(e) => {
                r.state = resizing;
                r.time_end = seg.end;
                (r.exit_code, r.exit_signal, r.requester_uid) = (0, 0, -1);
                r.reason.clear();
                r.node_list.clone_from(&e.node_list);
                (r.node_count, r.cpus, r.mem_mb) = (e.node_count, e.cpus, e.mem_mb);
                r.time_limit_min = e.time_limit_min;
                (r.suspended_secs, r.suspend_since) = (seg.suspended_secs, 0);
            }
            None => r.suspended_secs = (run.suspended_secs - seg.suspended_secs).max(0),
        }
        out.push(r);
    }
}
