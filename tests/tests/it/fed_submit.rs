//! Federated submission as a user meets it on a three-cluster federation started with
//! `sluice up --clusters 3 --federation fed1`: federated job ids, `--parsable`, `-M`,
//! `--cluster-constraint` against features set with sacctmgr, the refusals of Slurm, and where
//! a job runs when its origin has room (there, as in Slurm) and when it has none.

use crate::common;

use common::federation::{Federation, parse_job_id};

/// The federation id bits of a federated job id.
fn origin_bits(job: u32) -> u32 {
    job >> 26
}

/// The cluster that ran `job`, from its output file (`--wrap 'echo $SLURM_CLUSTER_NAME'`).
fn ran_on(fed: &Federation, job: u32) -> String {
    let file = fed.work.join(format!("slurm-{job}.out"));
    let mut text = String::new();
    fed.wait_for(&format!("job {job}'s output"), || {
        text = std::fs::read_to_string(&file).unwrap_or_default();
        text.ends_with('\n')
    });
    text.trim().to_string()
}

#[test]
fn federated_ids_parsable_and_dash_m() {
    let fed = Federation::start(3);

    // Plain sbatch prints a federated id carrying the origin's federation id.
    let out = fed.ok(0, "sbatch", &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
    let id: u32 = out
        .trim()
        .strip_prefix("Submitted batch job ")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("sbatch printed {out:?}"));
    assert!(id >= 1 << 26, "a federated id: {id}");
    let first_origin = origin_bits(id);
    assert!(fed.names.contains(&ran_on(&fed, id)));

    // --parsable: the id alone; each cluster issues ids with its own origin bits.
    let mut origins = vec![first_origin];
    for i in 1..3 {
        let out = fed.ok(i, "sbatch", &["--parsable", "--wrap", "true"]);
        let job = parse_job_id(&out).unwrap_or_else(|| panic!("{out:?}"));
        assert_eq!(out.trim(), job.to_string(), "the id alone");
        origins.push(origin_bits(job));
    }
    origins.sort_unstable();
    origins.dedup();
    assert_eq!(
        origins.len(),
        3,
        "three distinct federation ids: {origins:?}"
    );

    // -M cluster2 from cluster1: "Submitted batch job N on cluster cluster2", runs there.
    let out = fed.ok(
        0,
        "sbatch",
        &["-M", "cluster2", "--wrap", "echo $SLURM_CLUSTER_NAME"],
    );
    let rest = out
        .trim()
        .strip_prefix("Submitted batch job ")
        .unwrap_or_else(|| panic!("{out:?}"));
    let (job, cluster) = rest
        .split_once(" on cluster ")
        .unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(cluster, "cluster2");
    let job: u32 = job.parse().unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(ran_on(&fed, job), "cluster2");

    // --parsable with -M: "N;cluster".
    let out = fed.ok(
        0,
        "sbatch",
        &[
            "--parsable",
            "-M",
            "cluster3",
            "--wrap",
            "echo $SLURM_CLUSTER_NAME",
        ],
    );
    let (job, cluster) = out
        .trim()
        .split_once(';')
        .unwrap_or_else(|| panic!("{out:?}"));
    assert_eq!(cluster, "cluster3");
    let job: u32 = job.parse().unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(ran_on(&fed, job), "cluster3");
}

#[test]
fn cluster_constraint_follows_features_set_with_sacctmgr() {
    let fed = Federation::start(3);
    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=gpu"]);
    fed.sacctmgr(&["modify", "cluster", "cluster3", "set", "features=bigmem"]);
    let shown = fed.sacctmgr(&["-n", "-P", "show", "cluster", "format=cluster,features"]);
    assert!(shown.lines().any(|l| l == "cluster2|gpu"), "{shown}");

    let mut away = Vec::new();
    for _ in 0..3 {
        let job = fed.sbatch(
            0,
            &[
                "--cluster-constraint=gpu",
                "--wrap",
                "echo $SLURM_CLUSTER_NAME",
            ],
        );
        assert_eq!(ran_on(&fed, job), "cluster2", "job {job}");
        away.push(job);
    }
    // sacct: the run, from the cluster that ran it; -D also the origin's REVOKED record.
    let sacct = |extra: &[&str]| {
        let mut args = vec![
            "--federation",
            "-X",
            "-n",
            "-P",
            "-o",
            "JobIDRaw,State,Cluster",
        ];
        args.extend_from_slice(extra);
        fed.ok(2, "sacct", &args)
    };
    for job in &away {
        let rows = |text: &str| -> Vec<String> {
            let mut v: Vec<String> = text
                .lines()
                .filter(|l| l.starts_with(&format!("{job}|")))
                .map(str::to_string)
                .collect();
            v.sort();
            v
        };
        fed.wait_for(&format!("sacct to record job {job}"), || {
            rows(&sacct(&[])) == [format!("{job}|COMPLETED|cluster2")]
        });
        assert_eq!(
            rows(&sacct(&["-D"])),
            [
                format!("{job}|COMPLETED|cluster2"),
                format!("{job}|REVOKED|cluster1")
            ]
        );
    }
    let job = fed.sbatch(
        1,
        &[
            "--cluster-constraint=!gpu,bigmem",
            "--wrap",
            "echo $SLURM_CLUSTER_NAME",
        ],
    );
    assert_eq!(ran_on(&fed, job), "cluster1", "neither gpu nor bigmem");

    let out = fed.cmd(
        0,
        "sbatch",
        &["--cluster-constraint=nosuch", "--wrap", "true"],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Invalid cluster feature specification"),
        "{out:?}"
    );
}

