//! Job-id leases: each cluster gets blocks of local job ids from a cursor persisted in the
//! database, advanced in the same transaction, so no id is handed out twice. Ids wrap from
//! [`MAX_JOB_ID`] back to 1, skipping the ids the cluster still uses.

use std::collections::BTreeSet;

use super::Store;
use super::conn::AnyConnection;
use super::error::StoreError;
use super::models::{clusters as cluster_rows, cursors};
use super::types::{Apply, JobIdRange};

/// Slurm's default `MaxJobId`: local ids run 1..MAX_JOB_ID, then wrap to 1 (`srun -Z`'s
/// made-up job ids lie above it, see [`sluice_vocab::ids::NO_ALLOC_JOB_IDS`]).
pub use sluice_vocab::ids::MAX_JOB_ID;
/// The most ids one lease may ask for.
pub const MAX_LEASE_COUNT: u32 = 1_000_000;
/// How often a lease retries when another dbd moved the cursor under it.
const CAS_ATTEMPTS: usize = 8;

/// Computes a lease of `count` ids from `cursor` among 1..`max`, skipping `in_use`; returns the
/// ranges and the new cursor, or `None` when fewer than `count` ids are free.
pub(crate) fn plan(
    cursor: u32,
    count: u32,
    in_use: &BTreeSet<u32>,
    max: u32,
) -> Option<(Vec<JobIdRange>, u32)> {
    let start = if (1..max).contains(&cursor) {
        cursor
    } else {
        1
    };
    let (mut cur, mut end, mut wrapped) = (start, max, false);
    let mut remaining = count;
    let mut ranges: Vec<JobIdRange> = Vec::new();
    // Each step takes ids up to the next in-use id or skips one in-use id, so the loop runs at
    // most |in_use| + |ranges| + 2 times.
    while remaining > 0 {
        if cur >= end {
            // After the wrap only the ids below the starting cursor are free for this lease.
            if wrapped || start == 1 {
                return None;
            }
            (cur, end, wrapped) = (1, start, true);
            continue;
        }
        if in_use.contains(&cur) {
            cur += 1;
            continue;
        }
        let next_busy = in_use.range(cur..end).next().copied().unwrap_or(end);
        let take = remaining.min(next_busy - cur);
        match ranges.last_mut() {
            Some(last) if last.first + last.count == cur => last.count += take,
            _ => ranges.push(JobIdRange {
                first: cur,
                count: take,
            }),
        }
        cur += take;
        remaining -= take;
    }
    Some((ranges, cur))
}

fn lease_once(
    conn: &mut AnyConnection,
    cluster: &str,
    count: u32,
    in_use: &BTreeSet<u32>,
) -> Result<Option<Vec<JobIdRange>>, StoreError> {
    if cluster_rows::get_live(conn, cluster)?.is_none() {
        return Err(StoreError::UnknownCluster {
            name: cluster.to_string(),
        });
    }
    let old = match cursors::get(conn, cluster)? {
        Some(c) => c,
        None => {
            cursors::insert(conn, cluster, 1)?;
            1
        }
    };
    let start = u32::try_from(old).unwrap_or(1);
    let (ranges, next) =
        plan(start, count, in_use, MAX_JOB_ID).ok_or_else(|| StoreError::JobIdsExhausted {
            cluster: cluster.to_string(),
        })?;
    if cursors::advance(conn, cluster, old, i64::from(next))? {
        Ok(Some(ranges))
    } else {
        Ok(None)
    }
}

/// Leases `count` ids to `cluster` (see the module doc).
pub(super) fn lease(
    store: &Store,
    cluster: &str,
    count: u32,
    in_use: &[u32],
) -> Result<Vec<JobIdRange>, StoreError> {
    if !(1..=MAX_LEASE_COUNT).contains(&count) {
        return Err(StoreError::InvalidLeaseCount {
            count,
            max: MAX_LEASE_COUNT,
        });
    }
    let in_use: BTreeSet<u32> = in_use
        .iter()
        .copied()
        .filter(|id| (1..MAX_JOB_ID).contains(id))
        .collect();
    for _ in 0..CAS_ATTEMPTS {
        if let Some(ranges) =
            store.change(Apply::Commit, |c| lease_once(c, cluster, count, &in_use))?
        {
            return Ok(ranges);
        }
    }
    Err(StoreError::LeaseContention {
        cluster: cluster.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(first: u32, count: u32) -> JobIdRange {
        JobIdRange { first, count }
    }

    #[test]
    fn plans_contiguous_blocks_and_skips_in_use() {
        let none = BTreeSet::new();
        assert_eq!(plan(1, 10, &none, MAX_JOB_ID), Some((vec![r(1, 10)], 11)));
        let busy: BTreeSet<u32> = [12, 13, 20].into();
        assert_eq!(
            plan(11, 10, &busy, MAX_JOB_ID),
            Some((vec![r(11, 1), r(14, 6), r(21, 3)], 24))
        );
    }

    #[test]
    fn wraps_below_max_job_id() {
        let none = BTreeSet::new();
        let (ranges, next) = plan(MAX_JOB_ID - 2, 5, &none, MAX_JOB_ID).unwrap();
        assert_eq!(ranges, vec![r(MAX_JOB_ID - 2, 2), r(1, 3)]);
        assert_eq!(next, 4);
        assert_eq!(
            plan(MAX_JOB_ID, 1, &none, MAX_JOB_ID),
            Some((vec![r(1, 1)], 2))
        );
        assert_eq!(plan(0, 1, &none, MAX_JOB_ID), Some((vec![r(1, 1)], 2)));
    }

    #[test]
    fn refuses_when_too_few_ids_are_free() {
        let max = 100;
        let busy: BTreeSet<u32> = (1..max).collect();
        assert_eq!(plan(5, 1, &busy, max), None);
        let mostly: BTreeSet<u32> = (3..max).collect();
        assert_eq!(plan(5, 2, &mostly, max), Some((vec![r(1, 2)], 3)));
        assert_eq!(plan(5, 3, &mostly, max), None);
        // A lease never holds an id twice, even when it goes all the way round.
        assert_eq!(plan(50, 100, &BTreeSet::new(), max), None);
        assert_eq!(
            plan(50, 99, &BTreeSet::new(), max),
            Some((vec![r(50, 50), r(1, 49)], 50))
        );
        assert_eq!(
            plan(1, 99, &BTreeSet::new(), max),
            Some((vec![r(1, 99)], 100))
        );
    }
}
