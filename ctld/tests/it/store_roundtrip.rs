//! The state store: commit/reload round trips of jobs in every state and of node states, the
//! core restored from them, the job-id source, and commits that fail.

use crate::store_util;

use rusqlite::Connection;
use sluice_ctld::core::{JobReason, SaveHint};
use sluice_ctld::store::StateStore;
use sluice_vocab::JobState;
use store_util::{cluster, commit, every_state, job, jobs_of, nodes_of, restore};

#[test]
fn every_job_state_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let w = every_state(&mut fx, &mut store);
    let shown = |id| fx.core.job(id).map(|j| (j.state, j.completing, j.reason));
    // The workload did reach every state it names.
    let expect = [
        (w.running, (JobState::Running, false, JobReason::None)),
        (w.suspended, (JobState::Suspended, false, JobReason::None)),
        (w.cancelling, (JobState::Cancelled, true, JobReason::None)),
        (w.requeueing, (JobState::Pending, true, JobReason::None)),
        (w.completed, (JobState::Completed, false, JobReason::None)),
        (
            w.failed,
            (JobState::Failed, false, JobReason::NonZeroExitCode),
        ),
        (
            w.timed_out,
            (JobState::Timeout, false, JobReason::TimeLimit),
        ),
        (
            w.node_failed,
            (JobState::NodeFail, false, JobReason::NodeDown),
        ),
        (
            w.cancelled_pending,
            (JobState::Cancelled, false, JobReason::None),
        ),
        (
            w.held_user,
            (JobState::Pending, false, JobReason::JobHeldUser),
        ),
        (
            w.held_admin,
            (JobState::Pending, false, JobReason::JobHeldAdmin),
        ),
        (
            w.dependent,
            (JobState::Pending, false, JobReason::Dependency),
        ),
        (w.waiting, (JobState::Pending, false, JobReason::Resources)),
    ];
    for (id, want) in expect {
        assert_eq!(shown(id), Some(want), "job {id} before the restart");
    }
    assert_eq!(w.array.len(), 4);
    drop(store);

    let back = restore(dir.path(), fx.now);
    assert_eq!(jobs_of(&back.core), jobs_of(&fx.core));
    assert_eq!(nodes_of(&back.core), nodes_of(&fx.core));
    let pending: Vec<_> = fx.core.pending().collect();
    assert!(pending.len() >= 6, "{pending:?}");
    assert_eq!(back.core.pending().collect::<Vec<_>>(), pending);
    let states: Vec<String> = back.core.nodes().iter().map(|n| n.state_name()).collect();
    assert!(states.contains(&"DOWN".to_string()), "{states:?}");
    assert!(states.contains(&"DRAINING".to_string()), "{states:?}");
    assert_eq!(
        back.core
            .node("n4")
            .and_then(|n| n.reason.clone())
            .as_deref(),
        Some("bad dimm")
    );
}

#[test]
fn the_restored_core_rebuilds_queues_dependencies_and_throttles() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let w = every_state(&mut fx, &mut store);
    let used: Vec<u32> = fx.core.jobs().map(|j| j.id.get()).collect();
    drop(store);
    let mut back = restore(dir.path(), fx.now.plus(5));

    // Array throttle: two tasks run, the others wait for them, with free nodes around.
    back.schedule();
    let count = |core: &sluice_ctld::core::Core, st: JobState| {
        w.array
            .iter()
            .filter(|id| core.job(**id).is_some_and(|j| j.state == st))
            .count()
    };
    assert_eq!(count(&back.core, JobState::Running), 2);
    assert!(
        w.array
            .iter()
            .filter_map(|id| back.core.job(*id))
            .filter(|j| j.state == JobState::Pending)
            .all(|j| j.reason == JobReason::JobArrayTaskLimit)
    );
    // Dependency link: the dependent starts once its target completes.
    assert_eq!(back.state(w.dependent), JobState::Pending);
    back.exit(w.running, 0).unwrap();
    back.schedule();
    assert_eq!(back.state(w.dependent), JobState::Running);
    // Completing jobs hold their nodes until they exit; the requeued one then queues again.
    back.exit(w.cancelling, 0).unwrap();
    back.exit(w.requeueing, 0).unwrap();
    assert_eq!(back.state(w.cancelling), JobState::Cancelled);
    let rq = back.core.job(w.requeueing).unwrap();
    assert_eq!((rq.state, rq.restarts), (JobState::Pending, 1));
    assert!(back.core.pending().any(|id| id == w.requeueing));
    // Job ids are never handed out twice.
    let fresh = back.submit(job("new")).unwrap();
    assert!(used.iter().all(|u| fresh.get() > *u), "{fresh} reissued");
    // MinJobAge still purges the finished ones.
    back.advance(400);
    back.tick();
    assert_eq!(back.state(w.completed), JobState::Revoked);
}

