//! The `sluice-noded` binary: command line, port file, and a restart (after `kill -9`) that
//! adopts the jobs still running instead of losing them.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;
use sluice_wire::proto::RegisterNodeRequest;
use sluice_wire::protocol::{PROTOCOL_METADATA, PROTOCOL_VERSION};

/// A node daemon process, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_binary(cluster: &TestCluster, node: &str, port_file: &Path) -> Daemon {
    let _ = std::fs::remove_file(port_file);
    let log = std::fs::File::create(cluster.path(&format!("{node}.log"))).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_sluice-noded"))
        .args(["-D", "-f"])
        .arg(&cluster.conf)
        .args(["-N", node])
        .env("SLUICE_PORT_FILE", port_file)
        .stdin(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    Daemon(child)
}

fn write_key(cluster: &TestCluster) -> PathBuf {
    let path = cluster.path("slurm.key");
    std::fs::write(&path, vec![42u8; 64]).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Starts `sluice-noded` for node n1 of `cluster`, whose fake controller takes its reports;
/// returns the daemon, its first registration and a client.
async fn started(
    cluster: &TestCluster,
    ctld: &FakeCtld,
) -> (Daemon, RegisterNodeRequest, common::CredClient) {
    let port_file = cluster.path("n1.port");
    let daemon = start_binary(cluster, "n1", &port_file);
    let port: u16 = wait_for_file(&port_file).await.trim().parse().unwrap();
    let reg = ctld
        .wait_for("registration on the bound port", |r| {
            r.registrations
                .iter()
                .find(|x| x.port == u32::from(port))
                .cloned()
        })
        .await;
    assert_eq!(reg.name, "n1");
    let client = RunningNodedAddr::new(port).client(cluster).await;
    (daemon, reg, client)
}

/// A script that writes its pid, waits for the file `go`, then exits with `code`.
fn gated_script(code: i32) -> String {
    format!("#!/bin/sh\necho $$ > pid\nwhile [ ! -e go ]; do sleep 0.05; done\nexit {code}\n")
}

#[tokio::test]
async fn a_killed_daemon_restarts_and_adopts_its_running_jobs_with_their_exit_codes() {
    let ctld = FakeCtld::start(&sluice_wire::auth::Key::from_bytes(vec![42; 64]), 0, vec![]).await;
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    write_key(&cluster);
    let (mut daemon, _, mut client) = started(&cluster, &ctld).await;
    // Job 77 ends after the restart, job 78 while the daemon is down.
    let (w77, w78) = (cluster.workdir("w77"), cluster.workdir("w78"));
    for (job, work, code) in [(77, &w77, 3), (78, &w78, 5)] {
        client
            .launch_batch(launch_request(job, work, &gated_script(code)))
            .await
            .unwrap();
    }
    let pid: i32 = wait_for_file(&w77.join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    let pid78: i32 = wait_for_file(&w78.join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();

    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    assert!(!is_dead(pid), "the job outlives its node daemon");
    std::fs::write(w78.join("go"), "").unwrap();
    // Reaped by its supervisor while no node daemon runs.
    sluice_testkit::eventually("job 78's script to end", async || {
        proc_state(pid78).is_none().then_some(())
    })
    .await;

    let (_daemon, reg, _) = started(&cluster, &ctld).await;
    // 78 is listed too until its end report is acknowledged.
    assert_eq!(reg.running_jobs, vec![77, 78], "the running job is adopted");
    let exit = ctld.exit_of(78).await;
    assert_eq!(
        (exit.exit_code, exit.signal),
        (5, 0),
        "ended while the daemon was down"
    );
    std::fs::write(w77.join("go"), "").unwrap();
    let exit = ctld.exit_of(77).await;
    assert_eq!(
        (exit.exit_code, exit.signal),
        (3, 0),
        "the true exit code after a restart"
    );
    ctld.stop().await;
}

#[test]
fn a_node_missing_from_slurm_conf_is_an_error_on_the_terminal() {
    let cluster = TestCluster::new(1, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    write_key(&cluster);
    let out = Command::new(env!("CARGO_BIN_EXE_sluice-noded"))
        .args(["-D", "-f"])
        .arg(&cluster.conf)
        .args(["-N", "zz9"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no NodeName line for node zz9"), "{err}");
}

#[test]
fn a_missing_supervisor_is_an_error_on_the_terminal() {
    let cluster = TestCluster::new(1, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    write_key(&cluster);
    let missing = cluster.path("nowhere/sluice-stepd");
    let out = Command::new(env!("CARGO_BIN_EXE_sluice-noded"))
        .args(["-D", "-f"])
        .arg(&cluster.conf)
        .args(["-N", "n1"])
        .env("SLUICE_STEPD", &missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}: the batch job supervisor is missing",
            missing.display()
        )),
        "{err}"
    );
}

/// A client for a daemon known only by its port.
struct RunningNodedAddr {
    port: u16,
}

impl RunningNodedAddr {
    fn new(port: u16) -> Self {
        Self { port }
    }

    async fn client(&self, cluster: &TestCluster) -> common::CredClient {
        let signer =
            sluice_wire::auth::Signer::new(cluster.key.clone(), nix::unistd::geteuid().as_raw());
        let channel = sluice_wire::client::connect("127.0.0.1", self.port, signer)
            .await
            .unwrap();
        common::CredClient::new(
            sluice_wire::proto::node_daemon_client::NodeDaemonClient::new(channel),
            &cluster.key,
        )
    }
}

#[tokio::test]
async fn a_client_of_another_protocol_version_is_told_both_versions() {
    let ctld = FakeCtld::start(&sluice_wire::auth::Key::from_bytes(vec![42; 64]), 0, vec![]).await;
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    write_key(&cluster);
    let port_file = cluster.path("n1.port");
    let _daemon = start_binary(&cluster, "n1", &port_file);
    let port: u16 = wait_for_file(&port_file).await.trim().parse().unwrap();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let theirs = PROTOCOL_VERSION + 1;
    // Not even signed: another version is refused before the signature is looked at.
    let mut client = sluice_wire::proto::node_daemon_client::NodeDaemonClient::with_interceptor(
        channel,
        move |mut req: tonic::Request<()>| {
            req.metadata_mut()
                .insert(PROTOCOL_METADATA, theirs.to_string().parse().unwrap());
            Ok(req)
        },
    );
    let status = client
        .ping(sluice_wire::proto::PingRequest {})
        .await
        .expect_err("another protocol version is refused");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition);
    assert_eq!(
        status.message(),
        format!(
            "protocol version mismatch: client speaks {theirs}, sluice-noded speaks {PROTOCOL_VERSION}"
        )
    );
    ctld.stop().await;
}
