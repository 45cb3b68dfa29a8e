//! The accounting daemon as a process: configuration errors, key checks, request
//! authentication, graceful shutdown, daemonizing, and data surviving restarts on every backend.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{CmdOutput, DAEMON_TIMEOUT, Dbd, bin, block_on, run, write_key};
use sluice_wire::auth::{AUTH_ERROR, Binding, Claims, Key, Signer};
use sluice_wire::client::connect_dbd;
use sluice_wire::proto::accounting_client::AccountingClient;
use sluice_wire::proto::{AddClustersRequest, ListClustersRequest, PingRequest};
use tonic::Code;

/// Runs `sluice-dbd -D -f DIR/slurmdbd.conf` over `conf`, expecting it to exit by itself.
fn run_dbd(dir: &Path, conf: &str) -> CmdOutput {
    common::write_dbd_conf(dir, conf);
    let mut cmd = Command::new(bin("sluice-dbd"));
    cmd.arg("-D").arg("-f").arg(dir.join("slurmdbd.conf"));
    run(&mut cmd, None)
}

#[test]
fn bad_values_stop_the_daemon_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    write_key(dir.path());
    let conf = dir.path().join("slurmdbd.conf").display().to_string();
    for (text, line, key) in [
        ("DbdHost=127.0.0.1\nDbdPort=http\n", 2, "DbdPort"),
        ("StorageType=accounting_storage/oracle\n", 1, "StorageType"),
        ("DbdPort=0\n\nDebugLevel=loud\n", 3, "DebugLevel"),
        ("SlurmUser=no-such-user-here\n", 1, "SlurmUser"),
    ] {
        let out = run_dbd(dir.path(), text);
        assert_ne!(out.code, 0, "{text:?} was accepted");
        assert!(
            out.stderr.contains(&format!("{conf}:{line}:")) && out.stderr.contains(key),
            "{text:?}: stderr was {:?}",
            out.stderr
        );
    }
    let out = run_dbd(dir.path(), "not a pair\n");
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains(&format!("{conf}:1:")), "{}", out.stderr);
}

#[test]
fn unknown_keys_are_logged_and_ignored() {
    let dbd = Dbd::start_with_conf("sqlite", &["ArchiveJobs=yes"]);
    let log = dbd.log();
    assert!(log.contains("unknown key ArchiveJobs"), "{log}");
    assert!(log.contains("slurmdbd.conf:"), "{log}");
}

