//! srun step tasks: output streams back while the tasks run, the last message carries the
//! exits, and a cancelled stream kills the tasks.

use crate::common;
use sluice_testkit::{eventually, eventually_seen};

use common::*;
use sluice_wire::auth::Key;
use sluice_wire::proto::{RunStepRequest, StepOutput};
use tonic::Streaming;

fn step(job_id: u32, workdir: &std::path::Path, argv: &[&str], tasks: u32) -> RunStepRequest {
    RunStepRequest {
        job_id,
        step_id: 0,
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
        argv: argv.iter().map(|a| a.to_string()).collect(),
        workdir: workdir.display().to_string(),
        node_list: "n[1-2]".into(),
        node_count: 2,
        node_index: 1,
        ntasks: 4,
        first_task: 2,
        tasks_here: tasks,
        name: "st".into(),
        ..Default::default()
    }
}

async fn next(stream: &mut Streaming<StepOutput>) -> StepOutput {
    tokio::time::timeout(DEADLINE, stream.message())
        .await
        .expect("a step message in time")
        .unwrap()
        .expect("the stream goes on")
}

/// Starts the step `req` on `noded`: its output stream.
async fn start(noded: &RunningNoded, req: RunStepRequest) -> Streaming<StepOutput> {
    noded
        .client()
        .await
        .run_step(req)
        .await
        .unwrap()
        .into_inner()
}

async fn setup() -> (TestCluster, FakeCtld, RunningNoded) {
    let ctld = FakeCtld::start(&Key::from_bytes(vec![42; 64]), 0, Vec::new()).await;
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    (cluster, ctld, noded)
}

#[tokio::test]
async fn output_streams_before_the_tasks_end_and_exits_come_last() {
    let (cluster, _ctld, noded) = setup().await;
    let work = cluster.workdir("s1");
    let script = "echo \"line $SLURM_PROCID of $SLURM_STEP_NUM_TASKS on $SLURMD_NODENAME \
                  local $SLURM_LOCALID node $SLURM_NODEID\"; echo err-$SLURM_PROCID >&2; \
                  while [ ! -e go ]; do sleep 0.05; done; exit $SLURM_PROCID";
    let req = step(9, &work, &["sh", "-c", script], 2);
    let mut stream = start(&noded, req).await;
    let mut out = std::collections::BTreeMap::<(u32, bool), String>::new();
    // Both tasks' lines arrive while they still wait for `go`.
    while out.values().filter(|t| t.ends_with('\n')).count() < 4 {
        let msg = next(&mut stream).await;
        assert!(msg.exits.is_empty(), "no exit before the tasks end");
        out.entry((msg.task, msg.stderr))
            .or_default()
            .push_str(&String::from_utf8(msg.data).unwrap());
    }
    assert_eq!(out[&(2, false)], "line 2 of 4 on n1 local 0 node 1\n");
    assert_eq!(out[&(3, false)], "line 3 of 4 on n1 local 1 node 1\n");
    assert_eq!(out[&(3, true)], "err-3\n");
    let ping = noded
        .client()
        .await
        .ping(sluice_wire::proto::PingRequest {})
        .await;
    assert_eq!(ping.unwrap().into_inner().running_jobs, vec![9]);
    std::fs::write(work.join("go"), "").unwrap();
    // Each task's end is told as it happens (srun -K and -W act on it), then all of them last.
    let mut ended = Vec::new();
    let last = loop {
        let msg = next(&mut stream).await;
        if !msg.exits.is_empty() {
            break msg;
        }
        ended.extend(msg.ended.iter().map(|e| (e.task, e.exit_code, e.signal)));
    };
    ended.sort_unstable();
    assert_eq!(ended, vec![(2, 2, 0), (3, 3, 0)]);
    let exits: Vec<(u32, i32, i32)> = last
        .exits
        .iter()
        .map(|e| (e.task, e.exit_code, e.signal))
        .collect();
    assert_eq!(exits, vec![(2, 2, 0), (3, 3, 0)]);
    assert!(
        stream.message().await.unwrap().is_none(),
        "the exits are the last message"
    );
    noded.stop().await;
}

