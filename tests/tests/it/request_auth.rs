//! Issue 11: many users share the hosts and nobody can act as someone else. Every daemon
//! (dbd, controller, node daemon) refuses a token that is forged, used a second time, or used
//! for another method or body than it was made for; a node daemon launches nothing without the
//! controller's job credential naming that job, step, user and node, and logs the refusal.

use crate::common;

use std::path::PathBuf;

use common::cluster::Cluster;
use common::raw_rpc::{channel, key_token, sending, user_token};
use common::users::TestUser;
use sluice_cli::slurm_conf::SlurmConf;
use sluice_vocab::cluster_conf::CtldConf;
use sluice_wire::auth::{AUTH_ERROR, KEY_FILE, Key, sack};
use sluice_wire::proto::accounting_client::AccountingClient;
use sluice_wire::proto::controller_client::ControllerClient;
use sluice_wire::proto::node_daemon_client::NodeDaemonClient;
use sluice_wire::proto::{
    CreateStepRequest, LaunchBatchRequest, ListJobsRequest, PingRequest, RunStepRequest,
};
use tonic::Code;

/// Where each daemon of a one-node cluster listens: dbd, controller, node daemon.
struct Addrs {
    dbd: (String, u16),
    ctld: (String, u16),
    noded: (String, u16),
    node: String,
}

fn addrs(c: &Cluster) -> Addrs {
    let conf = SlurmConf::read(&c.conf()).unwrap();
    let (ctld_conf, _) = CtldConf::load(&c.conf()).unwrap();
    let node = &ctld_conf.nodes[0];
    Addrs {
        dbd: (conf.dbd_host.clone(), conf.dbd_port),
        ctld: (conf.ctld_host.clone(), conf.ctld_port),
        noded: (node.addr.clone(), node.port),
        node: node.name.clone(),
    }
}

fn key(c: &Cluster) -> Key {
    Key::load(&c.conf().parent().unwrap().join(KEY_FILE)).unwrap()
}

/// Asserts a refusal as `Unauthenticated` with Slurm's words and `why`.
fn refused<T: std::fmt::Debug>(what: &str, result: Result<T, tonic::Status>, why: &str) {
    let status = result.expect_err(what);
    assert_eq!(status.code(), Code::Unauthenticated, "{what}: {status:?}");
    assert_eq!(
        status.message(),
        format!("{AUTH_ERROR}: {why}"),
        "{what}: {status:?}"
    );
}

#[test]
fn every_daemon_refuses_forged_replayed_and_misdirected_tokens() {
    let c = Cluster::start(1);
    let a = addrs(&c);
    let key = key(&c);
    let forger = Key::from_bytes(vec![7; 64]);
    common::block_on(async {
        // The accounting daemon.
        let ch = channel(&a.dbd.0, a.dbd.1).await;
        let ping = "/sluice.v1.Accounting/Ping";
        let token = key_token(&key, 0, ping, &PingRequest {});
        let dbd =
            |t: &str| AccountingClient::with_interceptor(ch.clone(), sending("Bearer ", t.into()));
        dbd(&token).ping(PingRequest {}).await.unwrap();
        refused(
            "dbd replay",
            dbd(&token).ping(PingRequest {}).await,
            "credential already used (replayed)",
        );
        let forged = key_token(&forger, 0, ping, &PingRequest {});
        refused(
            "dbd forged",
            dbd(&forged).ping(PingRequest {}).await,
            "bad signature: signature does not match",
        );

        // The controller: the example, a token replayed 30 s later for another call,
        // is refused whether the first call was made or not.
        let ch = channel(&a.ctld.0, a.ctld.1).await;
        let ctld =
            |t: &str| ControllerClient::with_interceptor(ch.clone(), sending("Bearer ", t.into()));
        let token = key_token(&key, 0, "/sluice.v1.Controller/Ping", &PingRequest {});
        refused(
            "ctld other method",
            ctld(&token).list_jobs(ListJobsRequest::default()).await,
            "credential was issued for /sluice.v1.Controller/Ping, not /sluice.v1.Controller/ListJobs",
        );
        ctld(&token).ping(PingRequest {}).await.unwrap();
        refused(
            "ctld replay",
            ctld(&token).ping(PingRequest {}).await,
            "credential already used (replayed)",
        );
        let list = |jobs: Vec<u32>| ListJobsRequest {
            job_ids: jobs,
            ..Default::default()
        };
        let token = key_token(&key, 0, "/sluice.v1.Controller/ListJobs", &list(vec![1]));
        refused(
            "ctld other body",
            ctld(&token).list_jobs(list(vec![2])).await,
            "credential was issued for another request body",
        );
        let forged = key_token(&forger, 0, "/sluice.v1.Controller/Ping", &PingRequest {});
        refused(
            "ctld forged",
            ctld(&forged).ping(PingRequest {}).await,
            "bad signature: signature does not match",
        );

        // The node daemon.
        let ch = channel(&a.noded.0, a.noded.1).await;
        let noded =
            |t: &str| NodeDaemonClient::with_interceptor(ch.clone(), sending("Bearer ", t.into()));
        let token = key_token(&key, 0, "/sluice.v1.NodeDaemon/Ping", &PingRequest {});
        noded(&token).ping(PingRequest {}).await.unwrap();
        refused(
            "noded replay",
            noded(&token).ping(PingRequest {}).await,
            "credential already used (replayed)",
        );
        let launch = LaunchBatchRequest {
            job_id: 1,
            ..Default::default()
        };
        refused(
            "noded other method",
            noded(&key_token(&key, 0, "/sluice.v1.NodeDaemon/Ping", &launch))
                .launch_batch(launch.clone())
                .await,
            "credential was issued for /sluice.v1.NodeDaemon/Ping, not /sluice.v1.NodeDaemon/LaunchBatch",
        );
        let forged = key_token(&forger, 0, "/sluice.v1.NodeDaemon/Ping", &PingRequest {});
        refused(
            "noded forged",
            noded(&forged).ping(PingRequest {}).await,
            "bad signature: signature does not match",
        );
    });
}

