//! sbatch's planning: precedence of directives, environment and command line; `--wrap`;
//! the checks that stop a job before it is sent.

use super::*;

fn who() -> Submitter {
    Submitter {
        user: "u".into(),
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        host: "h".into(),
        cwd: "/work".into(),
    }
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Plans `args` with `script` on stdin.
fn plan_stdin(args: &str, environ: &[(String, String)], script: &str) -> Result<Plan, SbatchError> {
    plan(&words(args), environ, &who(), &mut script.as_bytes())
}

fn submission(p: Result<Plan, SbatchError>) -> Submission {
    match p {
        Ok(Plan::Submit(s)) => *s,
        other => panic!("expected a submission, got {other:?}"),
    }
}

const SCRIPT: &str =
    "#!/bin/sh\n#SBATCH -p from_directive -t 5\n#SBATCH -J dname --mem=1G\necho hi\n";

#[test]
fn memory_sizes_take_an_optional_byte_suffix() {
    let s = submission(plan_stdin("--mem=1GB", &[], SCRIPT));
    assert_eq!(s.request.mem_mb, Some(1024));
    let e = env(&[("SBATCH_MEM_PER_NODE", "512MB")]);
    let s = submission(plan_stdin("", &e, "#!/bin/sh\necho hi\n"));
    assert_eq!(s.request.mem_mb, Some(512));
    let s = submission(plan_stdin(
        "",
        &[],
        "#!/bin/sh\n#SBATCH --mem=2gb\necho hi\n",
    ));
    assert_eq!(s.request.mem_mb, Some(2048));
}

#[test]
fn command_line_beats_environment_beats_directives() {
    let s = submission(plan_stdin("", &[], SCRIPT));
    assert_eq!(s.request.partition.as_deref(), Some("from_directive"));
    assert_eq!(s.request.name, "dname");
    assert_eq!(s.request.mem_mb, Some(1024));

    let e = env(&[("SBATCH_PARTITION", "from_env"), ("SBATCH_TIMELIMIT", "7")]);
    let s = submission(plan_stdin("", &e, SCRIPT));
    assert_eq!(s.request.partition.as_deref(), Some("from_env"));
    assert_eq!(s.request.time_limit.as_deref(), Some("7"));

    let s = submission(plan_stdin("-p from_cli -J cli", &e, SCRIPT));
    assert_eq!(s.request.partition.as_deref(), Some("from_cli"));
    assert_eq!(s.request.time_limit.as_deref(), Some("7"));
    assert_eq!(s.request.name, "cli");
    assert_eq!(s.request.script, SCRIPT);
}

#[test]
fn stdin_script_is_named_sbatch_and_wrap_is_named_wrap() {
    let s = submission(plan_stdin("", &[], "#!/bin/sh\ntrue\n"));
    assert_eq!(s.request.name, "sbatch");
    let s = submission(plan_stdin("--wrap=hostname", &[], ""));
    assert_eq!(s.request.name, "wrap");
    assert!(s.request.script.starts_with("#!/bin/sh\n"));
    assert!(s.request.script.ends_with("\nhostname\n"));
    let s = submission(plan(
        &[
            "--wrap".to_string(),
            "echo a b".to_string(),
            "-J".into(),
            "x".into(),
        ],
        &[],
        &who(),
        &mut "".as_bytes(),
    ));
    assert_eq!(s.request.name, "x");
    assert!(s.request.script.ends_with("\necho a b\n"));
}

#[test]
fn script_file_gives_name_and_arguments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("job.sh"),
        "#!/bin/bash\n#SBATCH -N 2-3\nsrun hostname\n",
    )
    .unwrap();
    let mut w = who();
    w.cwd = dir.path().display().to_string();
    let s = submission(plan(
        &words("--parsable job.sh a -b"),
        &[],
        &w,
        &mut "".as_bytes(),
    ));
    assert_eq!(s.request.name, "job.sh");
    assert_eq!(
        (s.request.min_nodes, s.request.max_nodes),
        (Some(2), Some(3))
    );
    assert_eq!(s.request.script_args, vec!["a", "-b"]);
    assert!(s.parsable);
    let e = plan(&words("missing.sh"), &[], &w, &mut "".as_bytes()).unwrap_err();
    assert_eq!(e.to_string(), "Unable to open file missing.sh");
}

