use super::*;
use proptest::prelude::*;

fn parse(text: &str) -> Result<(CtldConf, Vec<ConfWarning>), ConfError> {
    CtldConf::parse(Path::new("slurm.conf"), text)
}

const BASE: &str = "ClusterName=Alpha\nSlurmctldHost=ctl(10.0.0.1)\n";

#[test]
fn reads_a_full_file() {
    let text = format!(
        "{BASE}SlurmctldPort=7817\nSlurmdPort=7818\nStateSaveLocation=/tmp/state\n\
         SlurmdSpoolDir=/tmp/spool\nAccountingStorageHost=db\nAccountingStoragePort=7819\n\
         SchedulerType=sched/builtin\nMinJobAge=10\nKillWait=5\nSlurmdTimeout=60\nMaxJobCount=50\n\
         NodeName=DEFAULT CPUs=4 RealMemory=1000\n\
         NodeName=n[1-2] NodeAddr=10.0.1.[1-2] Weight=5 Feature=a,b\n\
         NodeName=big Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 RealMemory=8000 State=DRAIN Port=9000\n\
         PartitionName=DEFAULT MaxTime=1:00:00\n\
         PartitionName=debug Nodes=n[1-2] Default=YES MaxNodes=2\n\
         PartitionName=all Nodes=ALL MaxTime=UNLIMITED State=DOWN OverSubscribe=FORCE:2 AllowGroups=a,b\n"
    );
    let (c, w) = parse(&text).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.cluster_name, "alpha");
    assert_eq!(
        c.ctld_hosts[0],
        CtldHost {
            name: "ctl".into(),
            addr: Some("10.0.0.1".into())
        }
    );
    assert_eq!(
        (c.ctld_port, c.slurmd_port, c.accounting_storage_port),
        (7817, 7818, 7819)
    );
    assert_eq!(c.state_save_location, PathBuf::from("/tmp/state"));
    assert_eq!(c.accounting_storage_host.as_deref(), Some("db"));
    assert_eq!(c.scheduler, SchedulerType::Builtin);
    assert_eq!(
        (
            c.min_job_age,
            c.kill_wait,
            c.slurmd_timeout,
            c.max_job_count
        ),
        (10, 5, 60, 50)
    );
    assert_eq!(c.nodes.len(), 3);
    let n2 = &c.nodes[1];
    assert_eq!(
        (n2.name.as_str(), n2.addr.as_str(), n2.port),
        ("n2", "10.0.1.2", 7818)
    );
    assert_eq!((n2.cpus, n2.real_memory_mb, n2.weight), (4, 1000, 5));
    assert_eq!(n2.features, ["a", "b"]);
    let big = &c.nodes[2];
    assert_eq!(
        (big.cpus, big.real_memory_mb, big.port),
        (4, 8000, 9000),
        "DEFAULT CPUs wins over topology"
    );
    assert_eq!(big.state, NodeConfState::Drain);
    let debug = &c.partitions[0];
    assert_eq!(debug.nodes, ["n1", "n2"]);
    assert_eq!(
        (debug.max_time, debug.max_nodes),
        (TimeLimit::Minutes(60), Some(2))
    );
    assert_eq!(
        c.default_partition().map(|p| p.name.as_str()),
        Some("debug")
    );
    let all = &c.partitions[1];
    assert_eq!(all.nodes, ["n1", "n2", "big"]);
    assert_eq!(all.max_time, TimeLimit::Unlimited);
    assert_eq!(
        (all.state, all.oversubscribe),
        (PartState::Down, OverSubscribe::Force(2))
    );
    assert_eq!(
        all.allow_groups.as_deref(),
        Some(&["a".to_string(), "b".to_string()][..])
    );
}

#[test]
fn topology_gives_cpus_when_not_set() {
    let (c, _) = parse(&format!(
        "{BASE}NodeName=x Sockets=2 CoresPerSocket=8 ThreadsPerCore=2\n"
    ))
    .unwrap();
    assert_eq!(c.nodes[0].cpus, 32);
    assert_eq!(c.nodes[0].port, 6818);
}

#[test]
fn unknown_keys_warn_with_location() {
    let (_, w) = parse(&format!(
        "{BASE}ProctrackType=proctrack/cgroup\nNodeName=a Gres=gpu:1\n"
    ))
    .unwrap();
    let keys: Vec<_> = w.iter().map(|w| (w.key.as_str(), w.line)).collect();
    assert_eq!(keys, [("ProctrackType", 3), ("Gres", 4)]);
    assert_eq!(
        w[0].to_string(),
        "slurm.conf:3: unknown key ProctrackType, ignored"
    );
}