#[test]
fn restore_then_save_everything_is_a_fixed_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    every_state(&mut fx, &mut store);
    drop(store);
    let back = restore(dir.path(), fx.now);
    let mut store = StateStore::open(dir.path()).unwrap();
    let all: Vec<SaveHint> = back.core.jobs().map(|j| SaveHint::Job(j.id)).collect();
    store.commit(&back.core, &all, &[]).unwrap();
    drop(store);
    let again = restore(dir.path(), fx.now);
    assert_eq!(jobs_of(&again.core), jobs_of(&fx.core));
}

#[test]
fn purged_jobs_leave_the_store_with_their_launch_specs() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    let a = fx.submit(job("a")).unwrap();
    let arr = fx.submit(job("arr").array("0-2")).unwrap();
    fx.schedule();
    commit(&mut store, &mut fx);
    let db = Connection::open(StateStore::file(dir.path())).unwrap();
    let count = |sql: &str| db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT COUNT(*) FROM jobs"), 4);
    assert_eq!(
        count("SELECT COUNT(*) FROM launch"),
        2,
        "one spec per array"
    );
    let ids: Vec<_> = fx.core.jobs().map(|j| j.id).collect();
    for id in ids {
        fx.exit(id, 0).unwrap();
    }
    fx.advance(301);
    fx.tick();
    commit(&mut store, &mut fx);
    assert_eq!(fx.state(a), JobState::Revoked);
    assert_eq!(fx.state(arr), JobState::Revoked);
    assert_eq!(count("SELECT COUNT(*) FROM jobs"), 0);
    assert_eq!(count("SELECT COUNT(*) FROM launch"), 0);
    assert!(store.load().unwrap().jobs.is_empty());
}

#[test]
fn a_failed_commit_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    fx.submit(job("first")).unwrap();
    commit(&mut store, &mut fx);
    let before = store.load().unwrap();
    let seq = store.next_seq();
    // Another connection makes the next job insert fail, after the records were written.
    let db = Connection::open(StateStore::file(dir.path())).unwrap();
    db.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.id = 2 \
         BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    )
    .unwrap();
    let second = fx.submit(job("second")).unwrap();
    assert_eq!(second.get(), 2);
    let out = fx.out.take();
    assert!(!out.acct.is_empty());
    let err = store.commit(&fx.core, &out.saves, &out.acct).unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    let after = store.load().unwrap();
    assert_eq!(after.jobs, before.jobs);
    assert_eq!(after.job_ids, before.job_ids);
    assert_eq!(store.next_seq(), seq);
    assert_eq!(store.outbox_len().unwrap(), 1);
    // Once the cause is gone the same batch commits, numbered right after the last one.
    db.execute_batch("DROP TRIGGER refuse;").unwrap();
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
    assert_eq!(store.next_seq(), seq + out.acct.len() as u64);
    let seqs: Vec<i64> = db
        .prepare("SELECT seq FROM acct_outbox ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
    assert_eq!(store.load().unwrap().jobs.len(), 2);
}

