//! The real commands against a federation: a real accounting daemon holding clusters c1, c2
//! (federation fed1) and c3 (no federation), and fake controllers registered in it. Covers
//! resolving `-M` and `--federation` through the dbd, squeue's merged and per-cluster views,
//! sbatch -M picking the soonest cluster, scancel --sibling / -M, sinfo --federation / -M and
//! scontrol show federation.

use crate::fed_support;

use fed_support::Fed;
use sluice_vocab::JobState;
use sluice_wire::proto::{JobInfo, NodeInfo, PartitionInfo};

const SQUEUE: &str = env!("CARGO_BIN_EXE_squeue");
const SBATCH: &str = env!("CARGO_BIN_EXE_sbatch");
const SCANCEL: &str = env!("CARGO_BIN_EXE_scancel");
const SINFO: &str = env!("CARGO_BIN_EXE_sinfo");
const SCONTROL: &str = env!("CARGO_BIN_EXE_scontrol");

const NOW: i64 = 1_795_255_200;
/// Federated ids of origin c1 (fed id 1).
const J1: u32 = (1 << 26) | 1;
const J2: u32 = (1 << 26) | 2;

fn job(id: u32, cluster: &str, origin: &str, state: JobState) -> JobInfo {
    let fed = !origin.is_empty();
    JobInfo {
        job_id: id,
        name: format!("j{}", id & 0xff),
        uid: 1000,
        user: "alice".into(),
        partition: "debug".into(),
        state: state.stored(),
        reason: "None".into(),
        cluster: cluster.into(),
        now: NOW,
        fed_origin: origin.into(),
        fed_viable: if fed {
            vec!["c1".into(), "c2".into()]
        } else {
            vec![]
        },
        fed_viable_raw: if fed { 0b11 } else { 0 },
        ..Default::default()
    }
}

/// c1 is the origin of J1 (pending on c1 and c2) and J2 (running on c2: c1 keeps a revoked
/// tracker); each cluster also has a plain job.
fn federation() -> Fed {
    let fed = Fed::start(&["c1", "c2", "c3"], &["c1", "c2"], &["c1", "c2", "c3"]);
    let origin_j1 = JobInfo {
        fed_active: vec!["c1".into(), "c2".into()],
        fed_active_raw: 0b11,
        ..job(J1, "c1", "c1", JobState::Pending)
    };
    fed.ctld("c1").lock().unwrap().jobs = vec![
        origin_j1,
        job(J2, "c1", "c1", JobState::Revoked),
        job(5, "c1", "", JobState::Running),
    ];
    fed.ctld("c2").lock().unwrap().jobs = vec![
        job(J1, "c2", "c1", JobState::Pending),
        job(J2, "c2", "c1", JobState::Running),
        job(7, "c2", "", JobState::Pending),
    ];
    fed.ctld("c3").lock().unwrap().jobs = vec![job(9, "c3", "", JobState::Pending)];
    fed
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    v.sort();
    v
}