/// Lets users reach the site (its temp dir is 0700) and write in the work directory.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let open = |p: PathBuf, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(c.dir().parent().unwrap().to_path_buf(), 0o755);
    open(c.work.clone(), 0o1777);
}

fn job_id(out: &common::CmdOutput) -> u32 {
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a job id: {out:?}"))
}

/// Asserts a launch refused for its job credential, with `why`.
fn denied<T>(what: &str, result: Result<T, tonic::Status>, why: &str) {
    let Err(status) = result else {
        panic!("{what}: launched");
    };
    assert_eq!(status.code(), Code::PermissionDenied, "{what}: {status:?}");
    assert_eq!(
        status.message(),
        format!("Invalid job credential: {why}"),
        "{what}"
    );
}

/// A step of `job` as `user` running `sh -c script` on `node`.
fn step(job: u32, user: &TestUser, node: &str, script: &str) -> RunStepRequest {
    RunStepRequest {
        job_id: job,
        step_id: 0,
        uid: user.uid,
        gid: user.gid,
        argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
        workdir: "/tmp".into(),
        node_list: node.to_string(),
        node_count: 1,
        ntasks: 1,
        tasks_here: 1,
        user: user.name.clone(),
        ..Default::default()
    }
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create a user")]
fn a_node_daemon_runs_nothing_without_the_controllers_credential_for_it() {
    let user = TestUser::create("launch");
    // Root's job and the user's run side by side.
    let c = Cluster::start(2);
    open_site(&c);
    let a = addrs(&c);
    let conf = c.conf();
    let socket = sack::socket_path(conf.parent().unwrap());
    let as_user = |program: &str, args: &[&str]| {
        let mut cmd = c.command(program, args);
        cmd.env("SLURM_CONF", &conf);
        common::run(user.apply(&mut cmd), None)
    };
    let proof = c.work.join("proof");
    let script = format!("id > {}", proof.display());
    let run_step = "/sluice.v1.NodeDaemon/RunStep";

    // Root's running job, and one of the user's own.
    let roots = c.sbatch(&["--wrap", "sleep 300"]);
    c.wait_state(roots, "RUNNING");
    let own = job_id(&as_user("sbatch", &["--parsable", "--wrap", "sleep 300"]));
    c.wait_state(own, "RUNNING");

    common::block_on(async {
        let ch = channel(&a.noded.0, a.noded.1).await;
        let noded =
            |t: String| NodeDaemonClient::with_interceptor(ch.clone(), sending("Bearer ", t));
        // The example: the user's own token, a made-up job id, then root's job.
        for (job, what) in [(4242, "made-up job"), (roots, "root's job")] {
            let req = step(job, &user, &a.node, &script);
            let token = user_token(&user, &socket, run_step, &req);
            denied(what, noded(token).run_step(req).await, "none given");
        }
        // The credential of the user's own step, for root's job (or as another user).
        let ctld_ch = channel(&a.ctld.0, a.ctld.1).await;
        let create = CreateStepRequest {
            job_id: own,
            ntasks: Some(1),
            ..Default::default()
        };
        let token = user_token(&user, &socket, "/sluice.v1.Controller/CreateStep", &create);
        let created = ControllerClient::with_interceptor(ctld_ch, sending("Bearer ", token))
            .create_step(create)
            .await
            .unwrap()
            .into_inner();
        let cred = created
            .credential
            .clone()
            .expect("the controller issues a step credential");
        let mut stolen = step(roots, &user, &a.node, &script);
        stolen.step_id = created.step_id;
        stolen.credential = Some(cred.clone());
        let token = user_token(&user, &socket, run_step, &stolen);
        denied(
            "a credential of another job",
            noded(token).run_step(stolen).await,
            &format!("it is for {own}.{0}, not {roots}.{0}", created.step_id),
        );
        // Forged: the user's own credential with its body changed to root's job.
        let mut forged = step(roots, &user, &a.node, &script);
        forged.step_id = created.step_id;
        let mut body = sluice_wire::auth::credential::read_unchecked(&cred).unwrap();
        body.job_id = roots;
        forged.credential = Some(sluice_wire::proto::JobCredential {
            body: prost::Message::encode_to_vec(&body),
            signature: cred.signature.clone(),
        });
        let token = user_token(&user, &socket, run_step, &forged);
        denied(
            "a forged credential",
            noded(token).run_step(forged).await,
            "signature does not match",
        );
        // Even the controller's own uid needs a credential to launch a batch script.
        let launch = LaunchBatchRequest {
            job_id: 4243,
            uid: user.uid,
            gid: user.gid,
            node_list: a.node.clone(),
            script: format!("#!/bin/sh\n{script}\n"),
            workdir: "/tmp".into(),
            ..Default::default()
        };
        let token = key_token(&key(&c), 0, "/sluice.v1.NodeDaemon/LaunchBatch", &launch);
        denied(
            "a batch launch",
            noded(token).launch_batch(launch).await,
            "none given",
        );
    });
    assert!(!proof.exists(), "a refused launch ran");
    let logs = c.logs();
    assert!(logs.contains("launch refused"), "{logs}");

    // The user's own step, through srun as usual, still runs.
    let out = as_user(
        "srun",
        &["--jobid", &own.to_string(), "--overlap", "id", "-u"],
    );
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{}\n", user.uid).as_str()),
        "{out:?}"
    );
    c.ok("scancel", &[&roots.to_string(), &own.to_string()]);
}