#[tokio::test]
async fn a_no_allocation_step_runs_without_a_job_and_is_never_reported() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("z");
    let script = "echo job=${SLURM_JOB_ID:-none} step=$SLURM_STEP_ID; \
                  while [ ! -e go ]; do sleep 0.05; done";
    // srun -Z's ids; the test client's credential carries the no-allocation mark for them.
    let mut req = step(0xffff_2094, &work, &["sh", "-c", script], 1);
    req.step_id = 915_579_058;
    let mut stream = start(&noded, req).await;
    let msg = next(&mut stream).await;
    assert_eq!(
        String::from_utf8(msg.data).unwrap(),
        "job=none step=915579058\n"
    );
    // While it runs, neither a ping nor a heartbeat names it: the controller, which knows no
    // such job, would have it killed.
    let ping = noded
        .client()
        .await
        .ping(sluice_wire::proto::PingRequest {})
        .await;
    assert!(ping.unwrap().into_inner().running_jobs.is_empty());
    let seen = ctld.recorded().heartbeats.len();
    let beat = ctld
        .wait_for("a heartbeat while the step runs", |r| {
            r.heartbeats.get(seen).cloned()
        })
        .await;
    assert!(beat.running_jobs.is_empty() && beat.running_runs.is_empty());
    std::fs::write(work.join("go"), "").unwrap();
    let last = loop {
        let msg = next(&mut stream).await;
        if !msg.exits.is_empty() {
            break msg;
        }
    };
    assert_eq!((last.exits[0].exit_code, last.exits[0].signal), (0, 0));
    noded.stop().await;
}

#[tokio::test]
async fn a_no_allocation_id_needs_a_no_allocation_credential() {
    let (cluster, _ctld, noded) = setup().await;
    let work = cluster.workdir("zf");
    // The controller's credential for a real job cannot be bent to a -Z step: the mark and
    // the id range go together.
    let mut req = step(0xffff_0001, &work, &["true"], 1);
    let creds =
        sluice_wire::auth::credential::CredentialKey::derive(&Key::from_bytes(vec![42; 64]));
    req.credential = Some(creds.issue(&sluice_wire::proto::JobCredentialBody {
        job_id: req.job_id,
        step_id: Some(0),
        uid: req.uid,
        gid: req.gid,
        node_list: "n1".into(),
        expires: i64::MAX,
        ..Default::default()
    }));
    let refused = noded.client().await.run_step(req).await.unwrap_err();
    assert!(
        refused.message().contains("Invalid job credential"),
        "{refused:?}"
    );
    noded.stop().await;
}

#[tokio::test]
async fn a_missing_command_fails_its_task_with_a_message() {
    let (cluster, _ctld, noded) = setup().await;
    let work = cluster.workdir("s2");
    let req = step(10, &work, &["no-such-command-xyz"], 1);
    let mut stream = start(&noded, req).await;
    let mut err = String::new();
    loop {
        let msg = next(&mut stream).await;
        if !msg.exits.is_empty() {
            assert_eq!(msg.exits[0].exit_code, 127);
            break;
        }
        err.push_str(&String::from_utf8_lossy(&msg.data));
    }
    assert!(err.contains("no-such-command-xyz"), "{err}");
    noded.stop().await;
}

#[tokio::test]
async fn cancelling_the_stream_kills_the_tasks() {
    let (cluster, _ctld, noded) = setup().await;
    let work = cluster.workdir("s3");
    let req = step(11, &work, &["sh", "-c", "echo $$; exec sleep 1000"], 1);
    let mut stream = start(&noded, req).await;
    let msg = next(&mut stream).await;
    let pid: i32 = String::from_utf8(msg.data).unwrap().trim().parse().unwrap();
    assert!(!is_dead(pid));
    drop(stream);
    eventually("the task is killed", async || (is_dead(pid)).then_some(())).await;
    let mut client = noded.client().await;
    wait_until_no_jobs(&mut client).await;
    noded.stop().await;
}

/// Waits (bounded) until the node lists no job: the step is cleaned up.
async fn wait_until_no_jobs(client: &mut sluice_wire::client::NodedClient) {
    eventually_seen("the step to be cleaned up", async || {
        let ping = client
            .ping(sluice_wire::proto::PingRequest {})
            .await
            .unwrap()
            .into_inner();
        if ping.running_jobs.is_empty() {
            Ok(())
        } else {
            Err(ping.running_jobs)
        }
    })
    .await
}
