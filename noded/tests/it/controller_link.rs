//! The node daemon and its controller: registration, heartbeats, exit reports through an
//! outage, and a controller restart that must not cost running jobs.

use crate::common;
use sluice_testkit::eventually;

use common::fake_ctld::Recorded;
use common::*;
use sluice_wire::auth::Key;

fn key() -> Key {
    Key::from_bytes(vec![42; 64])
}

/// CPUs as `/proc/cpuinfo` counts them (independent of how the daemon reads them).
fn cpuinfo_cpus() -> u32 {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    text.lines().filter(|l| l.starts_with("processor")).count() as u32
}

fn meminfo_mb() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with("MemTotal:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}

#[tokio::test]
async fn nodes_register_with_os_or_configured_resources_and_their_real_port() {
    let ctld = FakeCtld::start(&key(), 0, Vec::new()).await;
    let cluster = TestCluster::new(
        ctld.port,
        "NodeName=n1 NodeAddr=127.0.0.1 Port=0\n\
         NodeName=n2 NodeAddr=127.0.0.1 Port=0 CPUs=64 RealMemory=4000",
    );
    let n1 = cluster.start_noded("n1").await;
    let n2 = cluster.start_noded("n2").await;
    let reg = |name: &'static str| {
        move |r: &Recorded| r.registrations.iter().find(|x| x.name == name).cloned()
    };
    let r1 = ctld.wait_for("n1's registration", reg("n1")).await;
    assert_eq!(r1.cpus, cpuinfo_cpus());
    assert_eq!(r1.real_memory_mb, meminfo_mb());
    assert_eq!(
        (r1.addr.as_str(), r1.port),
        ("127.0.0.1", u32::from(n1.port))
    );
    assert!(r1.boot_time > 0);
    assert!(r1.running_jobs.is_empty());
    let r2 = ctld.wait_for("n2's registration", reg("n2")).await;
    assert_eq!((r2.cpus, r2.real_memory_mb), (64, 4000));
    assert_eq!(r2.port, u32::from(n2.port));
    assert_ne!(n1.port, n2.port);
    assert_ne!(n1.spool, n2.spool, "each node has its own spool");
    ctld.wait_for("a heartbeat of n1", |r| {
        r.heartbeats.iter().find(|h| h.name == "n1").cloned()
    })
    .await;
    n1.stop().await;
    n2.stop().await;
    ctld.stop().await;
}