#[test]
fn bad_input_is_refused_with_slurm_text() {
    let msg = |args: &str, script: &str| plan_stdin(args, &[], script).unwrap_err().to_string();
    assert!(msg("", "echo hi\n").starts_with("This does not look like a batch script."));
    assert_eq!(msg("", ""), "Batch script is empty!");
    assert_eq!(
        msg("-n x", "#!/bin/sh\n"),
        "Invalid numeric value \"x\" for --ntasks."
    );
    assert_eq!(
        msg("-t soon", "#!/bin/sh\n"),
        "Invalid --time specification"
    );
    assert_eq!(
        msg("", "#!/bin/sh\n#SBATCH --mem=lots\n"),
        "Invalid --mem specification"
    );
    assert_eq!(
        msg("", "#!/bin/sh\n#SBATCH hello\n"),
        "Invalid directive found in batch script: hello"
    );
    assert_eq!(
        msg("--bogus", "#!/bin/sh\n"),
        "unrecognized option '--bogus'"
    );
    let e = plan(&words("--wrap=true x.sh"), &[], &who(), &mut "".as_bytes()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Script arguments not permitted with --wrap option"
    );
}

#[test]
fn errors_print_with_prefixes() {
    let print = |e: SbatchError| {
        let mut buf = Vec::new();
        e.print(&mut buf);
        String::from_utf8(buf).unwrap()
    };
    assert_eq!(
        print(SbatchError::NotAScript),
        "sbatch: error: This does not look like a batch script.  The first\n\
         sbatch: error: line must start with #! followed by the path to an interpreter.\n\
         sbatch: error: For instance: #!/bin/sh\n"
    );
    assert_eq!(
        print(SbatchError::Getopt(GetoptError::UnknownShort('z'))),
        "sbatch: invalid option -- 'z'\nTry \"sbatch --help\" for more information\n"
    );
    assert_eq!(
        print(SbatchError::Submit(
            "Invalid partition name specified".into()
        )),
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n"
    );
}

#[test]
fn export_array_and_flags_reach_the_request() {
    let e = env(&[("HOME", "/h"), ("SLURM_X", "1")]);
    let s = submission(plan_stdin(
        "--export=NONE,A=b --array=1-100%10 -H --requeue --test-only -d afterok:1",
        &e,
        "#!/bin/sh\n",
    ));
    let names: Vec<&str> = s.request.env.iter().map(|v| v.name.as_str()).collect();
    // The resource limits travel too (PropagateResourceLimits=ALL), whatever --export says.
    let (limits, exported): (Vec<&str>, Vec<&str>) =
        names.iter().partition(|n| n.starts_with("SLURM_RLIMIT_"));
    assert_eq!(exported, vec!["SLURM_X", "A"]);
    assert!(limits.contains(&"SLURM_RLIMIT_NOFILE"), "{limits:?}");
    assert_eq!(s.request.array.as_deref(), Some("1-100%10"));
    assert!(s.request.hold && s.request.test_only);
    assert_eq!(s.request.requeue, Some(true));
    assert_eq!(s.request.dependency.as_deref(), Some("afterok:1"));
}

#[test]
fn help_is_printed_not_submitted() {
    assert!(matches!(plan_stdin("--help", &[], ""), Ok(Plan::Print(t)) if t.contains("--wrap")));
}

