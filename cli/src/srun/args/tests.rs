//! srun option parsing, as users type the options.

use super::*;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn run(args: &str, env: &[(&str, &str)]) -> Result<SrunOpts, ArgsError> {
    let environ: Vec<(String, String)> = env
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    match parse(&words(args), &environ)? {
        Invocation::Run(o) => Ok(*o),
        other => panic!("expected a run, got {other:?}"),
    }
}

#[test]
fn options_stop_at_the_command() {
    let o = run("-N2 -n 4 -l hostname -n 9", &[]).unwrap();
    assert_eq!(o.job.ntasks, Some(4));
    assert!(o.label);
    assert_eq!(o.command, vec!["hostname", "-n", "9"]);
}

#[test]
fn inside_a_job_the_environment_gives_the_job_and_defaults() {
    let env = [
        ("SLURM_JOB_ID", "77"),
        ("SLURM_NTASKS", "3"),
        ("SLURM_LABELIO", "1"),
    ];
    let o = run("true", &env).unwrap();
    assert_eq!(o.job_id, Some(77));
    assert_eq!(o.job.ntasks, Some(3));
    assert!(o.label);
    let o = run("--jobid=5 -n1 true", &env).unwrap();
    assert_eq!((o.job_id, o.job.ntasks), (Some(5), Some(1)));
}

#[test]
fn sharing_options_and_slurm_exclusive() {
    use sluice_wire::proto::JobShare;
    assert_eq!(run("true", &[]).unwrap().job.share, None);
    let o = run("-s -N1 true", &[]).unwrap();
    assert_eq!(o.job.share, Some(JobShare::Oversubscribe));
    let env = [("SLURM_EXCLUSIVE", "exclusive")];
    assert_eq!(
        run("true", &env).unwrap().job.share,
        Some(JobShare::Exclusive)
    );
    assert_eq!(
        run("--oversubscribe true", &env).unwrap().job.share,
        Some(JobShare::Oversubscribe)
    );
    assert_eq!(
        run("--exclusive=mcs true", &[]).unwrap_err().to_string(),
        "--exclusive=mcs is not supported"
    );
}

#[test]
fn step_options() {
    let o = run("--overlap -w n[1-2],n4 -c2 true", &[]).unwrap();
    assert!(o.overlap);
    assert_eq!(o.nodelist, vec!["n1", "n2", "n4"]);
    assert_eq!(o.job.cpus_per_task, Some(2));
    assert!(run("true", &[("SLURM_OVERLAP", "1")]).unwrap().overlap);
    assert_eq!(
        run("-w n[1- true", &[]).unwrap_err().to_string(),
        "Invalid --nodelist specification"
    );
}

#[test]
fn io_options_and_their_environment() {
    let o = run(
        "--unbuffered --output /p/%j_%t_log.out --error /p/%j_%t_log.err python -u",
        &[],
    )
    .unwrap();
    assert!(o.unbuffered);
    assert_eq!(o.output, IoTarget::File("/p/%j_%t_log.out".into()));
    assert_eq!(
        o.stderr_target(),
        &IoTarget::File("/p/%j_%t_log.err".into())
    );
    assert_eq!(o.command, ["python", "-u"]);
    let o = run("-i0 -o none --open-mode=append true", &[]).unwrap();
    assert_eq!(
        (&o.input, o.stderr_target()),
        (&IoTarget::Task(0), &IoTarget::None)
    );
    assert_eq!(o.job.open_append, Some(true));
    assert!(IoTarget::Task(2).shows(2) && !IoTarget::Task(2).shows(1));
    let env = [
        ("SLURM_STDINMODE", "none"),
        ("SLURM_STDOUTMODE", "out.%t"),
        ("SLURM_STDERRMODE", "1"),
        ("SLURM_UNBUFFEREDIO", "1"),
    ];
    let o = run("true", &env).unwrap();
    assert_eq!(
        (o.input, o.output),
        (IoTarget::None, IoTarget::File("out.%t".into()))
    );
    assert_eq!((o.error, o.unbuffered), (Some(IoTarget::Task(1)), true));
    assert_eq!(run("-i all true", &env).unwrap().input, IoTarget::All);
}