#[test]
fn bad_values_name_file_line_and_key() {
    let cases = [
        ("KillWait=soon\n", "KillWait"),
        ("NodeName=a CPUs=0\n", "CPUs"),
        ("NodeName=a[1-2] NodeAddr=x\n", "NodeAddr"),
        ("NodeName=a State=sleepy\n", "State"),
        ("NodeName=a\nNodeName=a\n", "NodeName"),
        ("NodeName=a\nPartitionName=p Nodes=b\n", "Nodes"),
        ("PartitionName=p MaxTime=1:2:3:4\n", "MaxTime"),
        ("PartitionName=p Default=maybe\n", "Default"),
        ("PartitionName=p OverSubscribe=SOMETIMES\n", "OverSubscribe"),
        ("SchedulerType=sched/wiki\n", "SchedulerType"),
        ("SlurmctldHost=a(\n", "SlurmctldHost"),
    ];
    for (body, key) in cases {
        let err = parse(&format!("{BASE}{body}")).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ConfError::BadValue { .. }), "{body}: {msg}");
        assert!(
            msg.starts_with("slurm.conf:3:") || msg.starts_with("slurm.conf:4:"),
            "{msg}"
        );
        assert!(msg.contains(key), "{body}: {msg}");
    }
}

#[test]
fn cluster_name_and_controller_are_required() {
    let e = parse("SlurmctldHost=x\n").unwrap_err().to_string();
    assert_eq!(e, "slurm.conf: ClusterName is required");
    let e = parse("ClusterName=c\n").unwrap_err().to_string();
    assert_eq!(e, "slurm.conf: SlurmctldHost is required");
}

#[test]
fn oversubscribe_follows_slurm_defaults() {
    let os = |v: &str| {
        let (c, _) = parse(&format!("{BASE}PartitionName=p OverSubscribe={v}\n")).unwrap();
        c.partitions[0].oversubscribe
    };
    assert_eq!(os("YES"), OverSubscribe::Yes(4));
    assert_eq!(os("FORCE"), OverSubscribe::Force(4));
    assert_eq!(os("yes:1"), OverSubscribe::No);
    assert_eq!(os("EXCLUSIVE"), OverSubscribe::Exclusive);
}

proptest! {
    #[test]
    fn node_counts_follow_hostlists(lo in 0u32..50, len in 1u32..40, cpus in 1u32..256) {
        let hi = lo + len - 1;
        let (c, _) = parse(&format!("{BASE}NodeName=n[{lo}-{hi}] CPUs={cpus}\nPartitionName=p Nodes=n[{lo}-{hi}]\n")).unwrap();
        prop_assert_eq!(c.nodes.len() as u32, len);
        prop_assert!(c.nodes.iter().all(|n| n.cpus == cpus));
        prop_assert_eq!(c.partitions[0].nodes.len() as u32, len);
    }
}

#[test]
fn state_sync_is_normal_unless_set_to_full() {
    let (c, _) = parse(BASE).unwrap();
    assert_eq!(c.state_sync, StateSync::Normal);
    let (c, w) = parse(&format!("{BASE}SluiceStateSync=FULL\n")).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.state_sync, StateSync::Full);
    let (c, _) = parse(&format!("{BASE}SluiceStateSync=normal\n")).unwrap();
    assert_eq!(c.state_sync, StateSync::Normal);
    let err = parse(&format!("{BASE}SluiceStateSync=off\n")).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConfError::BadValue { .. }), "{msg}");
    assert!(
        msg.starts_with("slurm.conf:3:") && msg.contains("SluiceStateSync"),
        "{msg}"
    );
    assert!(msg.contains("expected normal or full"), "{msg}");
}

#[test]
fn slurmctld_plugin_nonstop_reads_nonstop_conf_beside() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{BASE}SlurmctldPlugin=slurmctld/nonstop\nNodeName=n[1-3] CPUs=2\nPartitionName=batch Nodes=ALL\n"
    );
    std::fs::write(dir.path().join("slurm.conf"), &text).unwrap();
    let e = CtldConf::load(&dir.path().join("slurm.conf"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nonstop.conf"), "{e}");
    std::fs::write(dir.path().join("nonstop.conf"), "HotSpareCount=batch:1\n").unwrap();
    let (c, w) = CtldConf::load(&dir.path().join("slurm.conf")).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.nonstop.unwrap().spares_of("batch"), 1);
    std::fs::write(dir.path().join("nonstop.conf"), "HotSpareCount=other:1\n").unwrap();
    let e = CtldConf::load(&dir.path().join("slurm.conf"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nonstop.conf:1") && e.contains("other"), "{e}");
}

#[test]
fn other_slurmctld_plugins_are_refused() {
    let e = parse(&format!("{BASE}SlurmctldPlugin=slurmctld/other\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("slurm.conf:3") && e.contains("SlurmctldPlugin") && e.contains("unsupported"),
        "{e}"
    );
    let (c, _) = parse(BASE).unwrap();
    assert!(c.nonstop.is_none());
}

#[test]
fn unkillable_step_timeout_defaults_to_a_minute_within_slurms_range() {
    assert_eq!(parse(BASE).unwrap().0.unkillable_step_timeout, 60);
    let set = parse(&format!("{BASE}UnkillableStepTimeout=5\n"))
        .unwrap()
        .0;
    assert_eq!(set.unkillable_step_timeout, 5);
    for bad in ["0", "65534", "x"] {
        let e = parse(&format!("{BASE}UnkillableStepTimeout={bad}\n")).unwrap_err();
        assert!(e.to_string().contains("UnkillableStepTimeout"), "{e}");
    }
}
