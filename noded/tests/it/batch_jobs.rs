//! Batch scripts run by a real node daemon, reported to a fake controller.

use crate::common;
use sluice_testkit::eventually;

use std::os::unix::fs::MetadataExt;

use common::*;
use sluice_wire::proto::{EnvVar, SignalJobRequest, SignalKind};

const NODE: &str = "NodeName=n1 NodeAddr=127.0.0.1 Port=0 CPUs=4";

async fn setup() -> (TestCluster, FakeCtld, RunningNoded) {
    let tmp_key = sluice_wire::auth::Key::from_bytes(vec![42; 64]);
    let ctld = FakeCtld::start(&tmp_key, 0, Vec::new()).await;
    let cluster = TestCluster::new(ctld.port, NODE);
    let noded = cluster.start_noded("n1").await;
    (cluster, ctld, noded)
}

fn signal(job_id: u32, kind: SignalKind, signal: i32) -> SignalJobRequest {
    SignalJobRequest {
        job_id,
        kind: kind as i32,
        signal,
        ..Default::default()
    }
}

#[tokio::test]
async fn a_script_runs_in_its_workdir_with_the_slurm_environment() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w1");
    let script = "#!/bin/sh\necho \"cwd=$(pwd)\"\nenv | sort\n";
    let mut req = launch_request(101, &work, script);
    req.env = vec![EnvVar {
        name: "FROM_SUBMIT".into(),
        value: "kept".into(),
    }];
    req.mem_mb = 500;
    req.cpus_per_task = 2;
    req.restart_count = 2;
    noded.client().await.launch_batch(req).await.unwrap();
    let exit = ctld.exit_of(101).await;
    // The report names the node, the run it launched and the batch step.
    assert_eq!(
        (
            exit.exit_code,
            exit.signal,
            exit.node.as_str(),
            exit.restart_count,
            exit.step_id
        ),
        (0, 0, "n1", 2, -4)
    );
    let out = std::fs::read_to_string(work.join("slurm-101.out")).unwrap();
    let expect = [
        format!("cwd={}", work.display()),
        "FROM_SUBMIT=kept".into(),
        "SLURM_JOB_ID=101".into(),
        "SLURM_JOBID=101".into(),
        "SLURM_JOB_NAME=job101".into(),
        "SLURM_JOB_NODELIST=n1".into(),
        "SLURM_NODELIST=n1".into(),
        "SLURM_NNODES=1".into(),
        "SLURM_NTASKS=1".into(),
        "SLURM_CPUS_ON_NODE=1".into(),
        "SLURM_CPUS_PER_TASK=2".into(),
        "SLURM_MEM_PER_NODE=500".into(),
        "SLURM_CLUSTER_NAME=tc".into(),
        format!("SLURM_SUBMIT_DIR={}", work.display()),
        "SLURM_SUBMIT_HOST=login1".into(),
        "SLURM_JOB_PARTITION=debug".into(),
        "SLURM_JOB_ACCOUNT=acct".into(),
        "SLURMD_NODENAME=n1".into(),
        "SLURM_NODEID=0".into(),
        "SLURM_PROCID=0".into(),
        format!("SLURM_CONF={}", cluster.conf.display()),
        format!("SLURM_JOB_UID={}", nix::unistd::getuid()),
    ];
    for line in &expect {
        assert!(out.lines().any(|l| l == line), "missing {line} in:\n{out}");
    }
    let pid_line = out
        .lines()
        .find(|l| l.starts_with("SLURM_TASK_PID="))
        .unwrap();
    assert!(
        pid_line["SLURM_TASK_PID=".len()..].parse::<u32>().is_ok(),
        "{pid_line}"
    );
    assert!(
        !out.contains("CARGO_MANIFEST_DIR"),
        "the daemon's environment leaked:\n{out}"
    );
    assert!(!out.contains("SLURM_ARRAY_TASK_ID"), "not an array job");
    assert!(
        !noded.spool.join("job00101").exists(),
        "the job's spool dir is cleaned"
    );
    noded.stop().await;
}

