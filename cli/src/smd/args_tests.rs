//! smd's command line.

use super::args::{Action, ArgsError, Command, Filter, parse};

fn p(args: &[&str], env_job: Option<&str>) -> Result<Command, ArgsError> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    parse(&args, env_job)
}

fn run(job: u32, action: Action, parsable: bool) -> Command {
    Command::Run {
        job,
        action,
        parsable,
    }
}

#[test]
fn no_arguments_inside_a_job_is_the_automatic_handling() {
    assert_eq!(p(&[], Some("58")).unwrap(), run(58, Action::Auto, false));
    assert_eq!(p(&[], None).unwrap_err(), ArgsError::NoJob);
    assert_eq!(
        p(&[], Some("x")).unwrap_err().to_string(),
        "Invalid SLURM_JOB_ID in the environment: x"
    );
    assert_eq!(
        p(&["-j", "5"], Some("58")).unwrap(),
        run(5, Action::Query(Filter::All), false)
    );
}

#[test]
fn each_operation_parses() {
    let cases: Vec<(&[&str], Action)> = vec![
        (&["-q"], Action::Query(Filter::All)),
        (&["-f"], Action::Query(Filter::Failed)),
        (&["--failing"], Action::Query(Filter::Failing)),
        (&["-r", "n1"], Action::Replace("n1".into())),
        (&["--drop=n2"], Action::Drop("n2".into())),
        (
            &["-R", "disk errors", "--drain", "n3"],
            Action::Drain {
                node: "n3".into(),
                reason: "disk errors".into(),
            },
        ),
        (&["-e30"], Action::Extend(30)),
        (&["--wait"], Action::Wait),
        (&["-a"], Action::Auto),
    ];
    for (args, action) in cases {
        let mut all = vec!["-j", "12"];
        all.extend_from_slice(args);
        assert_eq!(p(&all, None).unwrap(), run(12, action, false), "{args:?}");
    }
    assert_eq!(
        p(&["-p", "-f"], Some("3")).unwrap(),
        run(3, Action::Query(Filter::Failed), true)
    );
}

#[test]
fn bad_command_lines_are_named() {
    for (args, text) in [
        (&["-j", "x"][..], "Invalid job id: x"),
        (&["-j", "0"], "Invalid job id: 0"),
        (&["-j", "1", "-q", "-f"], "Only one of"),
        (&["-j", "1", "-D", "n1"], "--drain needs --reason"),
        (
            &["-j", "1", "-D", "n1", "-R", " "],
            "--drain needs --reason",
        ),
        (
            &["-j", "1", "-q", "-R", "x"],
            "--reason is only for --drain",
        ),
        (&["-j", "1", "-r", "n 1"], "Invalid node name: \"n 1\""),
        (&["-j", "1", "-e", "0"], "Invalid --extend value: 0"),
        (&["-j", "1", "-e", "-3"], "Invalid --extend value: -3"),
        (&["-j", "1", "17"], "Unexpected argument: 17"),
        (&["-j", "1", "-a", "-p"], "--parsable does not apply"),
        (&["-p"], "--parsable does not apply"),
        (&["--bogus"], "unrecognized option '--bogus'"),
    ] {
        let e = p(args, None).unwrap_err().to_string();
        assert!(e.contains(text), "{args:?}: {e}");
    }
    assert!(matches!(p(&["-h"], None), Ok(Command::Print(t)) if t.contains("--replace=NODE")));
    assert_eq!(p(&["-V"], None).unwrap(), Command::Version);
}