#[tokio::test]
async fn an_exit_during_a_controller_outage_arrives_exactly_once_later() {
    let ctld = FakeCtld::start(&key(), 0, Vec::new()).await;
    let port = ctld.port;
    let cluster = TestCluster::new(port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    ctld.wait_for("registration", |r| r.registrations.first().cloned())
        .await;
    let work = cluster.workdir("w");
    let script = "#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\nexit 7\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(31, &work, script))
        .await
        .unwrap();
    ctld.stop().await;

    std::fs::write(work.join("go"), "").unwrap();
    let exits_dir = noded.spool.join("exits");
    eventually("the exit report to be persisted", async || {
        (persisted_exits(&exits_dir) == 1).then_some(())
    })
    .await;
    let ping = client
        .ping(sluice_wire::proto::PingRequest {})
        .await
        .unwrap();
    assert!(
        !ping.into_inner().running_jobs.contains(&31),
        "the job ended"
    );

    let ctld = FakeCtld::start(&key(), port, Vec::new()).await;
    let exit = ctld.exit_of(31).await;
    assert_eq!((exit.exit_code, exit.signal), (7, 0));
    // The node re-registers with the job still listed until the report is in, then its
    // heartbeats stop listing it; by then nothing is left to resend.
    ctld.wait_for("a heartbeat without job 31", |r| {
        r.heartbeats
            .last()
            .filter(|h| !h.running_jobs.contains(&31))
            .cloned()
    })
    .await;
    assert_eq!(std::fs::read_dir(&exits_dir).unwrap().count(), 0);
    assert_eq!(ctld.recorded().exits.len(), 1, "delivered once");
    noded.stop().await;
    ctld.stop().await;
}

#[tokio::test]
async fn pending_exit_reports_survive_a_node_daemon_restart() {
    // No controller at all while the job ends and the node daemon restarts.
    let parked = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = parked.local_addr().unwrap().port();
    drop(parked);
    let cluster = TestCluster::new(port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    let work = cluster.workdir("w");
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(41, &work, "#!/bin/sh\nexit 2\n"))
        .await
        .unwrap();
    let exits_dir = noded.spool.join("exits");
    eventually("the exit report to be persisted", async || {
        (persisted_exits(&exits_dir) == 1).then_some(())
    })
    .await;
    noded.stop().await;

    let noded = cluster.start_noded("n1").await;
    let ctld = FakeCtld::start(&key(), port, Vec::new()).await;
    let reg = ctld
        .wait_for("registration", |r| r.registrations.first().cloned())
        .await;
    assert_eq!(
        reg.running_jobs,
        vec![41],
        "an unreported end is reported as running"
    );
    let exit = ctld.exit_of(41).await;
    assert_eq!(exit.exit_code, 2);
    noded.stop().await;
    ctld.stop().await;
}

#[tokio::test]
async fn a_restarted_controller_gets_the_running_jobs_and_they_keep_running() {
    let ctld = FakeCtld::start(&key(), 0, Vec::new()).await;
    let port = ctld.port;
    let cluster = TestCluster::new(port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    ctld.wait_for("registration", |r| r.registrations.first().cloned())
        .await;
    let work = cluster.workdir("w");
    let script = "#!/bin/sh\necho $$ > pid\nwhile [ ! -e go ]; do sleep 0.05; done\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(51, &work, script))
        .await
        .unwrap();
    let orphan_dir = cluster.workdir("orphan");
    let orphan_script = "#!/bin/sh\necho $$ > pid\nsleep 1000\n";
    client
        .launch_batch(launch_request(52, &orphan_dir, orphan_script))
        .await
        .unwrap();
    let pid: i32 = wait_for_file(&work.join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    wait_for_file(&orphan_dir.join("pid")).await;
    ctld.stop().await;

    // The new controller knows job 51 but not 52.
    let ctld = FakeCtld::start(&key(), port, vec![52]).await;
    let reg = ctld
        .wait_for("a registration listing job 51", |r| {
            r.registrations
                .iter()
                .find(|x| x.running_jobs.contains(&51))
                .cloned()
        })
        .await;
    assert_eq!(reg.running_jobs, vec![51, 52]);
    let killed = ctld.exit_of(52).await;
    assert_eq!(
        killed.signal, 9,
        "the job the controller does not know is killed"
    );
    assert!(!is_dead(pid), "the known job keeps running");
    std::fs::write(work.join("go"), "").unwrap();
    let exit = ctld.exit_of(51).await;
    assert_eq!((exit.exit_code, exit.signal), (0, 0));
    noded.stop().await;
    ctld.stop().await;
}

#[tokio::test]
async fn a_controller_restart_between_heartbeats_is_noticed_by_its_start_time() {
    let ctld = FakeCtld::start(&key(), 0, Vec::new()).await;
    ctld.set_lenient();
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    ctld.wait_for("registration", |r| r.registrations.first().cloned())
        .await;
    let work = cluster.workdir("w");
    let script = "#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\n";
    let mut client = noded.client().await;
    client
        .launch_batch(launch_request(61, &work, script))
        .await
        .unwrap();
    // No RPC fails: only the new start time tells the node to register again.
    ctld.restart_in_place();
    let reg = ctld
        .wait_for("a new registration", |r| r.registrations.first().cloned())
        .await;
    assert_eq!(reg.running_jobs, vec![61]);
    std::fs::write(work.join("go"), "").unwrap();
    assert_eq!(ctld.exit_of(61).await.exit_code, 0);
    noded.stop().await;
    ctld.stop().await;
}

#[tokio::test]
async fn a_heartbeat_the_controller_could_not_answer_is_sent_again_without_registering() {
    let ctld = FakeCtld::start(&key(), 0, Vec::new()).await;
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    let noded = cluster.start_noded("n1").await;
    ctld.wait_for("a heartbeat", |r| r.heartbeats.first().cloned())
        .await;
    ctld.fail_heartbeats(2);
    let before = ctld.recorded().heartbeats.len();
    ctld.wait_for("two more heartbeats after the failed ones", |r| {
        (r.heartbeats.len() >= before + 2).then_some(())
    })
    .await;
    assert_eq!(
        ctld.recorded().registrations.len(),
        1,
        "a busy controller is no reason to register again"
    );
    noded.stop().await;
    ctld.stop().await;
}

/// How many exit reports the node daemon has persisted in `dir`: each is written to a `.tmp`
/// file first and renamed, so only renamed ones count.
fn persisted_exits(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".tmp"))
            .count()
    })
}
