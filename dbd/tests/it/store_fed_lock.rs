//! The start lock on every backend: exclusivity, lease expiry in simulated time, lost-lock
//! commits, revocation on commit, release, a restarted controller, the one-step start (lock and
//! commit together, as controllers start jobs) alone, carrying the origin's offer, and grouped
//! with other writes, and the
//! invariant that a federated job is committed as started at most once under concurrent
//! requests from several connections (as several dbds over one database).

use crate::common;
use crate::store_fed_support;

per_backend!(
    the_lock_is_exclusive_until_its_lease_expires,
    a_commit_after_the_lease_expired_is_refused,
    commit_revokes_the_other_siblings_and_tells_the_origin,
    the_origin_starting_revokes_the_siblings_only,
    release_frees_the_lock_for_others,
    a_restarted_controller_releases_its_locks,
    lease_bounds_are_checked,
    a_job_starts_at_most_once_under_concurrency,
    a_one_step_start_commits_revokes_and_answers_a_repeat,
    a_one_step_start_is_refused_as_a_lock_is,
    an_origin_starting_its_unoffered_job_offers_it_to_nobody,
    grouped_starts_and_ends_are_answered_as_alone,
);

mod cases {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Barrier};

    use sluice_dbd::store::fed::error::FedError;
    use sluice_dbd::store::fed::types::*;
    use sluice_dbd::store::*;

    use super::common::TestDb;
    use super::store_fed_support::*;

    fn granted(store: &Store, job: u32, cluster: &str, lease: u32, now: i64) -> (u64, i64) {
        match store
            .fed_acquire_start_lock(job, cluster, lease, now)
            .unwrap()
        {
            LockOutcome::Granted { token, expires } => (token, expires),
            LockOutcome::Refused { reason } => panic!("{cluster} refused: {reason:?}"),
        }
    }

    fn refusal(store: &Store, job: u32, cluster: &str, now: i64) -> LockRefusal {
        match store
            .fed_acquire_start_lock(job, cluster, LEASE, now)
            .unwrap()
        {
            LockOutcome::Refused { reason } => reason,
            LockOutcome::Granted { .. } => panic!("{cluster} granted"),
        }
    }

    pub fn the_lock_is_exclusive_until_its_lease_expires(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let (token, expires) = granted(&store, j, "b", 30, NOW);
        assert_eq!(expires, NOW + 30);
        let held = LockRefusal::HeldBy {
            cluster: "b".into(),
            expires: NOW + 30,
        };
        assert_eq!(refusal(&store, j, "c", NOW + 29), held);
        assert_eq!(refusal(&store, j, "a", NOW), held);
        // The holder asking again renews its lease under a new token; the old one is void.
        let (renewed, expires) = granted(&store, j, "b", 30, NOW + 29);
        assert_ne!(renewed, token);
        assert_eq!(expires, NOW + 59);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 30).unwrap(),
            Err(LockRefusal::LostLock)
        );
        assert_eq!(
            refusal(&store, j, "c", NOW + 58),
            LockRefusal::HeldBy {
                cluster: "b".into(),
                expires: NOW + 59
            }
        );
        let token = renewed;
        // Expired: another cluster takes it with a new token; the old holder lost it.
        let (taken, _) = granted(&store, j, "c", 30, NOW + 59);
        assert_ne!(taken, token);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 60).unwrap(),
            Err(LockRefusal::LostLock)
        );
        let job = store
            .fed_commit_start(j, "c", taken, NOW + 60)
            .unwrap()
            .unwrap();
        assert_eq!(
            (job.phase, job.winner.as_deref(), job.start_time),
            (FedPhase::Started, Some("c"), NOW + 60)
        );
    }

    pub fn a_commit_after_the_lease_expired_is_refused(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let (token, _) = granted(&store, j, "b", 10, NOW);
        // Nobody took it, but the lease ran out: the holder must not launch.
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 10).unwrap(),
            Err(LockRefusal::LostLock)
        );
        assert_eq!(store.fed_job(j, "a").unwrap().phase, FedPhase::Pending);
        // A wrong token is refused too.
        let (fresh, _) = granted(&store, j, "b", 10, NOW + 11);
        assert_ne!(fresh, token);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 12).unwrap(),
            Err(LockRefusal::LostLock)
        );
        assert_eq!(
            store.fed_commit_start(j, "c", fresh, NOW + 12).unwrap(),
            Err(LockRefusal::LostLock)
        );
        store
            .fed_commit_start(j, "b", fresh, NOW + 12)
            .unwrap()
            .unwrap();
    }

    /// `c` started `j`, a job of origin `a` offered to `b` and `c`: `b` is revoked, `a` told,
    /// `c` (which made the change) told nothing.
    fn assert_told_c_started(store: &Store, j: u32) {
        assert_eq!(take(store, "b"), vec![revoked(j, Some("c"))]);
        assert_eq!(
            take(store, "a"),
            vec![FedEventKind::JobStartedElsewhere {
                job_id: j,
                cluster: "c".into()
            }]
        );
        assert!(take(store, "c").is_empty());
    }

    pub fn commit_revokes_the_other_siblings_and_tells_the_origin(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let (token, _) = granted(&store, j, "c", LEASE, NOW);
        let job = store.fed_commit_start(j, "c", token, NOW).unwrap().unwrap();
        assert_eq!(job.active, set(&["c"]));
        assert_told_c_started(&store, j);
        // A retried commit (its reply was lost) is accepted again, with no new events.
        let again = store
            .fed_commit_start(j, "c", token, NOW + 1)
            .unwrap()
            .unwrap();
        assert_eq!(again.start_time, NOW);
        for c in ["a", "b", "c"] {
            assert!(take(&store, c).is_empty(), "{c}");
        }
        // Nobody else can lock or commit it any more.
        assert_eq!(refusal(&store, j, "b", NOW + 100), LockRefusal::NotPending);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 100).unwrap(),
            Err(LockRefusal::NotPending)
        );
    }

    pub fn the_origin_starting_revokes_the_siblings_only(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        start_on(&store, j, "a", NOW);
        assert_eq!(take(&store, "b"), vec![revoked(j, Some("a"))]);
        assert_eq!(take(&store, "c"), vec![revoked(j, Some("a"))]);
        assert!(take(&store, "a").is_empty());
    }

    pub fn release_frees_the_lock_for_others(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        let (token, _) = granted(&store, j, "b", LEASE, NOW);
        assert!(
            !store
                .fed_release_start_lock(j, "b", token + 1000, NOW)
                .unwrap()
        );
        assert!(!store.fed_release_start_lock(j, "c", token, NOW).unwrap());
        assert!(store.fed_release_start_lock(j, "b", token, NOW).unwrap());
        assert!(
            !store.fed_release_start_lock(j, "b", token, NOW).unwrap(),
            "released once"
        );
        granted(&store, j, "c", LEASE, NOW + 1);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 1).unwrap(),
            Err(LockRefusal::LostLock)
        );
    }

    pub fn a_restarted_controller_releases_its_locks(db: &TestDb) {
        let store = federation(db);
        let reg = |start_time| Registration {
            cluster: "b".into(),
            control_host: "hostb".into(),
            control_port: 6817,
            rpc_version: 1,
            start_time,
        };
        store.fed_register(&reg(100), NOW).unwrap();
        let j = submit(&store, request("a", 1, 1)).job_id;
        let (token, _) = granted(&store, j, "b", LEASE, NOW);
        // The same process registering again keeps its locks.
        store.fed_register(&reg(100), NOW + 1).unwrap();
        assert!(matches!(
            refusal(&store, j, "c", NOW + 1),
            LockRefusal::HeldBy { .. }
        ));
        // A new process: its predecessor's locks go at once.
        store.fed_register(&reg(200), NOW + 2).unwrap();
        assert_eq!(store.fed_job(j, "a").unwrap().lock, None);
        assert_eq!(
            store.fed_commit_start(j, "b", token, NOW + 2).unwrap(),
            Err(LockRefusal::LostLock)
        );
        granted(&store, j, "c", LEASE, NOW + 2);
    }

    pub fn lease_bounds_are_checked(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        for secs in [0, 3_601] {
            let e = store.fed_acquire_start_lock(j, "b", secs, NOW).unwrap_err();
            assert!(matches!(e, FedError::InvalidLease { .. }), "{e:?}");
        }
        let e = store
            .fed_acquire_start_lock(id(1, 99), "b", LEASE, NOW)
            .unwrap_err();
        assert_eq!(e.to_string(), "Invalid job id specified");
    }

    pub fn a_one_step_start_commits_revokes_and_answers_a_repeat(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        let job = store.fed_start(j, "c", NOW).unwrap().unwrap();
        assert_eq!(
            (job.phase, job.winner.as_deref(), job.start_time),
            (FedPhase::Started, Some("c"), NOW)
        );
        assert_eq!(job.active, set(&["c"]));
        assert_told_c_started(&store, j);
        // Asked again (the answer was lost, or a restart forgot it): started, nothing new.
        let again = store.fed_start(j, "c", NOW + 5).unwrap().unwrap();
        assert_eq!(again.start_time, NOW);
        for c in ["a", "b", "c"] {
            assert!(take(&store, c).is_empty(), "{c}");
        }
        // Nobody else starts it, in one step or two.
        assert_eq!(
            store.fed_start(j, "b", NOW + 6).unwrap(),
            Err(LockRefusal::NotPending)
        );
        assert_eq!(refusal(&store, j, "a", NOW + 6), LockRefusal::NotPending);
        // Once it ended, a late repeat from the winner is refused: nothing runs it again.
        store
            .fed_job_ended(
                j,
                "c",
                sluice_vocab::JobState::Completed.stored(),
                0,
                RequeueMode::None,
                NOW + 7,
            )
            .unwrap();
        assert_eq!(
            store.fed_start(j, "c", NOW + 8).unwrap(),
            Err(LockRefusal::NotPending)
        );
    }

    pub fn a_one_step_start_is_refused_as_a_lock_is(db: &TestDb) {
        let store = federation(db);
        let j = submit(&store, request("a", 1, 1)).job_id;
        flush(&store);
        // Another cluster's live two-step lock: refused, and its commit still goes through.
        let (token, _) = granted(&store, j, "b", LEASE, NOW);
        assert_eq!(
            store.fed_start(j, "c", NOW + 1).unwrap(),
            Err(LockRefusal::HeldBy {
                cluster: "b".into(),
                expires: NOW + i64::from(LEASE)
            })
        );
        assert_eq!(store.fed_job(j, "a").unwrap().phase, FedPhase::Pending);
        store
            .fed_commit_start(j, "b", token, NOW + 2)
            .unwrap()
            .unwrap();
        // A held job starts nowhere; a cluster without a copy does not start it.
        let held = submit(
            &store,
            SubmitFedJob {
                held: true,
                ..request("a", 1, 2)
            },
        )
        .job_id;
        assert_eq!(
            store.fed_start(held, "a", NOW).unwrap(),
            Err(LockRefusal::Held)
        );
        assert_eq!(
            store.fed_start(held, "b", NOW).unwrap(),
            Err(LockRefusal::NotActiveHere)
        );
        let e = store.fed_start(id(1, 99), "b", NOW).unwrap_err();
        assert_eq!(e.to_string(), "Invalid job id specified");
        // The refusals changed nothing: the origin still starts it once it is offered.
        store.fed_offer(held, "a", None, NOW + 1).unwrap();
        store.fed_start(held, "a", NOW + 2).unwrap().unwrap();
    }

    pub fn an_origin_starting_its_unoffered_job_offers_it_to_nobody(db: &TestDb) {
        let store = federation(db);
        let held = |local| SubmitFedJob {
            held: true,
            ..request("a", 1, local)
        };
        let j = submit(&store, held(1)).job_id;
        flush(&store);
        let job = store
            .fed_start_offering(j, "a", b"new".to_vec(), NOW)
            .unwrap()
            .unwrap();
        assert_eq!(
            (job.phase, job.winner.as_deref(), job.held),
            (FedPhase::Started, Some("a"), false)
        );
        assert_eq!((job.active, job.desc), (set(&["a"]), b"new".to_vec()));
        // Never offered, so no sibling has a copy to revoke: nobody hears of it.
        for c in ["a", "b", "c"] {
            assert!(take(&store, c).is_empty(), "{c}");
        }
        // Asked again (the answer was lost): started, nothing new; no sibling starts it.
        let again = store.fed_start_offering(j, "a", b"new".to_vec(), NOW + 1);
        assert_eq!(again.unwrap().unwrap().start_time, NOW);
        assert_eq!(
            store.fed_start(j, "b", NOW + 2).unwrap(),
            Err(LockRefusal::NotPending)
        );
        // Only the origin offers: a sibling's request is refused and changes nothing.
        let k = submit(&store, held(2)).job_id;
        flush(&store);
        let e = store
            .fed_start_offering(k, "b", b"x".to_vec(), NOW)
            .unwrap_err();
        assert!(matches!(e, FedError::NotOrigin { .. }), "{e:?}");
        // An origin that may not run it (-M b,c) is refused, and the refusal undid the offer:
        // the job is still held, offered to nobody, and the origin offers it on its own.
        let elsewhere = submit(
            &store,
            SubmitFedJob {
                req_clusters: "b,c".into(),
                ..held(3)
            },
        )
        .job_id;
        flush(&store);
        assert_eq!(
            store
                .fed_start_offering(elsewhere, "a", b"y".to_vec(), NOW)
                .unwrap(),
            Err(LockRefusal::NotActiveHere)
        );
        let kept = store.fed_job(elsewhere, "a").unwrap();
        assert!(kept.held && kept.active.is_empty(), "{kept:?}");
        assert_ne!(kept.desc, b"y".to_vec());
        for c in ["b", "c"] {
            assert!(take(&store, c).is_empty(), "{c}");
        }
        store.fed_offer(elsewhere, "a", None, NOW + 1).unwrap();
        assert_eq!(take(&store, "b").len(), 1);
        // A job that ended is refused, not started again.
        store
            .fed_job_ended(
                j,
                "a",
                sluice_vocab::JobState::Completed.stored(),
                0,
                RequeueMode::None,
                NOW + 3,
            )
            .unwrap();
        assert_eq!(
            store
                .fed_start_offering(j, "a", b"new".to_vec(), NOW + 4)
                .unwrap(),
            Err(LockRefusal::NotPending)
        );
    }

    pub fn grouped_starts_and_ends_are_answered_as_alone(db: &TestDb) {
        use sluice_dbd::store::fed::group::{FedWrite, RunEnd};
        let store = federation(db);
        let a = submit(&store, request("a", 1, 1)).job_id;
        let b = submit(&store, request("a", 1, 2)).job_id;
        start_on(&store, b, "b", NOW);
        flush(&store);
        let start = |job_id, caller: &str| FedWrite::Start {
            job_id,
            caller: caller.into(),
            offer: None,
        };
        let completed = RunEnd {
            state: sluice_vocab::JobState::Completed.stored(),
            exit_code: 0,
            requeue: RequeueMode::None,
        };
        let answers = store.fed_write_group(
            &[
                start(a, "c"),
                // Lost to the start before it in the same group.
                start(a, "b"),
                FedWrite::Ended {
                    job_id: b,
                    caller: "b".into(),
                    end: completed,
                },
                // Not the cluster it ran on.
                FedWrite::Ended {
                    job_id: b,
                    caller: "c".into(),
                    end: completed,
                },
            ],
            NOW + 1,
        );
        let [won, lost, ended, wrong] = answers.as_slice() else {
            panic!("{answers:?}");
        };
        assert_eq!(won.as_ref().unwrap().winner.as_deref(), Some("c"));
        assert!(
            matches!(
                lost,
                Err(FedError::StartRefused {
                    refusal: LockRefusal::NotPending,
                    ..
                })
            ),
            "{lost:?}"
        );
        assert_eq!(ended.as_ref().unwrap().phase, FedPhase::Ended);
        assert!(
            matches!(wrong, Err(FedError::NotRunningHere { .. })),
            "{wrong:?}"
        );
        assert_eq!(store.fed_job(a, "a").unwrap().winner.as_deref(), Some("c"));
        assert_eq!(store.fed_job(b, "a").unwrap().phase, FedPhase::Ended);
        // The origin heard of both, once each.
        assert_eq!(take(&store, "a").len(), 2);
    }

    /// Jobs raced for by every worker.
    const JOBS: u32 = 24;
    /// Workers per cluster, each with its own connection.
    const WORKERS_PER_CLUSTER: usize = 2;

    pub fn a_job_starts_at_most_once_under_concurrency(db: &TestDb) {
        let store = federation(db);
        let jobs: Vec<u32> = (1..=JOBS)
            .map(|i| submit(&store, request("a", 1, i)).job_id)
            .collect();
        flush(&store);
        let workers: Vec<(String, usize)> = ["a", "b", "c"]
            .iter()
            .flat_map(|c| (0..WORKERS_PER_CLUSTER).map(move |w| (c.to_string(), w)))
            .collect();
        let barrier = Arc::new(Barrier::new(workers.len()));
        let handles: Vec<_> = workers
            .into_iter()
            .map(|(cluster, w)| {
                let (url, barrier, jobs) = (db.url.clone(), Arc::clone(&barrier), jobs.clone());
                std::thread::spawn(move || {
                    let store = Store::connect(&url).unwrap();
                    barrier.wait();
                    race(&store, &cluster, w, &jobs)
                })
            })
            .collect();
        let mut starts: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        let mut lost_locks = 0;
        for h in handles {
            let (won, lost) = h.join().unwrap();
            lost_locks += lost;
            for (job, cluster) in won {
                starts.entry(job).or_default().push(cluster);
            }
        }
        // The race really raced: some commits came after their lease was taken or ran out.
        assert!(lost_locks > 0, "no commit was refused");
        for j in &jobs {
            let winners = starts.get(j).cloned().unwrap_or_default();
            assert_eq!(winners.len(), 1, "job {j} committed by {winners:?}");
            let job = store.fed_job(*j, "a").unwrap();
            assert_eq!(
                (job.phase, job.winner.as_ref()),
                (FedPhase::Started, Some(&winners[0]))
            );
        }
        // Every cluster that lost a job was revoked exactly once for it; the origin heard of
        // every start elsewhere exactly once.
        for c in ["b", "c"] {
            let revoked: Vec<u32> = take(&store, c).iter().map(FedEventKind::job_id).collect();
            let lost: Vec<u32> = jobs.iter().copied().filter(|j| starts[j][0] != c).collect();
            assert_eq!(
                revoked.len(),
                lost.len(),
                "{c}: one revocation per lost job"
            );
            assert_eq!(sorted(revoked), lost, "{c}");
        }
        let elsewhere = take(&store, "a");
        assert_eq!(
            elsewhere.len(),
            jobs.iter().filter(|j| starts[j][0] != "a").count()
        );
    }

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v.dedup();
        v
    }

    /// One worker: tries every job until each is started elsewhere or here, with its own clock
    /// running ahead by its index (so leases lapse between another worker's acquire and
    /// commit), committing late now and then and releasing some locks instead of committing.
    /// Returns the jobs it committed and how many of its commits were refused as lost.
    fn race(
        store: &Store,
        cluster: &str,
        worker: usize,
        jobs: &[u32],
    ) -> (Vec<(u32, String)>, usize) {
        let mut won = Vec::new();
        let mut lost = 0;
        let skew = i64::try_from(worker).unwrap() * 2;
        let mut open: Vec<u32> = jobs.to_vec();
        let mut round = 0_usize;
        while !open.is_empty() && round < 200 * jobs.len() {
            let mut still = Vec::new();
            for j in open {
                round += 1;
                let now = NOW + skew + i64::try_from(round).unwrap();
                match store.fed_acquire_start_lock(j, cluster, 1, now).unwrap() {
                    LockOutcome::Granted { token, .. } => {
                        if (round + worker).is_multiple_of(5) {
                            store
                                .fed_release_start_lock(j, cluster, token, now)
                                .unwrap();
                            still.push(j);
                            continue;
                        }
                        // Every seventh commit comes after the lease ran out.
                        let at = now + i64::from((round + worker).is_multiple_of(7));
                        match store.fed_commit_start(j, cluster, token, at).unwrap() {
                            Ok(_) => won.push((j, cluster.to_string())),
                            Err(LockRefusal::NotPending) => {}
                            Err(_) => {
                                lost += 1;
                                still.push(j);
                            }
                        }
                    }
                    LockOutcome::Refused {
                        reason: LockRefusal::NotPending,
                    } => {}
                    LockOutcome::Refused { .. } => still.push(j),
                }
            }
            open = still;
        }
        (won, lost)
    }
}