#[test]
fn keys_others_can_read_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let conf = "DbdHost=127.0.0.1\nDbdPort=0\n";
    let out = run_dbd(dir.path(), conf);
    assert_ne!(out.code, 0, "started without a key");
    assert!(out.stderr.contains("slurm.key"), "{}", out.stderr);

    write_key(dir.path());
    let key = dir.path().join("slurm.key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run_dbd(dir.path(), conf);
    assert_ne!(out.code, 0, "started with a world-readable key");
    assert!(
        out.stderr.contains(&key.display().to_string())
            && out.stderr.contains("readable only by its owner"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_slurmdbd_conf_others_may_read_is_refused_in_slurmdbds_words() {
    let dir = tempfile::tempdir().unwrap();
    write_key(dir.path());
    let conf = dir.path().join("slurmdbd.conf");
    for mode in [0o644, 0o640, 0o604] {
        common::write_dbd_conf(dir.path(), "DbdHost=127.0.0.1\nDbdPort=0\n");
        std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(mode)).unwrap();
        let mut cmd = Command::new(bin("sluice-dbd"));
        cmd.arg("-D").arg("-f").arg(&conf);
        let out = run(&mut cmd, None);
        assert_ne!(out.code, 0, "started with a mode {mode:o} slurmdbd.conf");
        assert_eq!(
            out.stderr.trim_end(),
            format!(
                "sluice-dbd: error: slurmdbd.conf file {} should be 600 is {mode:o} accessible for group or others",
                conf.display()
            )
        );
    }
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user and chown")]
fn a_slurmdbd_conf_not_owned_by_the_slurm_user_is_refused() {
    let user = common::users::TestUser::create("dbdconf");
    let dir = tempfile::tempdir().unwrap();
    write_key(dir.path());
    common::write_dbd_conf(dir.path(), "DbdHost=127.0.0.1\nDbdPort=0\n");
    let conf = dir.path().join("slurmdbd.conf");
    std::os::unix::fs::chown(&conf, Some(user.uid), None).unwrap();
    let mut cmd = Command::new(bin("sluice-dbd"));
    cmd.arg("-D").arg("-f").arg(&conf);
    let out = run(&mut cmd, None);
    assert_ne!(
        out.code, 0,
        "started with a slurmdbd.conf owned by {}",
        user.name
    );
    assert_eq!(
        out.stderr.trim_end(),
        format!(
            "sluice-dbd: error: slurmdbd.conf not owned by SlurmUser {}!=0 ({} must be owned by root)",
            user.uid,
            conf.display()
        )
    );
}

#[test]
fn only_fresh_requests_signed_with_the_shared_key_are_served() {
    let dbd = Dbd::start();
    let port = dbd.port();
    let key = dbd.key();
    block_on(async {
        let mut good = connect_dbd("127.0.0.1", port, Signer::new(key.clone(), 0))
            .await
            .unwrap();
        let reply = good.ping(PingRequest {}).await.unwrap().into_inner();
        assert_eq!(reply.caller_uid, 0);
        assert!(reply.caller_is_admin, "root is an administrator");
        let reply = connect_dbd("127.0.0.1", port, Signer::new(key.clone(), 4321))
            .await
            .unwrap()
            .ping(PingRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reply.caller_uid, 4321);
        assert!(!reply.caller_is_admin);

        let channel = tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let unsigned = AccountingClient::new(channel.clone())
            .ping(PingRequest {})
            .await;
        let wrong_key = AccountingClient::new(
            Signer::new(Key::from_bytes(vec![7; 64]), 0).wrap(channel.clone()),
        )
        .ping(PingRequest {})
        .await;
        let now = chrono_now();
        let stale = with_token(&channel, ping_token(&key, now - 3600)).await;
        let future = with_token(&channel, ping_token(&key, now + 3600)).await;
        let garbage = with_token(&channel, "not-a-token".into()).await;
        // A token is good for one call: the example, replayed 30 s later (well within
        // its freshness) for the same call and for another.
        let once = ping_token(&key, now - 30);
        with_token(&channel, once.clone()).await.unwrap();
        let replayed = with_token(&channel, once).await;
        let add = AddClustersRequest::default();
        let other_call = with_token_call(&channel, ping_token(&key, now), add)
            .await
            .map(|_| tonic::Response::new(sluice_wire::proto::PingReply::default()));
        for (what, result) in [
            ("unsigned", unsigned),
            ("wrong key", wrong_key),
            ("stale", stale),
            ("future", future),
            ("garbage", garbage),
            ("replayed", replayed),
            ("for another method", other_call),
        ] {
            let status = result.expect_err(what);
            assert_eq!(status.code(), Code::Unauthenticated, "{what}: {status:?}");
            assert!(
                status.message().starts_with(AUTH_ERROR),
                "{what}: {status:?}"
            );
        }
        // A refused request changes nothing.
        let adds = AddClustersRequest {
            names: vec!["sneaky".into()],
            commit: true,
            ..Default::default()
        };
        let refused = with_token_call(&channel, ping_token(&key, now - 3600), adds).await;
        assert_eq!(refused.unwrap_err().code(), Code::Unauthenticated);
        let listed = good
            .list_clusters(ListClustersRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert!(listed.clusters.iter().all(|c| c.name != "sneaky"));
    });
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// A root token for a `Ping` of the dbd (an empty message in its gRPC frame) issued at `now`.
fn ping_token(key: &Key, now: i64) -> String {
    key.sign(&Claims {
        uid: 0,
        gid: 0,
        issued: now,
        nonce: sluice_wire::auth::token::new_nonce(),
        binding: Binding::new("/sluice.v1.Accounting/Ping", &[0; 5]),
    })
}

/// A client that sends `token` as it is, whatever its age or origin.
fn fixed_token_client(
    channel: &tonic::transport::Channel,
    token: String,
) -> AccountingClient<
    tonic::service::interceptor::InterceptedService<
        tonic::transport::Channel,
        impl tonic::service::Interceptor,
    >,
> {
    AccountingClient::with_interceptor(channel.clone(), move |mut req: tonic::Request<()>| {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| tonic::Status::internal("bad token"))?;
        req.metadata_mut().insert("authorization", value);
        let version = sluice_wire::protocol::PROTOCOL_VERSION.to_string();
        req.metadata_mut().insert(
            sluice_wire::protocol::PROTOCOL_METADATA,
            version.parse().unwrap(),
        );
        Ok(req)
    })
}

async fn with_token(
    channel: &tonic::transport::Channel,
    token: String,
) -> Result<tonic::Response<sluice_wire::proto::PingReply>, tonic::Status> {
    fixed_token_client(channel, token)
        .ping(PingRequest {})
        .await
}

async fn with_token_call(
    channel: &tonic::transport::Channel,
    token: String,
    req: AddClustersRequest,
) -> Result<tonic::Response<sluice_wire::proto::ChangeReply>, tonic::Status> {
    fixed_token_client(channel, token).add_clusters(req).await
}

#[test]
fn sigterm_stops_the_daemon_with_exit_status_zero() {
    let mut dbd = Dbd::start();
    let status = dbd.stop().expect("it was running");
    assert!(status.success(), "exit status {status}\n{}", dbd.log());
}

/// Adds cluster `name` as root, restarts the daemon and checks the cluster is still there.
fn data_survives_a_restart(mut dbd: Dbd, name: &str) {
    let add = |port, key: Key| async move {
        let mut c = connect_dbd("127.0.0.1", port, Signer::new(key, 0))
            .await
            .unwrap();
        c.add_clusters(AddClustersRequest {
            names: vec![name.to_string()],
            commit: true,
            ..Default::default()
        })
        .await
        .unwrap();
    };
    block_on(add(dbd.port(), dbd.key()));
    dbd.restart();
    let names = block_on(async {
        let mut c = connect_dbd("127.0.0.1", dbd.port(), Signer::new(dbd.key(), 0))
            .await
            .unwrap();
        let reply = c
            .list_clusters(ListClustersRequest::default())
            .await
            .unwrap()
            .into_inner();
        reply
            .clusters
            .into_iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
    });
    assert!(names.iter().any(|n| n == name), "{names:?}\n{}", dbd.log());
}

#[test]
fn sqlite_data_survives_a_restart() {
    data_survives_a_restart(Dbd::start(), "kept");
}

#[test]
fn mariadb_schema_is_created_on_start_and_reopened_on_restart() {
    data_survives_a_restart(Dbd::start_with("mysql"), "on_maria");
}

#[test]
fn postgres_schema_is_created_on_start_and_reopened_on_restart() {
    data_survives_a_restart(Dbd::start_with("postgres"), "on_pg");
}

#[test]
fn without_dash_d_it_daemonizes_and_writes_its_pid_file() {
    let dir = tempfile::tempdir().unwrap();
    write_key(dir.path());
    let pid_file = dir.path().join("run/dbd.pid");
    let port_file = dir.path().join("port");
    common::write_dbd_conf(
        dir.path(),
        &format!(
            "DbdHost=127.0.0.1\nDbdPort=0\nStorageLoc=acct.db\nLogFile=log/dbd.log\nPidFile={}\n",
            pid_file.display()
        ),
    );
    let mut cmd = Command::new(bin("sluice-dbd"));
    cmd.arg("-f")
        .arg(dir.path().join("slurmdbd.conf"))
        .env("SLUICE_PORT_FILE", &port_file);
    let out = run(&mut cmd, None);
    assert_eq!(out.code, 0, "{out:?}");

    let deadline = Instant::now() + DAEMON_TIMEOUT;
    while !port_file.exists() {
        assert!(Instant::now() < deadline, "the daemon never served");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(pid);
    let port: u16 = std::fs::read_to_string(&port_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let key = Key::load(&dir.path().join("slurm.key")).unwrap();
    block_on(async {
        let mut c = connect_dbd("127.0.0.1", port, Signer::new(key, 0))
            .await
            .unwrap();
        c.ping(PingRequest {}).await.unwrap();
    });
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    // Not our child: it is gone once its pid file is removed and the pid stops answering.
    while nix::sys::signal::kill(pid, None).is_ok() && pid_file.exists() {
        assert!(Instant::now() < deadline, "the daemon ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = std::fs::read_to_string(dir.path().join("log/dbd.log")).unwrap();
    assert!(log.contains("SIGTERM received"), "{log}");
}
