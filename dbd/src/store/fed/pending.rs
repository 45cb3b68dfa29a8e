//! Pure transitions of a pending federated job: holding it on the origin (withdraw) and
//! offering it again, `scancel --sibling`, updates of its clusters, features or description,
//! and a sibling refusing its copy. Same event rule as [`super::start`].

use std::collections::BTreeSet;

use super::error::FedError;
use super::start::{self, Emitted, offer_to_siblings, offered};
use super::types::{FedEventKind, FedJob, FedPhase, LockRefusal};

/// Fails unless the job is pending: `NotPending` once started, `AlreadyDone` once over.
fn require_pending(job: &FedJob) -> Result<(), FedError> {
    match job.phase {
        FedPhase::Pending => Ok(()),
        FedPhase::Started => Err(FedError::NotPending { job_id: job.job_id }),
        _ => Err(FedError::AlreadyDone { job_id: job.job_id }),
    }
}

/// Fails unless `caller` is the job's origin.
fn require_origin(job: &FedJob, caller: &str) -> Result<(), FedError> {
    if job.origin == caller {
        Ok(())
    } else {
        Err(FedError::NotOrigin {
            job_id: job.job_id,
            origin: job.origin.clone(),
        })
    }
}

fn revoked(job_id: u32) -> FedEventKind {
    FedEventKind::SiblingRevoked {
        job_id,
        winner: None,
    }
}

/// The job became held or dependent on the origin: every other sibling is revoked and a
/// pending start lock is dropped (its commit will be refused).
pub fn withdraw(job: &mut FedJob, caller: &str) -> Result<Emitted, FedError> {
    require_origin(job, caller)?;
    require_pending(job)?;
    job.held = true;
    job.lock = None;
    let others: Vec<String> = job
        .active
        .iter()
        .filter(|c| **c != job.origin)
        .cloned()
        .collect();
    job.active.retain(|c| *c == job.origin);
    Ok(others
        .into_iter()
        .map(|c| (c, revoked(job.job_id)))
        .collect())
}

/// The origin released the job (or its dependency is satisfied): it is offered to every
/// cluster of `viable_now` that has no copy yet, with the new description if one is given.
pub fn offer(
    job: &mut FedJob,
    caller: &str,
    desc: Option<Vec<u8>>,
    viable_now: BTreeSet<String>,
) -> Result<Emitted, FedError> {
    let mut out = release(job, caller, desc, viable_now)?;
    out.extend(offer_to_siblings(job));
    Ok(out)
}

/// The origin starts a job it recorded held and has not offered yet, offering it in the same
/// step (`StartFedJob` carrying the offer): released as [`offer`] releases it, then started on
/// the origin as [`start::start_now`] starts it. A job started this way was never offered, so
/// no sibling gets a copy to revoke. A refusal changes nothing (the caller offers the job on
/// its own then); the same start again is answered as started with no new events.
pub fn start_offered(
    job: &mut FedJob,
    caller: &str,
    desc: Vec<u8>,
    viable_now: BTreeSet<String>,
    now: i64,
) -> Result<Emitted, FedError> {
    if job.phase == FedPhase::Started && job.winner.as_deref() == Some(caller) {
        return Ok(Vec::new());
    }
    let job_id = job.job_id;
    let refused = |refusal| FedError::StartRefused { job_id, refusal };
    if job.phase != FedPhase::Pending {
        return Err(refused(LockRefusal::NotPending));
    }
    let mut out = release(job, caller, Some(desc), viable_now)?;
    out.extend(start::start_now(job, caller, now).map_err(refused)?);
    Ok(out)
}

/// What offering does to the job before any sibling is offered it: the origin's new
/// description (told to every copy), no longer held, viable on `viable_now`.
fn release(
    job: &mut FedJob,
    caller: &str,
    desc: Option<Vec<u8>>,
    viable_now: BTreeSet<String>,
) -> Result<Emitted, FedError> {
    require_origin(job, caller)?;
    require_pending(job)?;
    let mut out = Vec::new();
    if let Some(desc) = desc {
        job.desc = desc;
        for c in job.active.iter().filter(|c| **c != caller) {
            let ev = FedEventKind::SiblingUpdated {
                job_id: job.job_id,
                desc: job.desc.clone(),
            };
            out.push((c.clone(), ev));
        }
    }
    job.held = false;
    job.viable = viable_now;
    if job.viable.contains(&job.origin) {
        job.active.insert(job.origin.clone());
    }
    Ok(out)
}

/// `scancel --sibling=<sibling>`: revokes one pending sibling (the viable set is unchanged).
/// `members` are the federation's live members.
pub fn remove_sibling(
    job: &mut FedJob,
    caller: &str,
    sibling: &str,
    members: &BTreeSet<String>,
    now: i64,
) -> Result<Emitted, FedError> {
    if !members.contains(sibling) {
        return Err(FedError::InvalidClusterName {
            name: sibling.to_string(),
        });
    }
    require_pending(job)?;
    if job.live_lock(now).is_some() {
        return Err(FedError::NotPending { job_id: job.job_id });
    }
    let mut out = Vec::new();
    if job.active.remove(sibling) && sibling != caller {
        out.push((sibling.to_string(), revoked(job.job_id)));
    }
    Ok(out)
}

/// `scontrol update` of a pending job: with `viable_new` (clusters or features changed) the
/// siblings no longer viable are revoked and the new ones offered (not while held); with
/// `desc` every remaining sibling gets the new description.
pub fn update(
    job: &mut FedJob,
    caller: &str,
    viable_new: Option<BTreeSet<String>>,
    desc: Option<Vec<u8>>,
    now: i64,
) -> Result<Emitted, FedError> {
    require_pending(job)?;
    if job.live_lock(now).is_some() {
        return Err(FedError::NotPending { job_id: job.job_id });
    }
    let mut out = Vec::new();
    let mut offered_now = BTreeSet::new();
    let desc_changed = desc.is_some();
    if let Some(desc) = desc {
        job.desc = desc;
    }
    if let Some(new) = viable_new {
        let gone: Vec<String> = job.active.difference(&new).cloned().collect();
        for c in gone {
            job.active.remove(&c);
            if c != caller {
                out.push((c, revoked(job.job_id)));
            }
        }
        job.viable = new;
        if job.viable.contains(&job.origin) && !job.active.contains(&job.origin) {
            // The origin's copy is active again (it clears its revoked flag).
            job.active.insert(job.origin.clone());
            offered_now.insert(job.origin.clone());
            if job.origin != caller {
                out.push((job.origin.clone(), offered(job)));
            }
        }
        if !job.held {
            for (c, ev) in offer_to_siblings(job) {
                offered_now.insert(c.clone());
                out.push((c, ev));
            }
        }
    }
    let unchanged = |c: &&String| **c != caller && !offered_now.contains(*c);
    for c in job.active.iter().filter(unchanged).filter(|_| desc_changed) {
        let ev = FedEventKind::SiblingUpdated {
            job_id: job.job_id,
            desc: job.desc.clone(),
        };
        out.push((c.clone(), ev));
    }
    Ok(out)
}

/// A sibling refused its copy (its own checks failed): it no longer holds one.
pub fn reject(job: &mut FedJob, cluster: &str) {
    if job.phase == FedPhase::Pending && cluster != job.origin {
        job.active.remove(cluster);
        if job.lock.as_ref().is_some_and(|l| l.cluster == cluster) {
            job.lock = None;
        }
    }
}
