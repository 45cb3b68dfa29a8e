//! Failure management (`SlurmctldPlugin=slurmctld/nonstop`) on a real cluster: hot spares kept
//! from ordinary jobs, a `--no-kill` job surviving a node set DOWN, `WatchJob` hearing of it,
//! the node replaced through the `Nonstop` service (its generated client, as a program linking
//! the library would), the next step running on the new node list, sinfo and sacct telling the
//! truth, `MaxSpareNodeCount` enforced, and `UserDrainAllow` as real Linux users.

use crate::common;

use std::sync::mpsc;
use std::time::Duration;

use common::cluster::Cluster;
use common::users::TestUser;
use sluice_wire::client::SignedChannel;
use sluice_wire::proto::nonstop_client::NonstopClient;
use sluice_wire::proto::{
    DrainNodeRequest, NodeChangeRequest, NonstopEvent, NonstopEventKind, NonstopJobRequest,
};

/// How long an event may take to arrive before the test fails.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Turns failure management on with `nonstop` as `nonstop.conf`: the file beside slurm.conf,
/// the plugin in slurm.conf, and the controller restarted to read them.
pub(crate) fn enable_nonstop(c: &Cluster, nonstop: &str) {
    let conf = c.conf();
    std::fs::write(conf.with_file_name("nonstop.conf"), nonstop).unwrap();
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("SlurmctldPlugin=slurmctld/nonstop\n");
    std::fs::write(&conf, text).unwrap();
    c.kill9_ctld();
    // The node daemons start again too, so that each registers with the new controller before
    // the test goes on: one left to notice the restart at its next heartbeat registers then,
    // and under ReturnToService that brings back a node the test has set DOWN meanwhile.
    let mut n = 1;
    while c.pid(&format!("noded-cluster-clustern{n}")).is_some() {
        c.kill9_noded(&format!("clustern{n}"));
        n += 1;
    }
    c.up();
}

/// The `Nonstop` client of the cluster's controller, as root (an administrator).
async fn client(c: &Cluster) -> NonstopClient<SignedChannel> {
    let conf = sluice_cli::slurm_conf::SlurmConf::read(&c.conf()).unwrap();
    let key = sluice_wire::auth::Key::load(&conf.key_path()).unwrap();
    let signer = sluice_wire::auth::Signer::for_current_user(key);
    let channel = sluice_wire::client::connect(&conf.ctld_host, conf.ctld_port, signer)
        .await
        .unwrap();
    NonstopClient::new(channel)
}

/// Follows job `job`'s events on a task of `rt`; they arrive on the returned channel.
fn watch(rt: &tokio::runtime::Runtime, c: &Cluster, job: u32) -> mpsc::Receiver<NonstopEvent> {
    let (tx, rx) = mpsc::channel();
    let mut stream = rt.block_on(async {
        client(c)
            .await
            .watch_job(NonstopJobRequest { job_id: job })
            .await
            .unwrap()
            .into_inner()
    });
    rt.spawn(async move {
        while let Ok(Some(ev)) = stream.message().await {
            if tx.send(ev).is_err() {
                break;
            }
        }
    });
    rx
}

fn next_event(rx: &mpsc::Receiver<NonstopEvent>, what: &str) -> NonstopEvent {
    rx.recv_timeout(EVENT_TIMEOUT)
        .unwrap_or_else(|e| panic!("no {what} event: {e}"))
}

fn squeue_field(c: &Cluster, job: u32, field: &str) -> String {
    c.ok("squeue", &["-h", "-j", &job.to_string(), "-o", field])
        .trim()
        .to_string()
}

