//! The shared job options as users give them: values, errors, the environment.

use super::*;

#[test]
fn the_umask_is_read_from_proc_status() {
    assert_eq!(
        umask_of_status("Name:\tsbatch\nUmask:\t0027\nState:\tR\n").as_deref(),
        Some("0027")
    );
    assert_eq!(umask_of_status("Name:\tx\n"), None);
    assert_eq!(umask_of_status("Umask:\tzz\n"), None);
    let environ = process_environ();
    let mask = environ.iter().find(|(k, _)| k == UMASK_VAR);
    assert!(mask.is_some_and(|(_, v)| v.len() == 4), "{mask:?}");
}

#[test]
fn later_values_override_earlier_ones() {
    let mut o = JobOpts::default();
    o.apply(Opt::Partition, Some("a".into())).unwrap();
    o.apply(Opt::Partition, Some("b".into())).unwrap();
    o.apply(Opt::Verbose, None).unwrap();
    o.apply(Opt::Verbose, None).unwrap();
    o.apply(Opt::Requeue, None).unwrap();
    o.apply(Opt::NoRequeue, None).unwrap();
    assert_eq!(o.partition.as_deref(), Some("b"));
    assert_eq!(o.verbose, 2);
    assert_eq!(o.requeue, Some(false));
}

#[test]
fn bad_values_carry_slurm_messages() {
    let mut o = JobOpts::default();
    let e = o.apply(Opt::CpusPerTask, Some("two".into())).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid numeric value \"two\" for --cpus-per-task."
    );
    assert_eq!(o.apply(Opt::Time, Some("soon".into())), Err(OptError::Time));
    assert_eq!(o.apply(Opt::Mem, Some("lots".into())), Err(OptError::Mem));
    assert_eq!(o, JobOpts::default(), "nothing is set by a bad value");
}

#[test]
fn memory_per_cpu_tmp_and_contiguous_parse() {
    let mut o = JobOpts::default();
    o.apply(Opt::MemPerCpu, Some("2G".into())).unwrap();
    o.apply(Opt::Tmp, Some("500".into())).unwrap();
    o.apply(Opt::Contiguous, None).unwrap();
    assert_eq!(
        (o.mem_per_cpu_mb, o.tmp_mb, o.contiguous),
        (Some(2048), Some(500), true)
    );
    let mut bad = JobOpts::default();
    for (opt, text) in [
        (Opt::MemPerCpu, "Invalid --mem-per-cpu specification"),
        (Opt::Tmp, "Invalid --tmp specification"),
    ] {
        let e = bad.apply(opt, Some("lots".into())).unwrap_err();
        assert_eq!(e.to_string(), text);
        assert!(!e.is_fatal());
    }
    assert_eq!(bad, JobOpts::default());
}

#[test]
fn socket_core_and_thread_options_parse_as_slurm_reads_them() {
    let mut o = JobOpts::default();
    o.apply(Opt::ExtraNodeInfo, Some("2:*:1".into())).unwrap();
    assert_eq!(
        (
            o.topo.sockets_per_node,
            o.topo.cores_per_socket,
            o.topo.threads_per_core
        ),
        (Some(2), None, Some(1))
    );
    // A later option overrides one field; a range counts by its minimum.
    o.apply(Opt::CoresPerSocket, Some("4-8".into())).unwrap();
    o.apply(Opt::NtasksPerCore, Some("1".into())).unwrap();
    o.apply(Opt::NtasksPerSocket, Some("3".into())).unwrap();
    assert_eq!(o.topo.cores_per_socket, Some(4));
    assert_eq!(
        o.topo_vars(),
        [
            ("SLURM_NTASKS_PER_CORE", 1),
            ("SLURM_NTASKS_PER_SOCKET", 3),
            ("SLURM_THREADS_PER_CORE", 1)
        ]
    );
    let mut bad = JobOpts::default();
    for (opt, v, text) in [
        (
            Opt::ExtraNodeInfo,
            "1:2:3:4",
            "Invalid --extra-node-info specification",
        ),
        (
            Opt::ExtraNodeInfo,
            "x",
            "Invalid --extra-node-info specification",
        ),
        (
            Opt::SocketsPerNode,
            "0",
            "Invalid --sockets-per-node specification",
        ),
        (
            Opt::NtasksPerCore,
            "two",
            "Invalid numeric value \"two\" for --ntasks-per-core.",
        ),
    ] {
        assert_eq!(
            bad.apply(opt, Some(v.into())).unwrap_err().to_string(),
            text
        );
    }
    assert_eq!(bad, JobOpts::default());
}

#[test]
fn memory_per_node_and_per_cpu_exclude_each_other_as_in_slurm() {
    let both = || JobOpts {
        mem_mb: Some(100),
        mem_per_cpu_mb: Some(10),
        ..JobOpts::default()
    };
    // Both on the command line: fatal.
    let e = both()
        .settle_memory([Opt::Mem, Opt::MemPerCpu], [])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."
    );
    assert!(e.is_fatal());
    // One on the command line drops the other (from a directive or the environment).
    let mut o = both();
    o.settle_memory([Opt::Mem], [Opt::MemPerCpu]).unwrap();
    assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (Some(100), None));
    let mut o = both();
    o.settle_memory([Opt::MemPerCpu, Opt::Partition], [Opt::Mem])
        .unwrap();
    assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (None, Some(10)));
    // Both from the environment: fatal.
    let e = both()
        .settle_memory([Opt::Partition], [Opt::MemPerCpu, Opt::Mem])
        .unwrap_err();
    assert_eq!(e, OptError::MemEnvExclusive);
    assert!(e.is_fatal());
    // Both from directives: memory per CPU is what the job asks.
    let mut o = both();
    o.settle_memory([], []).unwrap();
    assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (None, Some(10)));
    // One alone stays.
    let mut o = JobOpts {
        mem_mb: Some(5),
        ..JobOpts::default()
    };
    o.settle_memory([], [Opt::Mem]).unwrap();
    assert_eq!((o.mem_mb, o.mem_per_cpu_mb), (Some(5), None));
}

#[test]
fn environment_flags_and_values() {
    const TABLE: &[EnvOpt<Opt>] = &[
        EnvOpt {
            var: "X_HOLD",
            id: Opt::Hold,
            flag: true,
        },
        EnvOpt {
            var: "X_PART",
            id: Opt::Partition,
            flag: false,
        },
        EnvOpt {
            var: "X_REQ",
            id: Opt::Requeue,
            flag: true,
        },
    ];
    let environ = vec![
        ("X_PART".to_string(), "debug".to_string()),
        ("X_HOLD".to_string(), "yes".to_string()),
        ("X_REQ".to_string(), "no".to_string()),
    ];
    assert_eq!(
        env_options(TABLE, &environ),
        vec![(Opt::Hold, None), (Opt::Partition, Some("debug".into()))]
    );
}
