//! The controller's programs, decided by the core in simulated time: `PrologSlurmctld` holds a
//! job's launch (CONFIGURING) until the runtime reports it succeeded; when it fails a batch job
//! is requeued (not held) and any other job cancelled; one cut short by a controller restart
//! runs again. `EpilogSlurmctld` is asked for after every run that started, with the job's exit
//! code.

use std::path::Path;

use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::{
    Core, JobReason, RecordingOutbox, ScriptContext, ScriptRun, SimTime, SubmitRequest,
    on_prolog_slurmctld_done,
};
use sluice_ctld::store::StateStore;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};

fn cluster(extra: &str) -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SlurmdTimeout=0")
        .conf(extra)
        .build();
    fx.register_all();
    fx.now = SimTime::from_secs(1_000);
    fx
}

fn var<'a>(run: &'a ScriptRun, name: &str) -> Option<&'a str> {
    run.env
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn scripts(out: &RecordingOutbox, context: ScriptContext) -> Vec<ScriptRun> {
    out.scripts
        .iter()
        .filter(|s| s.context == context)
        .cloned()
        .collect()
}

fn prolog_done(fx: &mut CoreFixture, id: FedJobId, run: u32, ok: bool) {
    on_prolog_slurmctld_done(&mut fx.core, &mut fx.out, fx.now, id, run, ok);
}

#[test]
fn epilog_slurmctld_runs_after_each_run_with_the_exit_code() {
    let mut fx = cluster("EpilogSlurmctld=/etc/epilog_ctld");
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b"));
    assert!(fx.out.take().scripts.is_empty(), "nothing at the start");
    fx.exit(id, 3).unwrap();
    let runs = scripts(&fx.out.take(), ScriptContext::EpilogSlurmctld);
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        (run.job, run.program.to_str()),
        (id, Some("/etc/epilog_ctld"))
    );
    assert_eq!(var(run, "SLURM_JOB_ID"), Some(id.to_string().as_str()));
    assert_eq!(var(run, "SLURM_JOB_UID"), Some("1000"));
    assert_eq!(var(run, "SLURM_JOB_EXIT_CODE"), Some("768"));
    assert_eq!(var(run, "SLURM_JOB_EXIT_CODE2"), Some("3:0"));
    assert_eq!(var(run, "SLURM_JOB_NODELIST"), Some("n1"));
    assert_eq!(var(run, "SLURM_JOB_PARTITION"), Some("debug"));
    assert_eq!(var(run, "SLURM_SCRIPT_CONTEXT"), Some("epilog_slurmctld"));

    let mut req = SubmitRequest::new(1000, "never");
    req.hold = true;
    let pending = fx.submit(req).unwrap();
    fx.cancel(sluice_ctld::core::Caller::admin(), pending, None)
        .unwrap();
    assert!(fx.out.take().scripts.is_empty(), "a job that never ran");
}

#[test]
fn prolog_slurmctld_holds_the_launch_until_it_succeeds() {
    let mut fx = cluster("PrologSlurmctld=/etc/prolog_ctld");
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b"));
    assert_eq!(fx.state(id), JobState::Running);
    let out = fx.out.take();
    assert!(out.launched().is_empty(), "held while the prolog runs");
    let runs = scripts(&out, ScriptContext::PrologSlurmctld);
    assert_eq!(runs.len(), 1);
    assert_eq!(
        var(&runs[0], "SLURM_SCRIPT_CONTEXT"),
        Some("prolog_slurmctld")
    );
    assert_eq!(var(&runs[0], "SLURM_JOB_EXIT_CODE"), None);
    assert_eq!(runs[0].run, 0);
    fx.advance(7);
    fx.tick();
    assert!(fx.out.take().launched().is_empty(), "still held");
    prolog_done(&mut fx, id, 0, true);
    assert_eq!(fx.out.take().launched(), [id]);
    let job = fx.core.job(id).unwrap();
    assert_eq!(job.start_time, Some(fx.now), "the run starts once launched");
}

