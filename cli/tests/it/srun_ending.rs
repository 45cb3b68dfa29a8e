//! srun ending its step itself, against a fake controller and fake node daemons in this
//! process: `-K` once a task fails, `-W` once the first task ended and the others ran on for
//! that long, and the `slurm.conf` keys that stand for them (`KillOnBadExit`, `WaitTime`).

use crate::srun_support;

use std::time::Duration;

use sluice_cli::jobspec::Submitter;
use sluice_cli::srun::{Interrupt, run_async};
use sluice_wire::proto::CreateStepReply;
use srun_support::*;
use tokio::sync::mpsc;

/// Generous bound so a broken srun fails the test instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(30);

/// srun `args` inside job 5 against two fake nodes: n0 plays `first`, n1 plays `second`;
/// `conf_extra` lines go to slurm.conf. Returns srun's exit code, stderr and n1's signals.
async fn two_nodes(
    args: &str,
    conf_extra: &str,
    first: Vec<Play>,
    second: Vec<Play>,
) -> (i32, String, Vec<i32>) {
    let (p0, _) = start_node(first).await;
    let (p1, log1) = start_node(second).await;
    let (cport, _) = start_ctld(CtldLog {
        step: CreateStepReply {
            step_id: 2,
            allocation: Some(allocation(5, &[p0, p1], 2)),
            ..Default::default()
        },
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), cport);
    let mut conf_text = std::fs::read_to_string(&conf).unwrap();
    conf_text.push_str(conf_extra);
    std::fs::write(&conf, conf_text).unwrap();
    let env = vec![
        ("SLURM_CONF".to_string(), conf.display().to_string()),
        ("SLURM_JOB_ID".to_string(), "5".to_string()),
    ];
    let mut me = Submitter::current();
    me.cwd = dir.path().display().to_string();
    let (mut out, _o, _out_buf) = Tap::new();
    let (mut err, _e, err_buf) = Tap::new();
    let (_itx, irx) = mpsc::unbounded_channel::<Interrupt>();
    let words: Vec<String> = args.split_whitespace().map(String::from).collect();
    let code = tokio::time::timeout(
        DEADLINE,
        run_async(&words, &env, &me, &mut out, &mut err, irx),
    )
    .await
    .expect("srun ends the step");
    let signals = log1
        .lock()
        .unwrap()
        .signals
        .iter()
        .map(|s| s.signal)
        .collect();
    (code, text(&err_buf), signals)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_on_bad_exit_terminates_the_other_tasks() {
    let (code, err, signals) = two_nodes(
        "-K -n2 prog",
        "",
        vec![Play::Exit(vec![(0, 3, 0)])],
        vec![Play::WaitForSignal, Play::Exit(vec![(1, 0, 15)])],
    )
    .await;
    assert_eq!(signals, [15], "SIGTERM to the tasks still running");
    assert_eq!(code, 128 + 15, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "srun: error: n0: task 0: Exited with exit code 3",
            "srun: launch/slurm: _step_signal: Terminating StepId=5.2",
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
            "srun: error: n1: task 1: Terminated",
        ]
    );
    // KillOnBadExit=1 does the same; -K0 overrides it.
    let (_, err, signals) = two_nodes(
        "-n2 prog",
        "KillOnBadExit=1\nKillWait=5\n",
        vec![Play::Exit(vec![(0, 3, 0)])],
        vec![Play::WaitForSignal, Play::Exit(vec![(1, 0, 15)])],
    )
    .await;
    assert_eq!(signals, [15]);
    assert!(
        err.contains("Waiting up to 7 seconds"),
        "KillWait + 2: {err}"
    );
    let (code, err, signals) = two_nodes(
        "-K0 -n2 prog",
        "KillOnBadExit=1\n",
        vec![Play::Exit(vec![(0, 3, 0)])],
        vec![Play::Exit(vec![(1, 0, 0)])],
    )
    .await;
    assert!(signals.is_empty(), "{err}");
    assert_eq!(code, 3);
    assert!(!err.contains("Terminating"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_ends_the_step_a_while_after_the_first_task() {
    let (code, err, signals) = two_nodes(
        "-W 1 -n2 prog",
        "",
        vec![Play::Exit(vec![(0, 0, 0)])],
        vec![Play::WaitForSignal, Play::Exit(vec![(1, 0, 15)])],
    )
    .await;
    assert_eq!(signals, [15]);
    assert_eq!(code, 128 + 15);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "srun: First task exited 1s ago",
            "srun: StepId=5.2 task 1: running",
            "srun: StepId=5.2 task 0: exited",
            "srun: launch/slurm: _step_signal: Terminating StepId=5.2",
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
            "srun: error: n1: task 1: Terminated",
        ]
    );
    // WaitTime in slurm.conf when -W is not given.
    let (_, err, signals) = two_nodes(
        "-n2 prog",
        "WaitTime=1\n",
        vec![Play::Exit(vec![(0, 0, 0)])],
        vec![Play::WaitForSignal, Play::Exit(vec![(1, 0, 15)])],
    )
    .await;
    assert_eq!(signals, [15]);
    assert!(err.starts_with("srun: First task exited 1s ago\n"), "{err}");
}