#[test]
fn cpu_bind_help() {
    let words = words("--cpu-bind=help true");
    assert_eq!(parse(&words, &[]), Ok(Invocation::CpuBindHelp));
}

#[test]
fn cpu_bind_and_ntasks_per_node() {
    let o = run("--cpu-bind=q,cores true", &[]).unwrap();
    assert_eq!(
        o.cpu_bind.unwrap().kind,
        sluice_vocab::cpu_bind::BindKind::Cores
    );
    assert!(
        run("true", &[("SLURM_CPU_BIND", "verbose,rank")])
            .unwrap()
            .cpu_bind
            .unwrap()
            .verbose
    );
    assert_eq!(
        run("--cpu-bind=bogus true", &[]).unwrap_err().to_string(),
        "unrecognized --cpu-bind argument \"bogus\""
    );
    let env = [("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "3")];
    let o = run("--ntasks-per-node=1 true", &env).unwrap();
    assert_eq!((o.job.ntasks, o.job.ntasks_per_node), (None, Some(1)));
    let o = run("-n2 --ntasks-per-node=1 true", &env).unwrap();
    assert_eq!(o.job.ntasks, Some(2));
    let o = run("true", &[("SLURM_NTASKS_PER_NODE", "2")]).unwrap();
    assert_eq!(o.job.ntasks_per_node, Some(2));
}

#[test]
fn step_options_and_their_environment() {
    let o = run(
        "--whole -K -W 5 -I -r 1 -E --prolog /p --epilog none -T 4 --multi-prog conf",
        &[],
    )
    .unwrap();
    assert!(o.step.whole && o.step.multi_prog && o.step.preserve_env);
    assert_eq!(o.step.kill_on_bad_exit, Some(true));
    assert_eq!(
        (o.step.wait, o.step.relative, o.step.threads),
        (Some(5), Some(1), Some(4))
    );
    assert_eq!(o.step.immediate, Some(crate::salloc::args::Immediate::Now));
    assert_eq!(
        (o.step.prolog.as_deref(), o.step.epilog.as_deref()),
        (Some("/p"), Some("none"))
    );
    assert_eq!(o.command, ["conf"]);
    assert!(!run("--whole --exact true", &[]).unwrap().step.whole);
    let o = run(
        "-K0 --immediate=3 --task-prolog tp --task-epilog te true",
        &[],
    )
    .unwrap();
    assert_eq!(o.step.kill_on_bad_exit, Some(false));
    assert_eq!(
        o.step.immediate,
        Some(crate::salloc::args::Immediate::Within(3))
    );
    assert_eq!(
        (o.step.task_prolog.as_deref(), o.step.task_epilog.as_deref()),
        (Some("tp"), Some("te"))
    );
    let env = [
        ("SLURM_KILL_BAD_EXIT", "1"),
        ("SLURM_WAIT", "9"),
        ("SLURM_THREADS", "2"),
        ("SLURM_EXACT", "1"),
        ("SLURM_PROLOG", "/sp"),
        ("SLURM_TASK_EPILOG", "/te"),
    ];
    let o = run("--whole true", &env).unwrap();
    assert!(o.step.whole, "the command line beats SLURM_EXACT");
    assert_eq!(o.step.kill_on_bad_exit, Some(true));
    assert_eq!((o.step.wait, o.step.threads), (Some(9), Some(2)));
    assert_eq!(o.step.prolog.as_deref(), Some("/sp"));
    assert_eq!(o.step.task_epilog.as_deref(), Some("/te"));
    assert_eq!(
        run("-W soon true", &[]).unwrap_err().to_string(),
        "Invalid numeric value \"soon\" for --wait."
    );
    assert_eq!(
        run("--threads=100 true", &[]).unwrap_err().to_string(),
        "Thread value 100 exceeds defined limit 60"
    );
    assert!(run("--test-only true", &[]).unwrap().step.test_only);
    assert!(run("--launch-cmd true", &[]).unwrap().step.launch_cmd);
}

/// Every option of Slurm 22.05's srun is in the table: implemented, or in the catalog.
#[test]
fn every_slurm_srun_option_is_known() {
    let longs: Vec<&str> = table().iter().map(|s| s.long).collect();
    for long in [
        "accel-bind",
        "bcast",
        "bcast-exclude",
        "compress",
        "cpu-bind",
        "disable-status",
        "epilog",
        "exact",
        "het-group",
        "immediate",
        "input",
        "jobid",
        "kill-on-bad-exit",
        "label",
        "launch-cmd",
        "launcher-opts",
        "mpi",
        "multi-prog",
        "no-allocate",
        "open-mode",
        "overlap",
        "preserve-env",
        "prolog",
        "pty",
        "quit-on-interrupt",
        "relative",
        "resv-ports",
        "send-libs",
        "slurmd-debug",
        "task-epilog",
        "task-prolog",
        "test-only",
        "threads",
        "unbuffered",
        "wait",
        "whole",
    ] {
        assert!(
            longs.contains(&long),
            "--{long} is missing from srun's table"
        );
    }
    assert_eq!(
        run("--accel-bind=g true", &[]).map(|o| o.command),
        Ok(vec!["true".to_string()])
    );
    assert_eq!(
        run("--accel-bind=x true", &[]).unwrap_err().to_string(),
        "Invalid --accel-bind specification: x"
    );
    assert!(run("--launcher-opts=-v true", &[]).is_ok());
}

#[test]
fn refusals() {
    assert_eq!(run("-N 2", &[]), Err(ArgsError::NoCommand));
    assert_eq!(
        run("-n zero true", &[]).unwrap_err().to_string(),
        "Invalid numeric value \"zero\" for --ntasks."
    );
    assert_eq!(
        run("-g true", &[]).unwrap_err().to_string(),
        "invalid option -- 'g'"
    );
    assert_eq!(
        run("--het-group=0,1 true", &[]).unwrap().het_group,
        Some(vec![0, 1])
    );
    assert_eq!(
        run("--het-group=2,0-1 true", &[]).unwrap().het_group,
        Some(vec![0, 1, 2])
    );
    assert_eq!(
        run("--het-group=x true", &[]).unwrap_err().to_string(),
        "_parse_single_range: Invalid range: `x'\nsrun: error: Invalid --het-group value: x"
    );
    assert!(run("-Z -w n1 true", &[]).unwrap().no_allocate);
    assert_eq!(
        run("--mpi=pmi2 true", &[]).unwrap_err().to_string(),
        "invalid MPI type 'pmi2', --mpi=list for acceptable types"
    );
    assert_eq!(
        run("--mpi=none true", &[]).map(|o| o.command),
        Ok(vec!["true".to_string()])
    );
    assert_eq!(
        parse(&["--mpi=list".to_string()], &[]),
        Ok(Invocation::MpiList)
    );
}

#[test]
fn distribution_from_the_command_line_and_the_job() {
    use sluice_vocab::distribution::NodeDist;
    let o = run("-m cyclic:block true", &[]).unwrap();
    let d = o.job.distribution.unwrap();
    assert_eq!(d.nodes, Some(NodeDist::Cyclic));
    assert_eq!(d.env_value(), "cyclic:block");
    let env = [
        ("SLURM_DISTRIBUTION", "plane"),
        ("SLURM_DIST_PLANESIZE", "3"),
    ];
    let o = run("true", &env).unwrap();
    assert_eq!(o.job.distribution.unwrap().nodes, Some(NodeDist::Plane(3)));
    let o = run("--distribution=block true", &env).unwrap();
    assert_eq!(
        o.job.distribution.unwrap().nodes,
        Some(NodeDist::Block),
        "the command line wins"
    );
    assert_eq!(
        run("-m plane true", &[]).unwrap_err().to_string(),
        "Invalid plane size or size not specified"
    );
}

#[test]
fn hints_become_a_binding_unless_an_explicit_option_replaces_them() {
    use sluice_vocab::cpu_bind::BindKind;
    let o = run("--hint=nomultithread true", &[]).unwrap();
    assert_eq!(
        o.cpu_bind.as_ref().map(|b| &b.kind),
        Some(&BindKind::Threads)
    );
    assert_eq!(o.job.topo.threads_per_core, Some(1));
    let o = run("--hint=memory_bound --cpu-bind=verbose true", &[]).unwrap();
    let b = o.cpu_bind.unwrap();
    assert_eq!((b.kind, b.verbose), (BindKind::Cores, true));
    let o = run("--hint=nomultithread --cpu-bind=rank true", &[]).unwrap();
    assert_eq!(o.cpu_bind.unwrap().kind, BindKind::Rank);
    assert_eq!(o.job.hint, None);
    let o = run("--hint=nomultithread --ntasks-per-core=2 true", &[]).unwrap();
    assert_eq!(o.job.topo.threads_per_core, None);
    assert_eq!(
        o.cpu_bind.map(|b| b.kind),
        Some(BindKind::Cores),
        "--ntasks-per-core binds to cores"
    );
    let o = run("true", &[("SLURM_HINT", "compute_bound")]).unwrap();
    assert_eq!(o.cpu_bind.unwrap().kind, BindKind::Cores);
    assert_eq!(parse(&words("--hint=help"), &[]), Ok(Invocation::HintHelp));
    assert_eq!(
        parse(&words("--mem-bind=help"), &[]),
        Ok(Invocation::MemBindHelp)
    );
}

#[test]
fn memory_frequency_and_sampling_options() {
    let o = run(
        "--mem-bind=v,local --cpu-freq=low-high --acctg-freq=task=2 true",
        &[],
    )
    .unwrap();
    assert_eq!(o.job.mem_bind.as_deref(), Some("v,local"));
    assert_eq!(o.job.cpu_freq.unwrap().env_value(), "Low-High");
    assert_eq!(o.job.acctg_freq.as_deref(), Some("task=2"));
    let env = [("SLURM_CPU_FREQ_REQ", "High"), ("SLURM_MEM_BIND", "local")];
    let o = run("true", &env).unwrap();
    assert_eq!(o.job.cpu_freq.unwrap().env_value(), "High");
    assert_eq!(o.job.mem_bind.as_deref(), Some("local"));
    for (bad, words) in [
        (
            "--mem-bind=bogus",
            "unrecognized --mem-bind argument \"bogus\"",
        ),
        ("--cpu-freq=0", "unrecognized --cpu-freq argument \"0\""),
        (
            "--acctg-freq=task=x",
            "Invalid --acctg-freq specification: task=x",
        ),
    ] {
        assert_eq!(
            run(&format!("{bad} true"), &[]).unwrap_err().to_string(),
            words
        );
    }
}

#[test]
fn each_component_has_its_command_or_the_next_ones() {
    let o = run("-n1 -l hostname -s : -n2 date", &[]).unwrap();
    assert_eq!(o.command, words("hostname -s"));
    assert_eq!(o.het_components.len(), 1);
    assert_eq!(o.het_components[0].command, words("date"));
    assert_eq!(o.het_components[0].job.ntasks, Some(2));
    // Slurm's srun: a component without a command runs the next one's.
    let o = run("-n1 : -n2 : -n3 uname -a", &[]).unwrap();
    assert_eq!(o.command, words("uname -a"));
    let later: Vec<_> = o.het_components.iter().map(|c| c.command.clone()).collect();
    assert_eq!(later, vec![words("uname -a"), words("uname -a")]);
    let o = run("-n1 a : -n2 : -n3 b", &[]).unwrap();
    assert_eq!(o.het_components[0].command, words("b"));
    // The last one needs a command.
    assert!(matches!(run("-n1 a : -n2", &[]), Err(ArgsError::NoCommand)));
    assert!(matches!(run("-n1 a :", &[]), Err(ArgsError::NoCommand)));
}

#[test]
fn output_options_pass_on_to_later_components_as_slurms_guide_lists() {
    let o = run("-l -u -o out.%t -K : -n1 : -e err -i none true", &[]).unwrap();
    let [b, c] = &o.het_components[..] else {
        panic!("three components");
    };
    for later in [b, c] {
        assert!(later.label && later.unbuffered, "{later:?}");
        assert_eq!(later.output, IoTarget::File("out.%t".into()));
        assert_eq!(later.step.kill_on_bad_exit, Some(true));
    }
    assert_eq!(c.error, Some(IoTarget::File("err".into())));
    assert_eq!(c.input, IoTarget::None);
    assert_eq!(
        (&o.error, &o.input),
        (&None, &IoTarget::All),
        "not backwards"
    );
    // A later component's own -l applies from it on, not before.
    let o = run("-n1 a : -l -n1 b", &[]).unwrap();
    assert!(!o.label && o.het_components[0].label);
}