#[test]
fn a_failed_prolog_slurmctld_requeues_a_batch_job_and_cancels_others() {
    let mut fx = cluster("PrologSlurmctld=/etc/prolog_ctld");
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b"));
    let kept = fx.submit_and_schedule(SubmitRequest::new(1000, "k").no_requeue());
    fx.out.take();
    prolog_done(&mut fx, id, 0, false);
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(fx.reason(id), JobReason::None, "requeued, not held");
    assert!(fx.core.job(id).unwrap().hold.is_none());
    assert!(fx.out.take().launched().is_empty());
    prolog_done(&mut fx, kept, 0, false);
    assert_eq!(fx.state(kept), JobState::Cancelled);
    // Its nodes are free at once: the requeued job starts again, with a new prolog.
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
    let runs = scripts(&fx.out.take(), ScriptContext::PrologSlurmctld);
    assert_eq!(runs.iter().map(|r| r.run).collect::<Vec<_>>(), [1]);
    prolog_done(&mut fx, id, 0, true);
    assert!(
        fx.out.take().launched().is_empty(),
        "a report of the old run"
    );
    prolog_done(&mut fx, id, 1, true);
    assert_eq!(fx.out.take().launched(), [id]);
}

#[test]
fn a_prolog_ending_after_the_job_was_cancelled_changes_nothing() {
    let mut fx = cluster("PrologSlurmctld=/etc/prolog_ctld");
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b"));
    fx.cancel(sluice_ctld::core::Caller::admin(), id, None)
        .unwrap();
    assert_eq!(fx.state(id), JobState::Cancelled);
    fx.out.take();
    prolog_done(&mut fx, id, 0, true);
    let out = fx.out.take();
    assert!(out.launched().is_empty() && out.node_cmds.is_empty());
    assert_eq!(fx.core.node("n1").unwrap().state_name(), "IDLE");
}

/// Commits what `fx` did to `store`.
fn commit(store: &mut StateStore, fx: &mut CoreFixture) {
    let out = fx.out.take();
    store.commit(&fx.core, &out.saves, &out.acct).unwrap();
}

/// The core of `builder`'s configuration, restored from the store in `dir`.
fn restart(builder: &ClusterBuilder, dir: &Path, now: SimTime) -> CoreFixture {
    let snap = StateStore::open(dir).unwrap().load().unwrap();
    let ids = snap.id_lease(None).unwrap();
    let conf = CtldConf::parse(Path::new("slurm.conf"), &builder.text())
        .unwrap()
        .0;
    let core = Core::restore(&conf, snap, Box::new(ids), &|_| None, now).unwrap();
    CoreFixture {
        core,
        out: Default::default(),
        now,
    }
}

#[test]
fn a_prolog_slurmctld_cut_short_by_a_restart_runs_again_and_then_launches() {
    let builder = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("SlurmdTimeout=0")
        .conf("PrologSlurmctld=/etc/prolog_ctld");
    let dir = tempfile::tempdir().unwrap();
    let mut store = StateStore::open(dir.path()).unwrap();
    let mut fx = builder.build();
    fx.register_all();
    let id = fx.submit_and_schedule(SubmitRequest::new(1000, "b"));
    commit(&mut store, &mut fx);
    drop(store);

    let mut back = restart(&builder, dir.path(), fx.now);
    assert_eq!(back.state(id), JobState::Running);
    back.tick();
    let out = back.out.take();
    assert!(out.launched().is_empty(), "still held");
    let runs = scripts(&out, ScriptContext::PrologSlurmctld);
    assert_eq!(
        runs.iter().map(|r| (r.job, r.run)).collect::<Vec<_>>(),
        [(id, 0)]
    );
    back.tick();
    assert!(back.out.take().scripts.is_empty(), "asked for once");
    prolog_done(&mut back, id, 0, true);
    let mut store = StateStore::open(dir.path()).unwrap();
    let out = back.out.clone();
    assert_eq!(out.launched(), [id]);
    commit(&mut store, &mut back);
    drop(store);

    let mut again = restart(&builder, dir.path(), back.now);
    again.tick();
    let out = again.out.take();
    assert!(
        out.scripts.is_empty() && out.launched().is_empty(),
        "done before"
    );
}
