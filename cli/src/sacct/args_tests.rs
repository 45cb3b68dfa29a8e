//! sacct's option parsing: defaults, field lists, cluster selection and Slurm's errors.

use super::*;

const NOW: i64 = 1_795_255_200;

fn parse_with(args: &[&str], env: &dyn Fn(&str) -> Option<String>) -> Result<Invocation, String> {
    let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cx = Context {
        env,
        now: NOW,
        zone: Zone::Utc,
    };
    parse(&a, &cx)
}

fn run(args: &[&str]) -> Result<SacctOpts, String> {
    match parse_with(args, &|_| None)? {
        Invocation::Run(o) => Ok(*o),
        other => panic!("{other:?}"),
    }
}

#[test]
fn defaults_and_layouts() {
    let o = run(&[]).unwrap();
    assert_eq!(
        (o.fields.as_str(), o.mode, o.no_steps, o.delimiter.as_str()),
        (DEFAULT_FIELDS, OutputMode::Fixed, false, "|")
    );
    assert_eq!(o.clusters, ClusterSel::Local);
    assert_eq!(run(&["-P"]).unwrap().mode, OutputMode::Parsable2);
    assert_eq!(run(&["-p", "-n", "-X"]).unwrap().mode, OutputMode::Parsable);
    assert_eq!(run(&["-p", "--delimiter=,"]).unwrap().delimiter, ",");
    assert!(run(&["--json"]).unwrap().json);
    assert_eq!(parse_with(&["-h"], &|_| None), Ok(Invocation::Help));
    assert_eq!(
        parse_with(&["--helpformat"], &|_| None),
        Ok(Invocation::HelpFields)
    );
}

#[test]
fn field_lists_accumulate_like_slurms() {
    assert_eq!(run(&["-b"]).unwrap().fields, BRIEF_FIELDS);
    assert_eq!(
        run(&["-o", "jobid", "-o", "state"]).unwrap().fields,
        "jobid,state"
    );
    assert_eq!(
        run(&["-o", "jobname", "-b"]).unwrap().fields,
        format!("jobname,{BRIEF_FIELDS}")
    );
    let long = run(&["-l"]).unwrap();
    assert!(long.long && long.fields == LONG_FIELDS);
    assert_eq!(
        run(&["-l", "-o", "jobid"]).unwrap_err(),
        "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. \
         Please remove one and retry."
    );
    let env = |k: &str| (k == "SACCT_FORMAT").then(|| "jobid,user".to_string());
    match parse_with(&[], &env).unwrap() {
        Invocation::Run(o) => assert_eq!(o.fields, "jobid,user"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn cluster_options_resolve_as_slurm_does() {
    assert_eq!(run(&["-M", "all"]).unwrap().clusters, ClusterSel::All);
    assert_eq!(run(&["-L"]).unwrap().clusters, ClusterSel::All);
    assert_eq!(
        run(&["-M", "a,b"]).unwrap().clusters,
        ClusterSel::List(vec!["a".into(), "b".into()])
    );
    assert_eq!(
        run(&["--federation"]).unwrap().clusters,
        ClusterSel::Federation
    );
    assert_eq!(
        run(&["-L", "--federation"]).unwrap().clusters,
        ClusterSel::Federation
    );
    assert_eq!(
        run(&["--federation", "--local"]).unwrap().clusters,
        ClusterSel::Local
    );
    assert_eq!(
        run(&["--federation", "-M", "x"]).unwrap().clusters,
        ClusterSel::List(vec!["x".into()])
    );
    let env = |k: &str| (k == "SACCT_FEDERATION").then(|| "1".to_string());
    match parse_with(&[], &env).unwrap() {
        Invocation::Run(o) => assert_eq!(o.clusters, ClusterSel::Federation),
        other => panic!("{other:?}"),
    }
}

#[test]
fn filters_and_times_are_read() {
    let o = run(&[
        "-A",
        "a,b",
        "-A",
        "c",
        "--name=x",
        "--partition",
        "p",
        "-N",
        "n[1-3]",
        "-S",
        "now-1hour",
        "-E",
        "now",
        "-s",
        "r,CD,oom,requeue,PD",
    ])
    .unwrap();
    assert_eq!(o.accounts, vec!["a", "b", "c"]);
    assert_eq!(
        (o.names.clone(), o.partitions.clone()),
        (vec!["x".into()], vec!["p".into()])
    );
    assert_eq!(o.nodelist.as_deref(), Some("n[1-3]"));
    assert_eq!((o.start, o.end), (Some(NOW - 3600), Some(NOW)));
    assert_eq!(
        o.states,
        vec![
            JobState::Running,
            JobState::Completed,
            JobState::OutOfMemory,
            JobState::Requeued,
            JobState::Pending
        ]
    );
}

#[test]
fn bad_input_gets_slurms_errors() {
    assert_eq!(
        run(&["-s", "bogus"]).unwrap_err(),
        "sacct: fatal: unrecognized job state value 'bogus'"
    );
    assert_eq!(
        run(&["-s", "CG"]).unwrap_err(),
        "sacct: fatal: job state CG is not supported / accounted"
    );
    assert_eq!(
        run(&["-S", "yesterdayish"]).unwrap_err(),
        "sacct: error: Invalid time specification (pos=0): yesterdayish"
    );
    assert_eq!(
        run(&["-u", "no-such-user-xyz"]).unwrap_err(),
        "sacct: error: Invalid user id: no-such-user-xyz"
    );
    assert_eq!(
        run(&["stray"]).unwrap_err(),
        "sacct: error: Unknown arguments:\nsacct: error:  stray"
    );
    assert!(
        run(&["--bogus"])
            .unwrap_err()
            .starts_with("sacct: unrecognized option '--bogus'")
    );
}

#[test]
fn help_prefixes_keep_their_meanings() {
    for word in ["--h", "--he", "--hel", "--help-", "--helpf"] {
        assert_eq!(
            parse_with(&[word], &|_| None),
            Ok(Invocation::HelpFields),
            "{word}"
        );
    }
    assert_eq!(parse_with(&["--help"], &|_| None), Ok(Invocation::Help));
    assert_eq!(
        parse_with(&["--fo=a", "--he"], &|_| None),
        Ok(Invocation::HelpFields)
    );
    assert_eq!(
        parse_with(&["--f"], &|_| None),
        Err("sacct: option '--f' is ambiguous\nTry \"sacct --help\" for more information".into())
    );
}