#[test]
fn the_id_source_is_saved_with_the_jobs_using_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    assert_eq!(store.load().unwrap().job_ids, None, "a new store has none");
    let mut fx = cluster();
    for _ in 0..3 {
        fx.submit(job("x")).unwrap();
    }
    commit(&mut store, &mut fx);
    let snap = store.load().unwrap();
    assert_eq!(snap.cluster.as_deref(), Some("test"));
    let ranges = snap.job_ids.clone().unwrap();
    assert_eq!(ranges.first().map(|r| r.0), Some(4), "{ranges:?}");
}

#[test]
fn the_dbds_associations_users_and_qos_are_saved_once_changed_and_loaded_back() {
    use sluice_ctld::core::assoc::{self, AssocRecord, AssocTable, cache};
    use sluice_ctld::core::qos::{self, QosTable};
    use sluice_vocab::assoc_limits::{AssocLimits, Tres};
    use sluice_vocab::qos::{Qos, QosLimits};
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = cluster();
    commit(&mut store, &mut fx);
    assert_eq!(store.load_dbd_cache().unwrap(), None, "nothing listed yet");
    let limits = AssocLimits {
        max_jobs: Some(2),
        grp_tres_mins: Tres {
            cpu: Some(600),
            ..Tres::default()
        },
        ..AssocLimits::default()
    };
    let records = vec![
        AssocRecord {
            account: "phys".into(),
            user: "alice".into(),
            parent_account: String::new(),
            limits,
            qos: vec!["high".into(), "normal".into()],
            default_qos: "high".into(),
        },
        AssocRecord {
            account: "phys".into(),
            user: String::new(),
            parent_account: "root".into(),
            limits: AssocLimits::default(),
            qos: Vec::new(),
            default_qos: String::new(),
        },
    ];
    let users = vec![cache::DbdUser {
        name: "alice".into(),
        admin_level: "None".into(),
        default_account: "phys".into(),
        coord_accounts: vec!["phys".into()],
    }];
    let high = Qos {
        name: "high".into(),
        priority: 100,
        limits: QosLimits {
            max_jobs_per_user: Some(1),
            ..QosLimits::default()
        },
        ..Qos::default()
    };
    let normal = Qos {
        name: "normal".into(),
        ..Qos::default()
    };
    assoc::set(&mut fx.core, AssocTable::new(records.clone()));
    assoc::set_users(&mut fx.core, users.clone());
    qos::set(&mut fx.core, QosTable::new([normal.clone()]));
    // The lists are saved with the next commit, whatever else it holds.
    commit(&mut store, &mut fx);
    let saved = store.load_dbd_cache().unwrap().expect("saved");
    assert_eq!(saved.users, users);
    let mut want = records;
    want.sort_by(|a, b| (&a.account, &a.user).cmp(&(&b.account, &b.user)));
    assert_eq!(saved.assocs, want);
    assert_eq!(saved.qos, vec![normal.clone()]);
    // A change of the QOS alone is saved with the next commit too.
    qos::set(&mut fx.core, QosTable::new([normal.clone(), high.clone()]));
    commit(&mut store, &mut fx);
    let saved = store.load_dbd_cache().unwrap().expect("saved");
    assert_eq!(saved.qos, vec![high, normal]);
    // A restarted core takes them back and enforces them before the dbd answers.
    let mut again = cluster();
    cache::restore(&mut again.core, saved.clone());
    assert_eq!(cache::snapshot(&again.core), Some(saved));
    assert_eq!(cache::users(&again.core), users.as_slice());
    assert_eq!(
        assoc::table(&again.core)
            .and_then(|t| t.get("phys", "alice"))
            .map(|r| r.limits.max_jobs),
        Some(Some(2))
    );
    let kept = qos::table(&again.core).and_then(|t| t.get("high"));
    assert_eq!(
        kept.map(|q| (q.priority, q.limits.max_jobs_per_user)),
        Some((100, Some(1)))
    );
    assert_eq!(
        assoc::table(&again.core)
            .and_then(|t| t.get("phys", "alice"))
            .map(|r| r.default_qos.as_str()),
        Some("high")
    );
}
