//! The origin's submission of a federated job: recording it (`submit_in`, written alone by
//! [`Store::fed_submit`] or grouped with concurrent ones by `super::group`) and withdrawing a
//! submission whose answer the origin never got ([`Store::fed_withdraw_submission`]).
//!
//! Both are idempotent and meet in one rule: a record is the same submission when its origin
//! and description match. A repeat of a submission is answered with its record, whatever
//! became of it (a late repeat of a withdrawn one records nothing); a different description
//! under a live id is refused. A withdrawal cancels a pending record in the same transaction
//! (a start lock in flight is dropped, so its commit is refused) or, when nothing was
//! recorded, keeps a CANCELLED record so a submission still on its way records nothing.

use std::collections::BTreeSet;

use sluice_vocab::JobState;
use sluice_vocab::ids::LOCAL_ID_BITS;

use crate::store::Store;
use crate::store::conn::AnyConnection;
use crate::store::models::clusters::ClusterRow;
use crate::store::models::fed_jobs::{self as job_rows, FedJobRow};
use crate::store::models::to_u32;

use super::error::FedError;
use super::group::Wrote;
use super::types::{CancelOutcome, FedJob, FedPhase, SubmitFedJob};
use super::viable::{self, takes_new_jobs};
use super::{log, settle, start, view};

/// Fails unless `req`'s id is one its origin may issue (its fed id in the top bits).
fn check_id(req: &SubmitFedJob, origin: &ClusterRow) -> Result<(), FedError> {
    if req.job_id >> LOCAL_ID_BITS != to_u32(origin.fed_id)
        || req.job_id & ((1 << LOCAL_ID_BITS) - 1) == 0
    {
        return Err(FedError::ForeignJobId {
            job_id: req.job_id,
            origin: req.origin.clone(),
        });
    }
    Ok(())
}

/// Whether `job` records the submission `req`.
fn same_submission(job: &FedJob, req: &SubmitFedJob) -> bool {
    job.origin == req.origin && job.desc == req.desc
}

/// The names of `federation`'s members.
fn member_names(c: &mut AnyConnection, federation: &str) -> Result<BTreeSet<String>, FedError> {
    Ok(view::candidates(c, federation)?
        .into_iter()
        .map(|m| m.name)
        .collect())
}

/// Records a federated job the origin validated, inside the caller's transaction: computes its
/// viable siblings, and offers it to them unless it is held. Sending the same submission again
/// returns its record (see the module doc), before any other check: a repeat is answered even
/// if the origin has started draining since.
pub(super) fn submit_in(
    c: &mut AnyConnection,
    req: &SubmitFedJob,
    now: i64,
) -> Result<Wrote, FedError> {
    let origin = view::federated_cluster(c, &req.origin)?;
    check_id(req, &origin)?;
    let existing = job_rows::get(c, &origin.federation, req.job_id)?.map(FedJobRow::into_job);
    if let Some(old) = &existing {
        if same_submission(old, req) {
            return Ok(Wrote {
                job: old.clone(),
                appended: BTreeSet::new(),
                settled: 0,
            });
        }
        if !old.phase.is_terminal() {
            return Err(FedError::DuplicateJobId { job_id: req.job_id });
        }
        // Ids wrap: a finished job's id may be issued again.
    }
    if !takes_new_jobs(to_u32(origin.fed_state)) {
        return Err(FedError::SubmissionsDisabled {
            cluster: req.origin.clone(),
        });
    }
    let members = view::candidates(c, &origin.federation)?;
    let viable = viable::viable_siblings(
        &members,
        &req.origin,
        &req.req_clusters,
        &req.cluster_features,
        req.is_array,
    )?;
    let (mut job, events) = start::submit(req, &origin.federation, viable, now);
    if let Some(old) = existing {
        job.version = old.version + 1;
        job_rows::update(c, &FedJobRow::from_job(&job, now))?;
    } else {
        job_rows::insert(c, &FedJobRow::from_job(&job, now))?;
    }
    let names = members.iter().map(|m| m.name.clone()).collect();
    let appended = log::append(c, &origin.federation, &names, events, now)?;
    Ok(Wrote {
        job,
        appended,
        settled: 0,
    })
}

impl Store {
    /// The origin gave up recording `req` (see the module doc). Returns the record as it is
    /// now (CANCELLED, or over already). A job that started is not withdrawn
    /// (`NotPending`); another cluster's job under this id is refused (`NotOrigin`).
    pub fn fed_withdraw_submission(
        &self,
        req: &SubmitFedJob,
        now: i64,
    ) -> Result<FedJob, FedError> {
        let (job, appended, settled) = self.fed_tx(|c| {
            let origin = view::federated_cluster(c, &req.origin)?;
            check_id(req, &origin)?;
            let federation = origin.federation;
            if !job_rows::claim(c, &federation, req.job_id)? {
                let job = tombstone(req, &federation, now);
                job_rows::insert(c, &FedJobRow::from_job(&job, now))?;
                return Ok((job, BTreeSet::new(), 0));
            }
            let mut job = job_rows::get(c, &federation, req.job_id)?
                .ok_or(FedError::InvalidJobId { job_id: req.job_id })?
                .into_job();
            if job.origin != req.origin {
                return Err(FedError::NotOrigin {
                    job_id: job.job_id,
                    origin: job.origin,
                });
            }
            if job.phase.is_terminal() {
                return Ok((job, BTreeSet::new(), 0));
            }
            let mut involved = job.active.clone();
            involved.extend(job.lock.as_ref().map(|l| l.cluster.clone()));
            let (outcome, events) = start::cancel(&mut job, &req.origin, None, now)?;
            if let CancelOutcome::Running { .. } = outcome {
                return Err(FedError::NotPending { job_id: job.job_id });
            }
            job_rows::update(c, &FedJobRow::from_job(&job, now))?;
            let names = member_names(c, &federation)?;
            let appended = log::append(c, &federation, &names, events, now)?;
            involved.insert(job.origin.clone());
            let settled = settle::settle(c, Some(&involved), now)?.len();
            Ok((job, appended, settled))
        })?;
        self.fed_changed(&appended, settled);
        Ok(job)
    }
}

/// The CANCELLED record of a submission withdrawn before the dbd recorded it.
fn tombstone(req: &SubmitFedJob, federation: &str, now: i64) -> FedJob {
    let (mut job, _) = start::submit(
        &SubmitFedJob {
            held: true,
            ..req.clone()
        },
        federation,
        BTreeSet::new(),
        now,
    );
    job.phase = FedPhase::Cancelled;
    job.final_state = JobState::Cancelled.stored();
    job.end_time = now;
    job
}