#[test]
fn drained_and_inactive_clusters_refuse_submissions() {
    let fed = Federation::start(3);
    fed.sacctmgr(&["modify", "cluster", "cluster2", "set", "features=gpu"]);
    fed.sacctmgr(&[
        "modify",
        "cluster",
        "where",
        "cluster=cluster2,cluster3",
        "set",
        "fedstate=drain",
    ]);
    // The change reaches the controllers within a second; poll for the refusal. The only
    // gpu cluster is draining: nothing is left for the job.
    let mut last = None;
    fed.wait_for("the draining gpu cluster to be left out", || {
        let out = fed.cmd(0, "sbatch", &["--cluster-constraint=gpu", "--wrap", "true"]);
        let refused = out.code != 0;
        last = Some(out);
        refused
    });
    let out = last.expect("one attempt");
    assert!(
        out.stderr
            .contains("No eligible clusters for federated job"),
        "{out:?}"
    );
    // A draining origin refuses new jobs (Slurm: submissions disabled while draining).
    let out = fed.cmd(1, "sbatch", &["--wrap", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("System submissions disabled"),
        "{out:?}"
    );
    // Jobs from the active cluster run there only.
    let job = fed.sbatch(0, &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
    assert_eq!(ran_on(&fed, job), "cluster1");

    fed.sacctmgr(&[
        "modify",
        "cluster",
        "where",
        "cluster=cluster2,cluster3",
        "set",
        "fedstate=active",
    ]);
    fed.sacctmgr(&["modify", "cluster", "cluster1", "set", "fedstate=inactive"]);
    let mut last = None;
    fed.wait_for("cluster1 to refuse submissions as INACTIVE", || {
        let out = fed.cmd(0, "sbatch", &["--wrap", "true"]);
        let done = out.stderr.contains("System submissions disabled");
        last = Some(out);
        done
    });
    assert_ne!(last.expect("one attempt").code, 0);
    // The other clusters take jobs again, and no job lands on the inactive one.
    for _ in 0..3 {
        let job = fed.sbatch(2, &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
        assert_ne!(ran_on(&fed, job), "cluster1");
    }
}

#[test]
fn an_origin_with_room_runs_its_jobs_and_one_without_room_goes_to_a_sibling() {
    let fed = Federation::start(2);
    // An idle origin starts each job itself (the start carries the offer, so the sibling is
    // never offered it): every one runs on cluster1, where a race with the sibling would
    // have sent about half of them to cluster2.
    // Each job waits for the one before it to have left cluster1's nodes: a job still
    // completing there (its output written) leaves no room, and the next one would rightly go
    // to the sibling.
    for _ in 0..6 {
        fed.wait_for("cluster1's nodes to be idle", || {
            let out = fed.cmd(0, "sinfo", &["-h", "-o", "%t"]);
            out.stdout.lines().all(|state| state.trim() == "idle")
        });
        let job = fed.sbatch(0, &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
        assert_eq!(ran_on(&fed, job), "cluster1", "job {job}");
    }
    // cluster1 full: the next job is offered to its sibling and runs there.
    let filler = fed
        .sbatch(0, &["--exclusive", "--wrap", "sleep 300"])
        .to_string();
    fed.wait_for("the filler to run on cluster1", || {
        let out = fed.cmd(0, "squeue", &["-h", "-j", &filler, "-o", "%t"]);
        out.stdout.trim() == "R"
    });
    let job = fed.sbatch(0, &["--wrap", "echo $SLURM_CLUSTER_NAME"]);
    assert_eq!(ran_on(&fed, job), "cluster2");
    fed.ok(0, "scancel", &[&filler]);
}