#[tokio::test]
async fn output_patterns_and_the_exit_code_are_honoured() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w2");
    let script = "#!/bin/sh\necho to-out\necho to-err >&2\nexit 3\n";
    let mut req = launch_request(205, &work, script);
    req.name = "arr".into();
    req.array_job_id = 200;
    req.array_task_id = Some(5);
    req.array_task_count = 6;
    req.array_task_max = 5;
    req.stdout = "%x_%j_%A_%a.out".into();
    req.stderr = "logs-%4a/%j.err".into();
    std::fs::create_dir(work.join("logs-0005")).unwrap();
    noded.client().await.launch_batch(req).await.unwrap();
    let exit = ctld.exit_of(205).await;
    assert_eq!((exit.exit_code, exit.signal), (3, 0));
    let out = std::fs::read_to_string(work.join("arr_205_200_5.out")).unwrap();
    assert_eq!(out, "to-out\n");
    let err = std::fs::read_to_string(work.join("logs-0005/205.err")).unwrap();
    assert_eq!(err, "to-err\n");

    // An array task without patterns writes slurm-%A_%a.out.
    let mut req = launch_request(206, &work, "#!/bin/sh\necho $SLURM_ARRAY_TASK_ID\n");
    req.array_job_id = 200;
    req.array_task_id = Some(6);
    noded.client().await.launch_batch(req).await.unwrap();
    ctld.exit_of(206).await;
    assert_eq!(
        std::fs::read_to_string(work.join("slurm-200_6.out")).unwrap(),
        "6\n"
    );
    noded.stop().await;
}

#[tokio::test]
async fn script_arguments_are_the_scripts_positional_parameters() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("wargs");
    let script = "#!/bin/sh\necho \"n=$# 1=$1 2=$2\"\necho err-$1 >&2\n";
    // Joined output, then separate output files: both wrappers pass the arguments on.
    let mut req = launch_request(231, &work, script);
    req.script_args = vec!["first".into(), "two words".into()];
    noded.client().await.launch_batch(req).await.unwrap();
    assert_eq!(ctld.exit_of(231).await.exit_code, 0);
    assert_eq!(
        std::fs::read_to_string(work.join("slurm-231.out")).unwrap(),
        "n=2 1=first 2=two words\nerr-first\n"
    );
    let mut req = launch_request(232, &work, script);
    req.script_args = vec!["-x".into()];
    req.stderr = "e-%j".into();
    noded.client().await.launch_batch(req).await.unwrap();
    assert_eq!(ctld.exit_of(232).await.exit_code, 0);
    assert_eq!(
        std::fs::read_to_string(work.join("slurm-232.out")).unwrap(),
        "n=1 1=-x 2=\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("e-232")).unwrap(),
        "err--x\n"
    );
    noded.stop().await;
}

#[tokio::test]
async fn sigterm_through_signal_job_is_reported_as_signal_15() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w3");
    let script = "#!/bin/sh\necho ready > ready\nsleep 1000\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(300, &work, script))
        .await
        .unwrap();
    wait_for_file(&work.join("ready")).await;
    client
        .signal_job(signal(300, SignalKind::Signal, 15))
        .await
        .unwrap();
    let exit = ctld.exit_of(300).await;
    assert_eq!((exit.exit_code, exit.signal), (0, 15));
    // Signals for jobs that are not here are fine (idempotent).
    client
        .signal_job(signal(300, SignalKind::Terminate, 0))
        .await
        .unwrap();
    noded.stop().await;
}

#[tokio::test]
async fn suspend_stops_the_script_and_resume_continues_it() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w4");
    let script = "#!/bin/sh\necho $$ > pid\nwhile [ ! -e go ]; do sleep 0.05; done\necho resumed\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(400, &work, script))
        .await
        .unwrap();
    let pid: i32 = wait_for_file(&work.join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    client
        .signal_job(signal(400, SignalKind::Suspend, 0))
        .await
        .unwrap();
    eventually("the script is stopped", async || {
        group_stopped(pid).then_some(())
    })
    .await;
    std::fs::write(work.join("go"), "").unwrap();
    client
        .signal_job(signal(400, SignalKind::Resume, 0))
        .await
        .unwrap();
    let exit = ctld.exit_of(400).await;
    assert_eq!((exit.exit_code, exit.signal), (0, 0));
    assert!(
        std::fs::read_to_string(work.join("slurm-400.out"))
            .unwrap()
            .contains("resumed")
    );
    noded.stop().await;
}