#[test]
fn a_no_kill_job_gets_a_spare_for_its_down_node_and_runs_its_next_step_there() {
    let c = Cluster::start(3);
    enable_nonstop(
        &c,
        "HotSpareCount=debug:1\nMaxSpareNodeCount=1\nTimeLimitExtend=2\n",
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let job = c.sbatch(&["-N2", "-k", "-t", "10", "--wrap", "sleep 600"]);
    c.wait_state(job, "RUNNING");
    assert_eq!(squeue_field(&c, job, "%N"), "clustern[1-2]");
    // clustern3 is the spare: an ordinary job waits although it is idle.
    let ordinary = c.sbatch(&["-N1", "--wrap", "true"]);
    c.wait_for("the ordinary job to wait for resources", || {
        squeue_field(&c, ordinary, "%T %r") == "PENDING Resources"
    });
    assert_eq!(
        c.ok("sinfo", &["-h", "-n", "clustern3", "-o", "%T"]).trim(),
        "idle"
    );

    let events = watch(&rt, &c, job);
    c.ok(
        "scontrol",
        &["update", "NodeName=clustern2", "State=DOWN", "Reason=test"],
    );
    let failed = next_event(&events, "FAILED");
    assert_eq!(failed.kind(), NonstopEventKind::Failed);
    assert_eq!(failed.node, "clustern2");
    assert_eq!(c.state(&job.to_string()), "RUNNING", "--no-kill keeps it");

    let alloc = rt.block_on(async {
        client(&c)
            .await
            .replace_node(NodeChangeRequest {
                job_id: job,
                node: "clustern2".into(),
            })
            .await
            .unwrap()
            .into_inner()
    });
    assert_eq!(alloc.node_list, "clustern[1,3]");
    assert_eq!((alloc.spares_used, alloc.extend_available_minutes), (1, 2));
    let replaced = next_event(&events, "REPLACED");
    assert_eq!(replaced.kind(), NonstopEventKind::Replaced);
    assert_eq!(
        (replaced.node.as_str(), replaced.replacement.as_str()),
        ("clustern2", "clustern3")
    );
    assert_eq!(
        c.ok("sinfo", &["-h", "-n", "clustern2", "-o", "%T"]).trim(),
        "down"
    );

    // The next step runs on the new node list, the spare's node daemon accepting it.
    let out = c.ok(
        "srun",
        &[
            "--jobid",
            &job.to_string(),
            "-N2",
            "-l",
            "printenv",
            "SLURMD_NODENAME",
        ],
    );
    let mut nodes: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["clustern1", "clustern3"], "{out}");
    assert_eq!(squeue_field(&c, job, "%T"), "RUNNING");
    assert_eq!(squeue_field(&c, ordinary, "%T"), "PENDING");

    // MaxSpareNodeCount=1: a second replacement is refused.
    let refused = rt.block_on(async {
        let mut ns = client(&c).await;
        ns.drain_node(DrainNodeRequest {
            job_id: job,
            node: "clustern3".into(),
            reason: "flaky".into(),
        })
        .await
        .unwrap();
        ns.replace_node(NodeChangeRequest {
            job_id: job,
            node: "clustern3".into(),
        })
        .await
        .unwrap_err()
    });
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused.message().contains("MaxSpareNodeCount"),
        "{}",
        refused.message()
    );
    assert_eq!(
        next_event(&events, "FAILING").kind(),
        NonstopEventKind::Failing
    );

    // The end of the job closes the stream; sacct shows the first allocation's RESIZING
    // record, then the job's record with the final one.
    c.ok("scancel", &[&job.to_string()]);
    loop {
        let ev = next_event(&events, "JOB_ENDED");
        if ev.kind() == NonstopEventKind::JobEnded {
            break;
        }
    }
    c.wait_done(job);
    c.wait_for("sacct to show both allocations", || {
        let out = c.ok(
            "sacct",
            &[
                "-n",
                "-X",
                "-j",
                &job.to_string(),
                "-o",
                "State,NodeList%30",
            ],
        );
        let words: Vec<&str> = out.split_whitespace().collect();
        words.len() == 4
            && words[..2] == ["RESIZING", "clustern[1-2]"]
            && words[3] == "clustern[1,3]"
    });
}

#[test]
fn requests_without_the_plugin_are_unimplemented() {
    let c = Cluster::start(1);
    let job = c.sbatch(&["--wrap", "sleep 600"]);
    c.wait_state(job, "RUNNING");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let status = rt.block_on(async {
        client(&c)
            .await
            .job_nodes(NonstopJobRequest { job_id: job })
            .await
            .unwrap_err()
    });
    assert_eq!(status.code(), tonic::Code::Unimplemented);
    assert_eq!(
        status.message(),
        "failure management (SlurmctldPlugin=slurmctld/nonstop) is not configured"
    );
    c.ok("scancel", &[&job.to_string()]);
}

/// Lets the users reach the site and write in the work directory, as on a shared host.
fn open_site(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let dir = c.dir();
    std::fs::set_permissions(dir.parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn user_drain_allow_lets_listed_users_drain_their_own_jobs_nodes_only() {
    let (alan, eve) = (TestUser::create("nsa"), TestUser::create("nse"));
    let c = Cluster::start(3);
    open_site(&c);
    enable_nonstop(&c, &format!("UserDrainAllow={}\n", alan.name));
    let submit = |user: &TestUser| -> u32 {
        let mut cmd = c.command("sbatch", &["--parsable", "-N1", "--wrap", "sleep 600"]);
        let out = common::run(user.apply(&mut cmd), None);
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout.trim().parse().unwrap()
    };
    let (alans, eves) = (submit(&alan), submit(&eve));
    c.wait_state(alans, "RUNNING");
    c.wait_state(eves, "RUNNING");
    let node_of = |job: u32| squeue_field(&c, job, "%N");
    let (alan_node, eve_node) = (node_of(alans), node_of(eves));
    let drain = |user: &TestUser, node: &str| {
        let mut cmd = c.command(
            "scontrol",
            &[
                "update",
                &format!("NodeName={node}"),
                "State=DRAIN",
                "Reason=flaky",
            ],
        );
        common::run(user.apply(&mut cmd), None)
    };
    // Not on another user's node, nor on an idle one.
    for node in [eve_node.as_str(), "clustern3"] {
        let out = drain(&alan, node);
        assert_ne!(out.code, 0, "{out:?}");
        assert!(out.stderr.contains("Access/permission denied"), "{out:?}");
    }
    // Eve is not listed, even for her own job's node.
    let out = drain(&eve, &eve_node);
    assert!(out.stderr.contains("Access/permission denied"), "{out:?}");
    let state = |node: &str| {
        c.ok("sinfo", &["-h", "-n", node, "-o", "%T"])
            .trim()
            .to_string()
    };
    assert_eq!(state(&eve_node), "allocated");
    // Alan drains his own job's node.
    let out = drain(&alan, &alan_node);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(state(&alan_node), "draining");
    c.ok("scancel", &[&alans.to_string(), &eves.to_string()]);
}
