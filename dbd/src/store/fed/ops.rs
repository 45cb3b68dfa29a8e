//! The federated-job requests as store methods (the origin's submission is in
//! `super::submission`; it and the offer are written through `super::group`). Each runs in one
//! transaction: find the caller's federation, take the job row's lock, apply a pure transition
//! from [`super::start`] or [`super::pending`], save the job, append the events, and finish
//! draining clusters the job no longer involves.

use std::collections::BTreeSet;

use crate::store::Store;
use crate::store::conn::AnyConnection;
use crate::store::models::fed_jobs::{self as job_rows, FedJobRow};

use super::error::{FedError, MAX_LEASE_SECS};
use super::group::{FedWrite, RunEnd, Wrote, start_outcome};
use super::start::{self, Emitted};
use super::types::{CancelOutcome, FedJob, LockOutcome, LockRefusal, RequeueMode, UpdateFedJob};
use super::viable::{self, Candidate, takes_new_jobs};
use super::{log, pending, settle, view};

/// The federation a request runs in, with its members.
struct Ctx {
    federation: String,
    members: Vec<Candidate>,
}

impl Ctx {
    fn names(&self) -> BTreeSet<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }

    /// The job's viable set now: recomputed from its `-M` list and constraint; if that fails
    /// (a named cluster or feature is gone), what remains of the old set that takes new jobs.
    fn viable_now(&self, job: &FedJob) -> BTreeSet<String> {
        viable::viable_siblings(
            &self.members,
            &job.origin,
            &job.req_clusters,
            &job.cluster_features,
            job.is_array,
        )
        .unwrap_or_else(|_| {
            self.members
                .iter()
                .filter(|m| job.viable.contains(&m.name) && takes_new_jobs(m.fed_state))
                .map(|m| m.name.clone())
                .collect()
        })
    }
}

/// What a job transition wants written after it.
struct Done<T> {
    value: T,
    events: Emitted,
}

fn done<T>(value: T, events: Emitted) -> Result<Done<T>, FedError> {
    Ok(Done { value, events })
}

/// Runs `op` on job `job_id` of `caller`'s federation inside the caller's transaction (see
/// the module doc); returns its value and what it wrote.
fn job_in<T>(
    c: &mut AnyConnection,
    caller: &str,
    job_id: u32,
    now: i64,
    op: impl FnOnce(&mut FedJob, &Ctx) -> Result<Done<T>, FedError>,
) -> Result<(T, Wrote), FedError> {
    let federation = view::federated_cluster(c, caller)?.federation;
    if !job_rows::claim(c, &federation, job_id)? {
        return Err(FedError::InvalidJobId { job_id });
    }
    let row = job_rows::get(c, &federation, job_id)?.ok_or(FedError::InvalidJobId { job_id })?;
    let mut job = row.into_job();
    let before: BTreeSet<String> = involved(&job);
    let ctx = Ctx {
        members: view::candidates(c, &federation)?,
        federation,
    };
    let Done { value, events } = op(&mut job, &ctx)?;
    job_rows::update(c, &FedJobRow::from_job(&job, now))?;
    let appended = log::append(c, &ctx.federation, &ctx.names(), events, now)?;
    let released: BTreeSet<String> = before.difference(&involved(&job)).cloned().collect();
    let settled = settle_some(c, &released, now)?;
    Ok((
        value,
        Wrote {
            job,
            appended,
            settled,
        },
    ))
}

/// The origin offers job `job_id` to its viable siblings (released, or its dependency
/// satisfied), with `desc` as its new description if given; inside the caller's transaction.
pub(super) fn offer_in(
    c: &mut AnyConnection,
    job_id: u32,
    caller: &str,
    desc: Option<Vec<u8>>,
    now: i64,
) -> Result<Wrote, FedError> {
    let ((), wrote) = job_in(c, caller, job_id, now, |job, ctx| {
        let viable = ctx.viable_now(job);
        done((), pending::offer(job, caller, desc, viable)?)
    })?;
    Ok(wrote)
}

/// Starts job `job_id` on `caller` in one step ([`start::start_now`]), offering it first when
/// `offer` carries its description ([`pending::start_offered`]); inside the caller's
/// transaction. A refusal is [`FedError::StartRefused`] and writes nothing.
pub(super) fn start_in(
    c: &mut AnyConnection,
    job_id: u32,
    caller: &str,
    offer: Option<Vec<u8>>,
    now: i64,
) -> Result<Wrote, FedError> {
    let ((), wrote) = job_in(c, caller, job_id, now, |job, ctx| match offer {
        Some(desc) => {
            let viable = ctx.viable_now(job);
            done((), pending::start_offered(job, caller, desc, viable, now)?)
        }
        None => match start::start_now(job, caller, now) {
            Ok(events) => done((), events),
            Err(refusal) => Err(FedError::StartRefused { job_id, refusal }),
        },
    })?;
    Ok(wrote)
}

