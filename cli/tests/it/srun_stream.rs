//! srun against a fake controller and fake node daemons in this process: allocation messages,
//! step creation, output arriving while the step runs, `-l` labels, exit codes, Ctrl-C.

use crate::srun_support;

use std::sync::Arc;
use std::time::Duration;

use sluice_cli::jobspec::Submitter;
use sluice_cli::srun::{Interrupt, run_async};
use sluice_wire::proto::{AllocationEvent, CreateStepReply, allocation_event};
use srun_support::*;
use tokio::sync::{Notify, mpsc};

/// Generous bound so a broken srun fails the test instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(30);

fn who() -> Submitter {
    let mut w = Submitter::current();
    w.cwd = std::env::temp_dir().display().to_string();
    w
}

fn environ(conf: &std::path::Path, job: Option<u32>) -> Vec<(String, String)> {
    let mut env = vec![
        ("SLURM_CONF".to_string(), conf.display().to_string()),
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
    ];
    if let Some(id) = job {
        env.push(("SLURM_JOB_ID".to_string(), id.to_string()));
    }
    env
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Waits until `rx` has delivered text containing `needle`.
async fn wait_for(rx: &mut mpsc::UnboundedReceiver<Vec<u8>>, seen: &mut String, needle: &str) {
    tokio::time::timeout(DEADLINE, async {
        while !seen.contains(needle) {
            match rx.recv().await {
                Some(chunk) => seen.push_str(&String::from_utf8_lossy(&chunk)),
                None => panic!("output ended before {needle:?}; got {seen:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{needle:?} never arrived; got {seen:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_streams_live_and_the_highest_exit_code_wins() {
    let gate = Arc::new(Notify::new());
    let (p0, log0) = start_node(vec![
        Play::Out {
            task: 0,
            stderr: false,
            data: "first\n",
        },
        Play::Wait(gate.clone()),
        Play::Out {
            task: 1,
            stderr: false,
            data: "second\n",
        },
        Play::Exit(vec![(0, 0, 0), (1, 3, 0)]),
    ])
    .await;
    let (p1, log1) = start_node(vec![
        Play::Out {
            task: 2,
            stderr: true,
            data: "err2\n",
        },
        Play::Exit(vec![(2, 0, 0)]),
    ])
    .await;
    let (cport, ctld) = start_ctld(CtldLog {
        step: CreateStepReply {
            step_id: 1,
            allocation: Some(allocation(5, &[p0, p1], 3)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, mut out_rx, out_buf) = Tap::new();
    let (mut err, _err_rx, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel::<Interrupt>();
    let env = environ(&conf, Some(5));
    let args = words("-n 3 prog arg");
    let me = who();
    let srun = run_async(&args, &env, &me, &mut out, &mut err, irx);
    let watcher = async {
        let mut seen = String::new();
        // The first line shows while task 1 is still held back by the gate.
        wait_for(&mut out_rx, &mut seen, "first\n").await;
        assert!(!seen.contains("second"), "{seen}");
        gate.notify_one();
    };
    let (code, ()) = tokio::join!(srun, watcher);
    assert_eq!(code, 3);
    assert_eq!(text(&out_buf), "first\nsecond\n");
    let err_text = text(&err_buf);
    assert!(err_text.contains("err2\n"), "{err_text}");
    assert!(
        err_text.contains("srun: error: n0: task 1: Exited with exit code 3\n"),
        "{err_text}"
    );

    let r0 = log0.lock().unwrap().run_requests[0].clone();
    let r1 = log1.lock().unwrap().run_requests[0].clone();
    assert_eq!((r0.first_task, r0.tasks_here, r0.node_index), (0, 2, 0));
    assert_eq!((r1.first_task, r1.tasks_here, r1.node_index), (2, 1, 1));
    assert_eq!((r0.job_id, r0.step_id, r0.ntasks), (5, 1, 3));
    assert_eq!(r0.argv, vec!["prog", "arg"]);
    let c = ctld.lock().unwrap();
    assert!(
        c.allocate_requests.is_empty(),
        "inside a job srun does not allocate"
    );
    assert_eq!(c.step_requests[0].job_id, 5);
    assert_eq!(c.step_requests[0].ntasks, Some(3));
    assert_eq!(c.done.len(), 1);
    assert_eq!(
        (c.done[0].exit_code, c.done[0].signal, c.done[0].end_job),
        (3, 0, false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_prefix_every_line_with_the_rank() {
    let (p0, _) = start_node(vec![
        Play::Out {
            task: 0,
            stderr: false,
            data: "a\nb",
        },
        Play::Out {
            task: 1,
            stderr: false,
            data: "x\n",
        },
        Play::Out {
            task: 0,
            stderr: false,
            data: "c\n",
        },
        Play::Out {
            task: 1,
            stderr: true,
            data: "tail",
        },
        Play::Exit(vec![(0, 0, 0), (1, 0, 0)]),
    ])
    .await;
    let (cport, _) = start_ctld(CtldLog {
        step: CreateStepReply {
            step_id: 0,
            allocation: Some(allocation(8, &[p0], 2)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, _o, out_buf) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel();
    let code = run_async(
        &words("-l -n2 true"),
        &environ(&conf, Some(8)),
        &who(),
        &mut out,
        &mut err,
        irx,
    )
    .await;
    assert_eq!(code, 0);
    assert_eq!(text(&out_buf), "0: a\n1: x\n0: bc\n");
    assert_eq!(text(&err_buf), "1: tail\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_allocation_reports_waiting_and_ends_the_job() {
    let (p0, _) = start_node(vec![Play::Exit(vec![(0, 0, 9)])]).await;
    let queued = AllocationEvent {
        job_id: 9,
        event: Some(allocation_event::Event::Queued("Resources".into())),
    };
    let granted = AllocationEvent {
        job_id: 9,
        event: Some(allocation_event::Event::Granted(allocation(9, &[p0], 1))),
    };
    let (cport, ctld) = start_ctld(CtldLog {
        allocate_events: vec![queued, granted],
        step: CreateStepReply {
            step_id: 0,
            allocation: Some(allocation(9, &[p0], 1)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, _o, _ob) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel();
    let code = run_async(
        &words("-p debug /bin/sleep 100"),
        &environ(&conf, None),
        &who(),
        &mut out,
        &mut err,
        irx,
    )
    .await;
    assert_eq!(code, 128 + 9);
    assert_eq!(
        text(&err_buf),
        "srun: job 9 queued and waiting for resources\n\
         srun: job 9 has been allocated resources\n\
         srun: error: n0: task 0: Killed\n"
    );
    let c = ctld.lock().unwrap();
    assert_eq!(c.allocate_requests[0].name, "sleep");
    assert_eq!(c.allocate_requests[0].partition.as_deref(), Some("debug"));
    assert_eq!(c.step_requests[0].job_id, 9);
    assert_eq!((c.done[0].signal, c.done[0].end_job), (9, true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_controller_is_asked_again() {
    let failed = AllocationEvent {
        job_id: 0,
        event: Some(allocation_event::Event::Failed(
            "Requested node configuration is not available".into(),
        )),
    };
    let (cport, ctld) = start_ctld(CtldLog {
        allocate_events: vec![failed],
        busy_allocations: 1,
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, _o, _ob) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel();
    let code = run_async(
        &words("hostname"),
        &environ(&conf, None),
        &who(),
        &mut out,
        &mut err,
        irx,
    )
    .await;
    assert_eq!(code, 1);
    assert_eq!(
        text(&err_buf),
        "srun: error: Slurm temporarily unable to accept job, sleeping and retrying.\n\
         srun: error: Unable to allocate resources: Requested node configuration is not available\n"
    );
    assert_eq!(ctld.lock().unwrap().allocate_requests.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_allocation_runs_nothing() {
    let failed = AllocationEvent {
        job_id: 0,
        event: Some(allocation_event::Event::Failed(
            "Requested node configuration is not available".into(),
        )),
    };
    let (cport, ctld) = start_ctld(CtldLog {
        allocate_events: vec![failed],
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, _o, _ob) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel();
    let code = run_async(
        &words("-N 99 hostname"),
        &environ(&conf, None),
        &who(),
        &mut out,
        &mut err,
        irx,
    )
    .await;
    assert_eq!(code, 1);
    assert_eq!(
        text(&err_buf),
        "srun: error: Unable to allocate resources: Requested node configuration is not available\n"
    );
    assert!(ctld.lock().unwrap().step_requests.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_with_disable_status_forwards_sigint_to_the_tasks() {
    let (p0, log0) = start_node(vec![
        Play::Out {
            task: 0,
            stderr: false,
            data: "running\n",
        },
        Play::WaitForSignal,
        Play::Exit(vec![(0, 0, 2)]),
    ])
    .await;
    let (cport, ctld) = start_ctld(CtldLog {
        step: CreateStepReply {
            step_id: 4,
            allocation: Some(allocation(6, &[p0], 1)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let (mut out, mut out_rx, _ob) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (itx, irx) = mpsc::unbounded_channel();
    let env = environ(&conf, Some(6));
    let args = words("-X sleep 100");
    let me = who();
    let srun = run_async(&args, &env, &me, &mut out, &mut err, irx);
    let user = async {
        let mut seen = String::new();
        wait_for(&mut out_rx, &mut seen, "running\n").await;
        itx.send(Interrupt::Int).unwrap();
    };
    let (code, ()) = tokio::join!(srun, user);
    assert_eq!(code, 128 + 2);
    // srun ended the step itself: no "Interrupt" error line for the task.
    assert_eq!(text(&err_buf), "srun: sending Ctrl-C to StepId=6.4\n");
    let sig = log0.lock().unwrap().signals[0];
    assert_eq!((sig.job_id, sig.step_id, sig.signal), (6, Some(4), 2));
    assert_eq!(ctld.lock().unwrap().done[0].signal, 2);
}