#[test]
fn sharing_options_reach_the_request_the_last_one_winning() {
    use sluice_wire::proto::JobShare;
    let share = |args: &str, environ: &[(String, String)], script: &str| {
        submission(plan_stdin(args, environ, script))
            .request
            .share()
    };
    let plain = "#!/bin/sh\n";
    assert_eq!(share("", &[], plain), JobShare::Unset);
    assert_eq!(share("-s", &[], plain), JobShare::Oversubscribe);
    assert_eq!(
        share("--oversubscribe", &[], plain),
        JobShare::Oversubscribe
    );
    assert_eq!(share("--exclusive", &[], plain), JobShare::Exclusive);
    assert_eq!(share("-s --exclusive", &[], plain), JobShare::Exclusive);
    assert_eq!(share("--exclusive -s", &[], plain), JobShare::Oversubscribe);
    assert_eq!(
        share("--exclusive=OverSubscribe", &[], plain),
        JobShare::Oversubscribe
    );
    let directive = "#!/bin/sh\n#SBATCH --exclusive\n";
    assert_eq!(share("", &[], directive), JobShare::Exclusive);
    assert_eq!(share("-s", &[], directive), JobShare::Oversubscribe);
    let e = env(&[("SBATCH_EXCLUSIVE", "exclusive")]);
    assert_eq!(share("", &e, plain), JobShare::Exclusive);
    assert_eq!(share("--oversubscribe", &e, plain), JobShare::Oversubscribe);

    let refused = |args: &str| {
        let mut out = Vec::new();
        plan_stdin(args, &[], plain).unwrap_err().print(&mut out);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(
        refused("--exclusive=bogus"),
        "sbatch: error: Invalid --exclusive specification\n"
    );
    assert_eq!(
        refused("--exclusive=user"),
        "sbatch: error: --exclusive=user is not supported\n"
    );
    assert_eq!(
        refused("-s=1"),
        "sbatch: invalid option -- '='\nTry \"sbatch --help\" for more information\n"
    );
}

#[test]
fn no_kill_reaches_the_request_and_off_turns_it_off() {
    let e = env(&[("HOME", "/h")]);
    let on = submission(plan_stdin("-k", &e, "#!/bin/sh\n"));
    assert!(on.request.no_kill);
    let long = submission(plan_stdin("--no-kill", &e, "#!/bin/sh\n"));
    assert!(long.request.no_kill);
    let off = submission(plan_stdin("-k --no-kill=off", &e, "#!/bin/sh\n"));
    assert!(!off.request.no_kill);
    let from_env = submission(plan_stdin(
        "",
        &env(&[("SBATCH_NO_KILL", "1")]),
        "#!/bin/sh\n",
    ));
    assert!(from_env.request.no_kill);
    let directive = submission(plan_stdin("", &e, "#!/bin/sh\n#SBATCH -k\n"));
    assert!(directive.request.no_kill);
    let none = submission(plan_stdin("", &e, "#!/bin/sh\n"));
    assert!(!none.request.no_kill);
}

/// The error text sbatch prints for `args` with `script` on stdin.
fn printed_error(args: &str, environ: &[(String, String)], script: &str) -> String {
    let e = plan_stdin(args, environ, script).unwrap_err();
    let mut err = Vec::new();
    e.print(&mut err);
    String::from_utf8(err).unwrap()
}

#[test]
fn gres_requests_fail_as_a_submission_slurm_refuses() {
    let gres = "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n";
    assert_eq!(printed_error("--gpus-per-node=1", &[], SCRIPT), gres);
    assert_eq!(printed_error("-G1", &[], SCRIPT), gres);
    assert_eq!(
        printed_error("", &[], "#!/bin/sh\n#SBATCH --gres=gpu:2\necho\n"),
        gres
    );
    assert_eq!(
        printed_error("", &env(&[("SBATCH_GPUS_PER_TASK", "1")]), SCRIPT),
        gres
    );
    assert_eq!(
        printed_error("-L matlab", &[], SCRIPT),
        "sbatch: error: Batch job submission failed: Invalid license specification\n"
    );
    // Prefixes now meet the catalog's options as Slurm's own table would.
    let e = printed_error("--cpus=2", &[], SCRIPT);
    assert!(e.contains("option '--cpus' is ambiguous"), "{e}");
}

#[test]
fn burst_buffers_reboot_and_containers_reach_the_request_and_ignored_ones_are_checked() {
    let s = submission(plan_stdin(
        "--bb=capacity=1G --reboot --container=/b",
        &[],
        SCRIPT,
    ));
    assert_eq!(
        (s.request.burst_buffer.as_str(), s.request.reboot),
        ("capacity=1G", true)
    );
    assert_eq!(s.request.container, "/b");
    let s = submission(plan_stdin("", &env(&[("SBATCH_CONTAINER", "/c")]), SCRIPT));
    assert_eq!(s.request.container, "/c");
    // --bbf: the file must be readable; without a burst buffer plugin nothing of it is kept.
    let file = tempfile::NamedTempFile::new().unwrap();
    let s = submission(plan_stdin(
        &format!("--bbf={}", file.path().display()),
        &[],
        SCRIPT,
    ));
    assert_eq!(s.request.burst_buffer, "");
    assert_eq!(
        printed_error("--bbf=/nonexistent/bb.conf", &[], SCRIPT),
        "sbatch: error: Invalid --bbf specification\n"
    );
    // -S through the environment: dropped with Slurm's line, its value still checked.
    let s = submission(plan_stdin("", &env(&[("SBATCH_CORE_SPEC", "2")]), SCRIPT));
    assert_eq!(s.notes.len(), 1);
    assert_eq!(
        printed_error("", &env(&[("SBATCH_CORE_SPEC", "x")]), SCRIPT),
        "sbatch: error: Invalid numeric value \"x\" for --core-spec.\n"
    );
    let s = submission(plan_stdin(
        "--network=x --switches=2 --power=level",
        &[],
        SCRIPT,
    ));
    assert_eq!(s.request.partition.as_deref(), Some("from_directive"));
    assert_eq!(
        printed_error("--profile=everything", &[], SCRIPT),
        "sbatch: error: Invalid --profile specification: everything\n"
    );
}

#[test]
fn deadline_kill_on_invalid_dep_priority_and_wait_reach_the_request() {
    let s = submission(plan_stdin(
        "--deadline=now+1hour --kill-on-invalid-dep=yes --priority=TOP -W",
        &[],
        SCRIPT,
    ));
    assert!(s.request.deadline > 0);
    assert_eq!(s.request.kill_invalid_dep, Some(true));
    assert_eq!(s.request.priority, Some(0xffff_fffd));
    assert!(s.wait);
    let s = submission(plan_stdin("", &env(&[("SBATCH_WAIT", "1")]), SCRIPT));
    assert!(s.wait);
    let s = submission(plan_stdin("--wait --test-only", &[], SCRIPT));
    assert!(!s.wait, "--test-only submits nothing to wait for");
    assert_eq!(
        printed_error("--priority=-3", &[], SCRIPT),
        "sbatch: error: Priority must be >= 0\n"
    );
}

#[test]
fn memory_per_cpu_tmp_and_contiguous_reach_the_request() {
    // The directive's --mem gives way to --mem-per-cpu on the command line.
    let s = submission(plan_stdin(
        "--mem-per-cpu=300 --tmp=1G --contiguous",
        &[],
        SCRIPT,
    ));
    let r = &s.request;
    assert_eq!((r.mem_mb, r.mem_per_cpu_mb), (None, Some(300)));
    assert_eq!((r.tmp_mb, r.contiguous), (Some(1024), true));
    // From the environment, against the directive's --mem: memory per CPU, as Slurm asks it.
    let e = env(&[("SBATCH_MEM_PER_CPU", "2G")]);
    let r = submission(plan_stdin("", &e, SCRIPT)).request;
    assert_eq!((r.mem_mb, r.mem_per_cpu_mb), (None, Some(2048)));
    // --mem on the command line wins over the environment's memory per CPU.
    let r = submission(plan_stdin("--mem=64", &e, SCRIPT)).request;
    assert_eq!((r.mem_mb, r.mem_per_cpu_mb), (Some(64), None));
    assert_eq!(
        printed_error("--mem=1G --mem-per-cpu=1G", &[], SCRIPT),
        "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"
    );
    let both = env(&[("SBATCH_MEM_PER_CPU", "1"), ("SBATCH_MEM_PER_NODE", "1")]);
    assert_eq!(
        printed_error("", &both, "#!/bin/sh\ntrue\n"),
        "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.\n"
    );
    assert_eq!(
        printed_error("--tmp=big", &[], SCRIPT),
        "sbatch: error: Invalid --tmp specification\n"
    );
}