/// The run of job `job_id` on `caller` ended ([`start::ended`]); inside the caller's
/// transaction.
pub(super) fn ended_in(
    c: &mut AnyConnection,
    job_id: u32,
    caller: &str,
    end: RunEnd,
    now: i64,
) -> Result<Wrote, FedError> {
    let ((), wrote) = job_in(c, caller, job_id, now, |job, ctx| {
        let viable = ctx.viable_now(job);
        let RunEnd {
            state,
            exit_code,
            requeue,
        } = end;
        let events = start::ended(job, caller, state, exit_code, requeue, viable, now)?;
        done((), events)
    })?;
    Ok(wrote)
}

impl Store {
    /// Runs `op` on job `job_id` of `caller`'s federation in one transaction (see the module doc).
    fn with_job<T>(
        &self,
        caller: &str,
        job_id: u32,
        now: i64,
        mut op: impl FnMut(&mut FedJob, &Ctx) -> Result<Done<T>, FedError>,
    ) -> Result<(T, FedJob), FedError> {
        let (value, wrote) = self.fed_tx(|c| job_in(c, caller, job_id, now, &mut op))?;
        self.fed_changed(&wrote.appended, wrote.settled);
        Ok((value, wrote.job))
    }

    /// Asks for the start lock of `job_id` for `cluster`, for `lease_secs` from `now`.
    pub fn fed_acquire_start_lock(
        &self,
        job_id: u32,
        cluster: &str,
        lease_secs: u32,
        now: i64,
    ) -> Result<LockOutcome, FedError> {
        if !(1..=MAX_LEASE_SECS).contains(&lease_secs) {
            return Err(FedError::InvalidLease { secs: lease_secs });
        }
        let (outcome, _) = self.with_job(cluster, job_id, now, |job, _| {
            done(start::acquire(job, cluster, lease_secs, now), Vec::new())
        })?;
        Ok(outcome)
    }

    /// Commits "started on `cluster`" with the lock `token`: on success the other siblings are
    /// revoked and the origin told, in the same transaction; a refusal ("lost lock") means the
    /// caller must release its allocation and not launch.
    pub fn fed_commit_start(
        &self,
        job_id: u32,
        cluster: &str,
        token: u64,
        now: i64,
    ) -> Result<Result<FedJob, LockRefusal>, FedError> {
        let (outcome, job) = self.with_job(cluster, job_id, now, |job, _| {
            match start::commit(job, cluster, token, now) {
                Ok(events) => done(Ok(()), events),
                Err(refusal) => done(Err(refusal), Vec::new()),
            }
        })?;
        Ok(outcome.map(|()| job))
    }

    /// Starts `job_id` on `cluster` in one step, lock and commit together (see
    /// [`start::start_now`]): the job as committed, or why it may not start there.
    pub fn fed_start(
        &self,
        job_id: u32,
        cluster: &str,
        now: i64,
    ) -> Result<Result<FedJob, LockRefusal>, FedError> {
        self.start_write(job_id, cluster, None, now)
    }

    /// The origin `cluster` starts `job_id`, recorded held and not offered yet, offering it
    /// with `desc` in the same step (see [`pending::start_offered`]): the job as committed, or
    /// why it may not start there (then nothing changed, the offer included).
    pub fn fed_start_offering(
        &self,
        job_id: u32,
        cluster: &str,
        desc: Vec<u8>,
        now: i64,
    ) -> Result<Result<FedJob, LockRefusal>, FedError> {
        self.start_write(job_id, cluster, Some(desc), now)
    }

    /// [`FedWrite::Start`] alone, answered as the start's outcome.
    fn start_write(
        &self,
        job_id: u32,
        cluster: &str,
        offer: Option<Vec<u8>>,
        now: i64,
    ) -> Result<Result<FedJob, LockRefusal>, FedError> {
        let start = FedWrite::Start {
            job_id,
            caller: cluster.to_string(),
            offer,
        };
        start_outcome(self.fed_write(&start, now))
    }

    /// Gives up `cluster`'s start lock `token`; whether it held it (a no-op otherwise).
    pub fn fed_release_start_lock(
        &self,
        job_id: u32,
        cluster: &str,
        token: u64,
        now: i64,
    ) -> Result<bool, FedError> {
        let (released, _) = self.with_job(cluster, job_id, now, |job, _| {
            done(start::release(job, cluster, token), Vec::new())
        })?;
        Ok(released)
    }

    /// Cancels the job from `caller` on behalf of user `requester_uid` (see [`start::cancel`]).
    pub fn fed_cancel(
        &self,
        job_id: u32,
        caller: &str,
        requester_uid: Option<u32>,
        now: i64,
    ) -> Result<CancelOutcome, FedError> {
        let (outcome, _) = self.with_job(caller, job_id, now, |job, _| {
            let (outcome, events) = start::cancel(job, caller, requester_uid, now)?;
            done(outcome, events)
        })?;
        Ok(outcome)
    }

