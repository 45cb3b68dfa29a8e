//! The `sluice-noded` binary: command line, port file, and a restart (after `kill -9`) that
//! adopts the jobs still running instead of losing them.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;
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

#[tokio::test]
async fn a_killed_daemon_restarts_and_adopts_its_running_jobs() {
    let ctld = FakeCtld::start(&sluice_wire::auth::Key::from_bytes(vec![42; 64]), 0, vec![]).await;
    let cluster = TestCluster::new(ctld.port, "NodeName=n1 NodeAddr=127.0.0.1 Port=0");
    write_key(&cluster);
    let port_file = cluster.path("n1.port");
    let mut daemon = start_binary(&cluster, "n1", &port_file);
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

    let work = cluster.workdir("w");
    let noded = RunningNodedAddr::new(port);
    let mut client = noded.client(&cluster).await;
    let script = "#!/bin/sh\necho $$ > pid\nwhile [ ! -e go ]; do sleep 0.05; done\n";
    client
        .launch_batch(launch_request(77, &work, script))
        .await
        .unwrap();
    let pid: i32 = wait_for_file(&work.join("pid"))
        .await
        .trim()
        .parse()
        .unwrap();

    daemon.0.kill().unwrap();
    daemon.0.wait().unwrap();
    assert!(!is_dead(pid), "the job outlives its node daemon");

    let _daemon = start_binary(&cluster, "n1", &port_file);
    let port2: u16 = wait_for_file(&port_file).await.trim().parse().unwrap();
    let reg = ctld
        .wait_for("registration of the restarted daemon", |r| {
            r.registrations
                .iter()
                .find(|x| x.port == u32::from(port2))
                .cloned()
        })
        .await;
    assert_eq!(reg.running_jobs, vec![77], "the running job is adopted");
    std::fs::write(work.join("go"), "").unwrap();
    let exit = ctld.exit_of(77).await;
    assert_eq!(exit.exit_code, sluice_noded::adopt::UNKNOWN_EXIT_CODE);
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

/// A client for a daemon known only by its port.
struct RunningNodedAddr {
    port: u16,
}

impl RunningNodedAddr {
    fn new(port: u16) -> Self {
        Self { port }
    }

    async fn client(&self, cluster: &TestCluster) -> sluice_wire::client::NodedClient {
        let signer =
            sluice_wire::auth::Signer::new(cluster.key.clone(), nix::unistd::geteuid().as_raw());
        let channel = sluice_wire::client::connect("127.0.0.1", self.port, signer)
            .await
            .unwrap();
        sluice_wire::proto::node_daemon_client::NodeDaemonClient::new(channel)
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
    let mut signer =
        sluice_wire::auth::Signer::new(cluster.key.clone(), nix::unistd::geteuid().as_raw());
    let mut client = sluice_wire::proto::node_daemon_client::NodeDaemonClient::with_interceptor(
        channel,
        move |req| {
            let mut req = tonic::service::Interceptor::call(&mut signer, req)?;
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