#[test]
fn squeue_views_merge_members_or_list_each_cluster() {
    let fed = federation();
    let fmt = "jobid:10,cluster:4,origin:4,siblingsactive:7,siblingsviable:7,statecompact:2";
    let out = fed.run(SQUEUE, &["--federation", "-h", "-O", fmt]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        sorted_lines(&out.stdout),
        vec![
            "5         c1  NA  NA     NA     R".to_string(),
            "67108865  c1  c1  c1,c2  c1,c2  PD".to_string(),
            "67108866  c2  c1  NA     c1,c2  R".to_string(),
        ]
    );
    assert_eq!(
        fed.ctld("c3").lock().unwrap().list_calls,
        0,
        "c3 is not a member"
    );

    let out = fed.run(SQUEUE, &["--sibling", "-h", "-O", "jobid:10,cluster:3"]);
    assert_eq!(
        sorted_lines(&out.stdout),
        vec![
            "5         c1".to_string(),
            "67108865  c1".to_string(),
            "67108865  c2".to_string(),
            "67108866  c2".to_string(),
        ],
        "every live copy; other clusters' plain jobs are hidden"
    );

    let out = fed.run(SQUEUE, &["--local", "--federation", "-h", "-o", "%i"]);
    assert_eq!(sorted_lines(&out.stdout), vec!["5", "67108865"]);

    let out = fed.run(SQUEUE, &["-M", "c2,c3", "-o", "%i %t"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "CLUSTER: c2\nJOBID ST\n7 PD\n67108865 PD\n67108866 R\n\nCLUSTER: c3\nJOBID ST\n9 PD\n"
    );
}

#[test]
fn unknown_clusters_get_slurms_errors() {
    let fed = Fed::start(&["c1", "c2"], &[], &["c1"]);
    let out = fed.run(SQUEUE, &["-M", "c1,nope"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "squeue: error: No cluster 'nope' known by database.\n\
         squeue: error: 'nope' can't be reached now, or it is an invalid entry for --cluster.  \
         Use 'sacctmgr list clusters' to see available clusters.\n"
    );
    let out = fed.run(SINFO, &["-M", "c2"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("sinfo: error: 'c2' can't be reached now"),
        "c2 never registered: {}",
        out.stderr
    );
    // Outside a federation --federation is the local view.
    fed.ctld("c1").lock().unwrap().jobs = vec![job(3, "c1", "", JobState::Pending)];
    let out = fed.run(SQUEUE, &["--federation", "-h", "-o", "%i"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "3\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn sbatch_m_submits_to_the_soonest_cluster() {
    let fed = federation();
    fed.ctld("c1").lock().unwrap().will_run = Some(NOW + 300);
    fed.ctld("c2").lock().unwrap().will_run = Some(NOW + 100);
    fed.ctld("c3").lock().unwrap().will_run = Some(NOW + 50);
    let out = fed.run(
        SBATCH,
        &["-M", "c2,c3", "--cluster-constraint=!slow", "--wrap=true"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "Submitted batch job 1 on cluster c3\n");
    let c3 = fed.ctld("c3");
    let sent = c3.lock().unwrap().submitted.clone();
    let real: Vec<_> = sent.iter().filter(|r| !r.test_only).collect();
    assert_eq!(real.len(), 1, "one real submission, to c3");
    assert_eq!(real[0].clusters, vec!["c2", "c3"], "the -M list travels");
    assert_eq!(real[0].cluster_constraint, "!slow");
    assert!(
        fed.ctld("c2")
            .lock()
            .unwrap()
            .submitted
            .iter()
            .all(|r| r.test_only),
        "c2 was only asked when it would start the job"
    );

    // Ties go to the local cluster (c1), whatever the order given.
    fed.ctld("c2").lock().unwrap().will_run = Some(NOW + 300);
    let out = fed.run(SBATCH, &["--parsable", "-M", "c2,c1", "--wrap=true"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "1;c1\n"),
        "{}",
        out.stderr
    );

    // A cluster that cannot run the job is skipped; when none can, Slurm's error.
    fed.ctld("c3").lock().unwrap().will_run = None;
    let out = fed.run(SBATCH, &["--parsable", "-M", "c3,c2", "--wrap=true"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "1;c2\n"),
        "{}",
        out.stderr
    );
    fed.ctld("c2").lock().unwrap().will_run = None;
    let out = fed.run(SBATCH, &["-M", "c3,c2", "--wrap=true"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "sbatch: error: Can't run on any of the clusters given\n\
         sbatch: error: 'c3,c2' can't be reached now, or it is an invalid entry for --cluster.  \
         Use 'sacctmgr list clusters' to see available clusters.\n"
    );

    // One named cluster: submitted there directly, no will-run question.
    let before = fed.ctld("c3").lock().unwrap().submitted.len();
    let out = fed.run(SBATCH, &["-M", "c3", "--wrap=true"]);
    assert_eq!(
        out.stdout, "Submitted batch job 2 on cluster c3\n",
        "{}",
        out.stderr
    );
    let after = fed.ctld("c3").lock().unwrap().submitted.clone();
    assert_eq!(after.len(), before + 1);
    assert!(!after[before].test_only);
}

#[test]
fn scancel_sibling_goes_to_the_named_cluster() {
    let fed = federation();
    let out = fed.run(SCANCEL, &["-M", "c2", "--sibling=c1", &J2.to_string()]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "scancel: error: Kill job error on job id 67108866: Job is no longer pending execution\n"
    );
    let c2 = fed.ctld("c2");
    let asked = c2.lock().unwrap().cancels.clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].sibling.as_str(), asked[0].job_ids.clone()),
        ("c1", vec![J2])
    );
    assert!(fed.ctld("c1").lock().unwrap().cancels.is_empty());

    let out = fed.run(SCANCEL, &["--sibling=c2", &J1.to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let c1 = fed.ctld("c1");
    assert_eq!(c1.lock().unwrap().cancels[0].sibling, "c2");
}

fn nodes(prefix: &str, n: usize) -> (Vec<NodeInfo>, Vec<PartitionInfo>) {
    let nodes: Vec<NodeInfo> = (1..=n)
        .map(|i| NodeInfo {
            name: format!("{prefix}{i}"),
            state: "IDLE".into(),
            cpus: 2,
            partitions: vec!["debug".into()],
            ..Default::default()
        })
        .collect();
    let part = PartitionInfo {
        name: "debug".into(),
        is_default: true,
        state: "UP".into(),
        max_time_min: -1,
        max_nodes: -1,
        nodes: nodes.iter().map(|n| n.name.clone()).collect(),
        ..Default::default()
    };
    (nodes, vec![part])
}

#[test]
fn sinfo_shows_the_federation_in_one_table_and_m_per_cluster() {
    let fed = federation();
    for (c, p, n) in [("c1", "a", 2), ("c2", "b", 1), ("c3", "x", 1)] {
        let (nodes, parts) = nodes(p, n);
        let ctld = fed.ctld(c);
        let mut s = ctld.lock().unwrap();
        s.nodes = nodes;
        s.partitions = parts;
    }
    let out = fed.run(SINFO, &["--federation"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "PARTITION CLUSTER  AVAIL  TIMELIMIT  NODES  STATE NODELIST\n\
         debug*    c1          up   infinite      2   idle a[1-2]\n\
         debug*    c2          up   infinite      1   idle b1\n"
    );
    let out = fed.run(SINFO, &["-M", "c3,c2", "-o", "%P %N"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "CLUSTER: c3\nPARTITION NODELIST\ndebug* x1\n\nCLUSTER: c2\nPARTITION NODELIST\ndebug* b1\n"
    );
}

#[test]
fn scontrol_shows_the_federation_from_the_dbd() {
    let fed = federation();
    fed.admin(|mut c| async move {
        c.modify_clusters(sluice_wire::proto::ModifyClustersRequest {
            names: vec!["c2".into()],
            features: Some(sluice_wire::proto::ListEdit {
                op: sluice_wire::proto::ListOp::Set as i32,
                items: vec!["gpu".into()],
            }),
            commit: true,
            ..Default::default()
        })
        .await
        .map(|_| ())
    });
    let out = fed.run(SCONTROL, &["show", "federation"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "Federation: fed1\n\
             Self:       c1:127.0.0.1:{} ID:1 FedState:ACTIVE Features:\n\
             Sibling:    c2:127.0.0.1:{} ID:2 FedState:ACTIVE Features:gpu \
             PersistConnSend/Recv:No/No Synced:No\n",
            fed.port("c1"),
            fed.port("c2")
        )
    );
}