#[tokio::test]
async fn terminate_kills_the_whole_process_group() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w5");
    let script = "#!/bin/sh\nsleep 1000 &\necho $! > bgpid\nwait\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(500, &work, script))
        .await
        .unwrap();
    let bg: i32 = wait_for_file(&work.join("bgpid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(!is_dead(bg));
    client
        .signal_job(signal(500, SignalKind::Terminate, 0))
        .await
        .unwrap();
    let exit = ctld.exit_of(500).await;
    assert_eq!(exit.signal, 9);
    eventually("the background sleep is killed", async || {
        (is_dead(bg)).then_some(())
    })
    .await;
    noded.stop().await;
}

#[tokio::test]
async fn a_repeated_launch_starts_no_second_copy() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w6");
    let script = "#!/bin/sh\necho run >> count\nwhile [ ! -e go ]; do sleep 0.05; done\n";
    let mut client = noded.client().await;
    let req = launch_request(600, &work, script);
    client.launch_batch(req.clone()).await.unwrap();
    client.launch_batch(req.clone()).await.unwrap();
    wait_for_file(&work.join("count")).await;
    std::fs::write(work.join("go"), "").unwrap();
    ctld.exit_of(600).await;
    // Also after the end, until the controller has the report, the launch is not repeated;
    // here the report was acknowledged already, so wait for the heartbeat that shows it gone.
    ctld.wait_for("a heartbeat without job 600", |r| {
        r.heartbeats
            .last()
            .filter(|h| !h.running_jobs.contains(&600))
            .cloned()
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(work.join("count")).unwrap(),
        "run\n"
    );
    assert_eq!(ctld.recorded().exits.len(), 1);
    noded.stop().await;
}

#[tokio::test]
async fn only_the_controller_may_launch_and_signal() {
    let (cluster, _ctld, noded) = setup().await;
    let work = cluster.workdir("w7");
    let me = nix::unistd::geteuid().as_raw();
    let other = if me == 4242 { 4243 } else { 4242 };
    let mut client = noded.client_as(other).await;
    let e = client
        .launch_batch(launch_request(700, &work, "#!/bin/sh\n"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied, "{e:?}");
    let e = client
        .signal_job(signal(700, SignalKind::Terminate, 0))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
    // Unsigned requests do not get in at all.
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{}", noded.port))
            .unwrap()
            .connect()
            .await
            .unwrap();
    let mut unsigned = sluice_wire::proto::node_daemon_client::NodeDaemonClient::new(channel);
    let e = unsigned
        .ping(sluice_wire::proto::PingRequest {})
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated);
    noded.stop().await;
}

#[tokio::test]
#[cfg_attr(not(test_as_root), ignore = "needs root to switch users")]
async fn root_runs_jobs_as_the_submitting_user() {
    let (cluster, ctld, noded) = setup().await;
    let work = cluster.workdir("w8");
    std::fs::set_permissions(&work, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let mut req = launch_request(800, &work, "#!/bin/sh\nid -u\nid -g\ntouch made-by-job\n");
    req.uid = 65534;
    req.gid = 65534;
    req.user = "nobody".into();
    noded.client().await.launch_batch(req).await.unwrap();
    let exit = ctld.exit_of(800).await;
    assert_eq!((exit.exit_code, exit.signal), (0, 0));
    let out_path = work.join("slurm-800.out");
    assert_eq!(
        std::fs::read_to_string(&out_path).unwrap(),
        "65534\n65534\n"
    );
    for file in [out_path, work.join("made-by-job")] {
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (65534, 65534),
            "{}",
            file.display()
        );
    }
    noded.stop().await;
}
