//! sbatch option parsing, as users type the options and directives.

use super::*;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn colons_separate_heterogeneous_components() {
    let CommandLine::Submit {
        opts,
        het,
        script,
        script_args,
    } = parse_command_line(&words("-n1 -J x : -n2 : -c2 job.sh : a")).unwrap()
    else {
        panic!("not a submission");
    };
    assert_eq!(opts.len(), 2);
    assert_eq!(
        het,
        vec![
            vec![(SbOpt::Job(Opt::Ntasks), Some("2".to_string()))],
            vec![(SbOpt::Job(Opt::CpusPerTask), Some("2".to_string()))],
        ]
    );
    assert_eq!(script.as_deref(), Some("job.sh"));
    assert_eq!(script_args, words(": a"));
}

#[test]
fn script_and_its_arguments_follow_the_options() {
    let CommandLine::Submit {
        opts,
        script,
        script_args,
        ..
    } = parse_command_line(&words("-p debug job.sh -p x y")).unwrap()
    else {
        panic!("submit expected");
    };
    assert_eq!(
        opts,
        vec![(SbOpt::Job(Opt::Partition), Some("debug".into()))]
    );
    assert_eq!(script.as_deref(), Some("job.sh"));
    assert_eq!(script_args, vec!["-p", "x", "y"]);
}

#[test]
fn help_usage_and_version_win() {
    assert_eq!(
        parse_command_line(&words("-p x --help")),
        Ok(CommandLine::Help)
    );
    assert_eq!(
        parse_command_line(&words("--usage")),
        Ok(CommandLine::Usage)
    );
    assert_eq!(parse_command_line(&words("-V")), Ok(CommandLine::Version));
}

#[test]
fn workdir_is_an_alias_of_chdir() {
    let mut o = SbatchOpts::default();
    let CommandLine::Submit { opts, .. } =
        parse_command_line(&words("--workdir=/tmp --parsable --test-only")).unwrap()
    else {
        panic!("submit expected");
    };
    for (opt, v) in opts {
        o.apply(opt, v).unwrap();
    }
    assert_eq!(o.job.chdir.as_deref(), Some("/tmp"));
    assert!(o.parsable && o.test_only);
}

#[test]
fn placement_and_timing_options_parse() {
    let CommandLine::Submit { opts, .. } = parse_command_line(&words(
        "-w n[1-2] -x n3 --ntasks-per-node=2 --mincpus=4 --nice --wckey=w -b now+60 --open-mode=a --signal=B:USR1@30 job.sh",
    ))
    .unwrap() else {
        panic!("submit expected");
    };
    let mut o = SbatchOpts::default();
    for (opt, v) in opts {
        o.apply(opt, v).unwrap();
    }
    let j = &o.job;
    assert_eq!(j.nodelist, vec!["n1", "n2"]);
    assert_eq!(j.exclude, vec!["n3"]);
    assert_eq!(
        (j.ntasks_per_node, j.mincpus, j.nice),
        (Some(2), Some(4), Some(100))
    );
    assert_eq!(j.wckey.as_deref(), Some("w"));
    assert!(j.begin.is_some());
    assert_eq!(j.open_append, Some(true));
    assert_eq!(
        j.signal.map(|s| (s.signal, s.before_secs, s.batch_only)),
        Some((10, 30, true))
    );
    let mut bad = SbatchOpts::default();
    assert_eq!(
        bad.apply(SbOpt::Job(Opt::NodeList), Some("n[1-".into())),
        Err(OptError::NodeList)
    );
    assert_eq!(
        bad.apply(SbOpt::Job(Opt::OpenMode), Some("x".into()))
            .unwrap_err()
            .to_string(),
        "Invalid --open-mode argument: x. Ignored"
    );
}

#[test]
fn overcommit_and_node_count_preferences_parse_from_options_and_environment() {
    let CommandLine::Submit { opts, .. } =
        parse_command_line(&words("-O --use-min-nodes --spread-job job.sh")).unwrap()
    else {
        panic!("submit expected");
    };
    let mut o = SbatchOpts::default();
    for (opt, v) in opts {
        o.apply(opt, v).unwrap();
    }
    assert!(o.job.overcommit && o.job.use_min_nodes && o.job.spread_job);
    let env: Vec<(String, String)> = [
        ("SBATCH_OVERCOMMIT", "1"),
        ("SBATCH_USE_MIN_NODES", "yes"),
        ("SBATCH_SPREAD_JOB", "0"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let mut o = SbatchOpts::default();
    o.apply_env(&env).unwrap();
    assert!(o.job.overcommit && o.job.use_min_nodes && !o.job.spread_job);
    let mut o = SbatchOpts::default();
    o.apply_env(&[("SBATCH_WAIT_ALL_NODES".to_string(), "1".to_string())])
        .unwrap();
    assert_eq!(o.job.wait_all_nodes, Some(true));
    o.apply(SbOpt::Job(Opt::WaitAllNodes), Some("0".into()))
        .unwrap();
    assert_eq!(o.job.wait_all_nodes, Some(false));
    let r = o.job.to_request(
        "j",
        String::new(),
        &crate::jobspec::Submitter::current(),
        &[],
    );
    assert_eq!(r.wait_all_nodes, Some(false));
}

#[test]
fn get_user_env_asks_the_batch_host_through_the_jobs_environment() {
    let mut o = SbatchOpts::default();
    o.apply(SbOpt::Job(Opt::GetUserEnv), Some("10L".into()))
        .unwrap();
    let who = crate::jobspec::Submitter::current();
    let r = o.job.to_request("j", String::new(), &who, &[]);
    let flag = r.env.iter().find(|e| e.name == "SLURM_GET_USER_ENV");
    assert_eq!(flag.map(|e| e.value.as_str()), Some("1"));
    let plain = SbatchOpts::default()
        .job
        .to_request("j", String::new(), &who, &[]);
    assert!(plain.env.iter().all(|e| e.name != "SLURM_GET_USER_ENV"));
    // salloc's is not implemented: refused by name there.
    let salloc = crate::salloc::args::table();
    assert!(salloc.iter().any(|s| s.long == "get-user-env"));
}

#[test]
fn environment_sets_options() {
    let env: Vec<(String, String)> = [
        ("SBATCH_PARTITION", "p1"),
        ("SBATCH_TIMELIMIT", "10"),
        ("SBATCH_HOLD", "1"),
        ("SBATCH_MEM_PER_NODE", "2G"),
        ("SBATCH_OPEN_MODE", "append"),
        ("SBATCH_WCKEY", "proj"),
        ("SBATCH_SIGNAL", "USR2"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let mut o = SbatchOpts::default();
    o.apply_env(&env).unwrap();
    assert_eq!(o.job.partition.as_deref(), Some("p1"));
    assert_eq!(o.job.time.as_deref(), Some("10"));
    assert_eq!(o.job.mem_mb, Some(2048));
    assert!(o.job.hold);
    assert_eq!(o.job.open_append, Some(true));
    assert_eq!(o.job.wckey.as_deref(), Some("proj"));
    assert_eq!(
        o.job.signal.map(|s| (s.signal, s.before_secs)),
        Some((12, 60))
    );
}
