//! Golden outputs of the federation lines of `scontrol show job` and of the federation
//! settings `scontrol update job` passes on.

use sluice_vocab::JobState;
use sluice_wire::proto::{EnvVar, JobInfo};

use super::show;
use super::update::{Update, parse_update};
use crate::timefmt::Zone;

fn fed_job() -> JobInfo {
    JobInfo {
        job_id: (1 << 26) | 3,
        name: "x".into(),
        user: "alice".into(),
        partition: "debug".into(),
        state: JobState::Pending.stored(),
        reason: "Priority".into(),
        time_limit_min: 60,
        node_count: 1,
        cpus: 1,
        ntasks: 1,
        cpus_per_task: 1,
        mem_mb: 100,
        workdir: "/w".into(),
        cluster: "c1".into(),
        fed_origin: "c1".into(),
        fed_viable: vec!["c1".into(), "c2".into()],
        fed_viable_raw: 0b11,
        fed_active: vec!["c2".into()],
        fed_active_raw: 0b10,
        cluster_features: "!highmem".into(),
        ..Default::default()
    }
}

fn lines(j: &JobInfo) -> Vec<String> {
    show::job(j, false, Zone::Utc)
        .lines()
        .map(|l| l.trim_start().to_string())
        .collect()
}

#[test]
fn federated_jobs_show_origin_siblings_and_cluster_features() {
    let l = lines(&fed_job());
    let at = |prefix: &str| {
        l.iter()
            .position(|x| x.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in {l:#?}"))
    };
    assert_eq!(
        l[at("FedOrigin=")],
        "FedOrigin=c1 FedViableSiblings=c1,c2 FedActiveSiblings=c2"
    );
    assert_eq!(l[at("ClusterFeatures=")], "ClusterFeatures=!highmem");
    // Slurm's order: after NodeList/BatchHost, before NumNodes; ClusterFeatures after Features.
    assert!(at("NodeList=") < at("FedOrigin=") && at("FedOrigin=") < at("NumNodes="));
    assert_eq!(at("ClusterFeatures="), at("Features=") + 1);
    assert_eq!(at("OverSubscribe="), at("ClusterFeatures=") + 1);
}

#[test]
fn a_sibling_copy_shows_null_active_siblings_and_plain_jobs_show_none() {
    let sibling = JobInfo {
        cluster: "c2".into(),
        fed_active: vec![],
        fed_active_raw: 0,
        ..fed_job()
    };
    assert!(
        lines(&sibling)
            .contains(&"FedOrigin=c1 FedViableSiblings=c1,c2 FedActiveSiblings=(null)".to_string())
    );
    let plain = JobInfo {
        fed_origin: String::new(),
        fed_viable: vec![],
        fed_viable_raw: 0,
        fed_active: vec![],
        fed_active_raw: 0,
        cluster_features: String::new(),
        ..fed_job()
    };
    let text = show::job(&plain, false, Zone::Utc);
    assert!(
        !text.contains("FedOrigin") && !text.contains("ClusterFeatures"),
        "{text}"
    );
}

#[test]
fn updates_pass_clusters_and_cluster_features_with_canonical_names() {
    let words: Vec<String> = ["jobid=67108867", "clusters=c1,c2", "clusterfeatures="]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let Ok(Update::Job(req)) = parse_update(&words) else {
        panic!("not a job update")
    };
    assert_eq!(req.jobs, vec!["67108867".to_string()]);
    assert_eq!(
        req.settings,
        vec![
            EnvVar {
                name: "Clusters".into(),
                value: "c1,c2".into()
            },
            EnvVar {
                name: "ClusterFeatures".into(),
                value: String::new()
            },
        ]
    );
}