    /// `scancel --sibling=<sibling>` from `caller` (see [`pending::remove_sibling`]).
    pub fn fed_remove_sibling(
        &self,
        job_id: u32,
        caller: &str,
        sibling: &str,
        now: i64,
    ) -> Result<FedJob, FedError> {
        let ((), job) = self.with_job(caller, job_id, now, |job, ctx| {
            let events = pending::remove_sibling(job, caller, sibling, &ctx.names(), now)?;
            done((), events)
        })?;
        Ok(job)
    }

    /// The origin holds the job (held or dependent after submission): siblings are revoked.
    pub fn fed_withdraw(&self, job_id: u32, caller: &str, now: i64) -> Result<FedJob, FedError> {
        let ((), job) = self.with_job(caller, job_id, now, |job, _| {
            done((), pending::withdraw(job, caller)?)
        })?;
        Ok(job)
    }

    /// `scontrol update` of a pending job's clusters, features or description.
    pub fn fed_update(&self, req: &UpdateFedJob, now: i64) -> Result<FedJob, FedError> {
        let ((), job) = self.with_job(&req.caller, req.job_id, now, |job, ctx| {
            let mut viable_new = None;
            if req.req_clusters.is_some() || req.cluster_features.is_some() {
                let clusters = req
                    .req_clusters
                    .clone()
                    .unwrap_or_else(|| job.req_clusters.clone());
                let features = req
                    .cluster_features
                    .clone()
                    .unwrap_or_else(|| job.cluster_features.clone());
                let new = viable::viable_siblings(
                    &ctx.members,
                    &job.origin,
                    &clusters,
                    &features,
                    job.is_array,
                )?;
                job.req_clusters = clusters;
                job.cluster_features = features;
                viable_new = Some(new);
            }
            let events = pending::update(job, &req.caller, viable_new, req.desc.clone(), now)?;
            done((), events)
        })?;
        Ok(job)
    }

    /// Asks the cluster running the job to requeue it (held with `hold`); returns that cluster.
    pub fn fed_requeue(
        &self,
        job_id: u32,
        caller: &str,
        hold: bool,
        now: i64,
    ) -> Result<String, FedError> {
        let mode = if hold {
            RequeueMode::RequeueHold
        } else {
            RequeueMode::Requeue
        };
        let (running_on, _) = self.with_job(caller, job_id, now, |job, _| {
            let (running_on, events) = start::request_requeue(job, caller, mode)?;
            done(running_on, events)
        })?;
        Ok(running_on)
    }

    /// The run on `cluster` ended in `state` (a requeue makes it pending again and re-offers it).
    pub fn fed_job_ended(
        &self,
        job_id: u32,
        cluster: &str,
        state: u32,
        exit_code: i32,
        requeue: RequeueMode,
        now: i64,
    ) -> Result<FedJob, FedError> {
        let end = RunEnd {
            state,
            exit_code,
            requeue,
        };
        self.fed_write(
            &FedWrite::Ended {
                job_id,
                caller: cluster.to_string(),
                end,
            },
            now,
        )
    }

    /// `cluster` refused its sibling copy: it no longer holds one.
    pub fn fed_reject_sibling(
        &self,
        job_id: u32,
        cluster: &str,
        now: i64,
    ) -> Result<FedJob, FedError> {
        let ((), job) = self.with_job(cluster, job_id, now, |job, _| {
            pending::reject(job, cluster);
            done((), Vec::new())
        })?;
        Ok(job)
    }

    /// The job `job_id` of `caller`'s federation, as recorded.
    pub fn fed_job(&self, job_id: u32, caller: &str) -> Result<FedJob, FedError> {
        self.fed_tx(|c| {
            let federation = view::federated_cluster(c, caller)?.federation;
            job_rows::get(c, &federation, job_id)?
                .map(FedJobRow::into_job)
                .ok_or(FedError::InvalidJobId { job_id })
        })
    }
}

/// The clusters that take part in `job` while it is live.
fn involved(job: &FedJob) -> BTreeSet<String> {
    if job.phase.is_terminal() {
        return BTreeSet::new();
    }
    let mut all = job.active.clone();
    all.insert(job.origin.clone());
    all.extend(job.winner.clone());
    all.extend(job.lock.as_ref().map(|l| l.cluster.clone()));
    all
}

/// Finishes draining `clusters` if they are draining and now idle; returns how many changed.
fn settle_some(
    c: &mut AnyConnection,
    clusters: &BTreeSet<String>,
    now: i64,
) -> Result<usize, FedError> {
    if clusters.is_empty() {
        return Ok(0);
    }
    Ok(settle::settle(c, Some(clusters), now)?.len())
}
