//! Slurm's rules for a federated job when clusters leave its federation (`fed_mgr.c`
//! `_cleanup_removed_cluster_jobs`, federation.shtml, test37.16), as a pure function:
//!
//! 1. A running job keeps running as a non-federated job where it runs.
//! 2. When the origin leaves, its pending copy stays there as a local job and the siblings
//!    elsewhere are removed.
//! 3. When the origin leaves and was not viable, a job left with one viable cluster becomes a
//!    non-federated pending job there.
//! 4. ... and with several, it stays federated among them.
//! 5. Everywhere else, the departed clusters leave the job's viable and active sets.
//! 6. An origin that only tracked a job running on a departed cluster drops its tracker.
//!
//! The departed cluster itself is told nothing per job: its controller cleans up its own jobs
//! when its federation view changes, as Slurm's does.

use std::collections::BTreeSet;

use super::start::Emitted;
use super::types::{FedEventKind, FedJob, FedPhase};

/// Whether any cluster the job refers to is no longer among `members`.
pub fn touches_departed(job: &FedJob, members: &BTreeSet<String>) -> bool {
    let gone = |c: &String| !members.contains(c);
    gone(&job.origin)
        || job.viable.iter().any(gone)
        || job.active.iter().any(gone)
        || job.winner.as_ref().is_some_and(gone)
        || job.lock.as_ref().is_some_and(|l| gone(&l.cluster))
}

fn left(job_id: u32) -> FedEventKind {
    FedEventKind::JobLeftFederation { job_id }
}

/// Applies the removal rules to a live job whose federation now has `members`.
pub fn on_departure(job: &mut FedJob, members: &BTreeSet<String>, now: i64) -> Emitted {
    let job_id = job.job_id;
    let origin_here = members.contains(&job.origin);
    let mut out = Vec::new();
    match job.phase {
        FedPhase::Started => {
            let winner = job.winner.clone().unwrap_or_default();
            if !members.contains(&winner) {
                // Rules 1 and 6: it runs on outside the federation; the origin drops its tracker.
                if origin_here {
                    out.push((job.origin.clone(), left(job_id)));
                }
                detach(job, now);
                return out;
            }
            if !origin_here {
                // Rule 1: the run goes on, no longer federated.
                out.push((winner, left(job_id)));
                detach(job, now);
                return out;
            }
        }
        FedPhase::Pending if !origin_here => {
            let origin_copy = job.active.contains(&job.origin);
            let remaining_viable: BTreeSet<String> =
                job.viable.intersection(members).cloned().collect();
            let remaining_active: Vec<String> = job
                .active
                .iter()
                .filter(|c| members.contains(*c))
                .cloned()
                .collect();
            if origin_copy {
                // Rule 2: the origin keeps it; the siblings elsewhere go.
                for c in remaining_active {
                    let ev = FedEventKind::SiblingRevoked {
                        job_id,
                        winner: None,
                    };
                    out.push((c, ev));
                }
                detach(job, now);
                return out;
            }
            if remaining_viable.len() <= 1 {
                // Rule 3: the last sibling keeps it as a local pending job.
                out.extend(remaining_active.into_iter().map(|c| (c, left(job_id))));
                detach(job, now);
                return out;
            }
            // Rule 4: it stays federated among the remaining siblings.
        }
        _ => {}
    }
    // Rule 5.
    job.viable.retain(|c| members.contains(c));
    job.active.retain(|c| members.contains(c));
    if job
        .lock
        .as_ref()
        .is_some_and(|l| !members.contains(&l.cluster))
    {
        job.lock = None;
    }
    out
}

fn detach(job: &mut FedJob, now: i64) {
    job.phase = FedPhase::Detached;
    job.lock = job.lock.take().filter(|_| job.winner.is_some());
    job.end_time = now;
}
