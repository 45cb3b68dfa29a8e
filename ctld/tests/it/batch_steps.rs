//! The batch step (`123.batch`) for sacct: recorded in the same outbox batch as the change that
//! ended the script, with the script's exit, the run's start and the batch host; a killed job's
//! batch step ends when its script does, and a requeued run keeps its own run number.

use sluice_ctld::core::completion::BATCH_STEP;
use sluice_ctld::core::{
    AcctRecord, Caller, CancelRequest, JobExit, JobRef, SimTime, SubmitRequest, on_cancel,
    on_job_exited, on_requeue,
};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::{FedJobId, JobState};
use sluice_wire::jobacct::StepUsageWire;

fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 RealMemory=1000")
        .partition("debug", "Nodes=ALL Default=YES")
        .conf("KillWait=30")
        .conf("MinJobAge=300")
        .conf("SlurmdTimeout=0")
        .build();
    fx.register_all();
    fx.now = SimTime::from_secs(1_000);
    fx
}

/// `(run, state, start, end, exit, signal, node_list, cpus)` of the batch steps recorded.
type StepView = (u32, JobState, u64, Option<u64>, i32, i32, String, u32);

fn batch_steps(records: &[AcctRecord]) -> Vec<StepView> {
    records
        .iter()
        .filter_map(|r| match r {
            AcctRecord::Step {
                run,
                step,
                name,
                start,
                end,
                state,
                exit_code,
                signal,
                node_list,
                node_count,
                ntasks,
                cpus,
                ..
            } if *step == BATCH_STEP => {
                assert_eq!((name.as_str(), *node_count, *ntasks), ("batch", 1, 1));
                Some((
                    *run,
                    *state,
                    start.secs(),
                    end.map(SimTime::secs),
                    *exit_code,
                    *signal,
                    node_list.clone(),
                    *cpus,
                ))
            }
            _ => None,
        })
        .collect()
}

fn started(fx: &mut CoreFixture, nodes: u32) -> FedJobId {
    let mut req = SubmitRequest::new(1000, "b");
    req.min_nodes = Some(nodes);
    let id = fx.submit(req).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
    fx.out.take();
    id
}

fn exit(fx: &mut CoreFixture, id: FedJobId, code: i32, signal: i32) {
    let exit = JobExit {
        job: id,
        exit_code: code,
        signal,
        usage: None,
        from: fx.batch_report(id),
        failed: None,
    };
    on_job_exited(&mut fx.core, &mut fx.out, fx.now, exit).unwrap();
}

#[test]
fn a_finished_script_records_its_batch_step_with_the_runs_end() {
    let mut fx = cluster();
    let id = started(&mut fx, 2);
    fx.advance(60);
    exit(&mut fx, id, 3, 0);
    let out = fx.out.take();
    assert_eq!(
        batch_steps(&out.acct),
        [(
            0,
            JobState::Failed,
            1_000,
            Some(1_060),
            3,
            0,
            "n1".to_string(),
            4
        )]
    );
    // In the same batch as the run's end, just before it.
    let at = |want: fn(&AcctRecord) -> bool| out.acct.iter().position(want).unwrap();
    let step = at(|r| matches!(r, AcctRecord::Step { .. }));
    let ended = at(|r| matches!(r, AcctRecord::JobEnded { .. }));
    assert_eq!(step + 1, ended);
}

#[test]
fn a_cancelled_jobs_batch_step_ends_when_its_script_does() {
    let mut fx = cluster();
    let id = started(&mut fx, 1);
    fx.advance(10);
    let req = CancelRequest {
        job: JobRef::Job(id),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, Caller::user(1000), req).unwrap();
    assert!(batch_steps(&fx.out.take().acct).is_empty(), "still running");
    fx.advance(2);
    exit(&mut fx, id, 0, 15);
    assert_eq!(
        batch_steps(&fx.out.take().acct),
        [(
            0,
            JobState::Cancelled,
            1_000,
            Some(1_012),
            0,
            15,
            "n1".to_string(),
            4
        )]
    );
}

#[test]
fn a_requeued_runs_batch_step_keeps_the_runs_number() {
    let mut fx = cluster();
    let id = started(&mut fx, 1);
    on_requeue(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::admin(),
        JobRef::Job(id),
    )
    .unwrap();
    fx.out.take();
    fx.advance(5);
    exit(&mut fx, id, 0, 15);
    let steps = batch_steps(&fx.out.take().acct);
    assert_eq!(steps.len(), 1);
    assert_eq!((steps[0].0, steps[0].1), (0, JobState::Cancelled));
    // The next run's script ends as run 1.
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
    fx.exit(id, 0).unwrap();
    let steps = batch_steps(&fx.out.take().acct);
    assert_eq!((steps[0].0, steps[0].1), (1, JobState::Completed));
}

#[test]
fn the_scripts_usage_goes_with_its_batch_step() {
    use sluice_vocab::jobacct::{StepUsage, TaskUsage};
    let mut fx = cluster();
    let id = started(&mut fx, 1);
    fx.advance(5);
    let used = StepUsage::from_tasks(&[TaskUsage {
        user_ms: 1_500,
        rss: 1 << 20,
        ..Default::default()
    }]);
    let exit = JobExit {
        job: id,
        exit_code: 0,
        signal: 0,
        usage: used.clone(),
        from: fx.batch_report(id),
        failed: None,
    };
    on_job_exited(&mut fx.core, &mut fx.out, fx.now, exit).unwrap();
    let out = fx.out.take();
    let usage = out.acct.iter().find_map(|r| match r {
        AcctRecord::Step { step, usage, .. } if *step == BATCH_STEP => {
            Some(usage.as_deref().cloned())
        }
        _ => None,
    });
    assert_eq!(usage, Some(used.clone()));
    let steps: Vec<_> = out
        .acct
        .iter()
        .map(|r| sluice_ctld::store::acct::to_proto(r, 1))
        .filter_map(|p| match p.kind {
            Some(sluice_wire::proto::acct_record::Kind::Step(s)) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps[0].usage.as_ref().and_then(StepUsage::from_proto),
        used,
        "on the wire to the dbd"
    );
}
