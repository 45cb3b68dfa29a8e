use super::*;

fn run(args: &[&str]) -> Result<SstatOpts, String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse(&args)? {
        Invocation::Run(o) => Ok(o),
        other => Err(format!("{other:?}")),
    }
}

#[test]
fn jobs_steps_and_layouts_are_read() {
    let o = run(&["-a", "-j", "12,13.batch", "--jobs=14.2", "-P", "-n"]).unwrap();
    let jobs: Vec<(u32, Option<i32>)> = o.jobs.iter().map(|j| (j.id, j.step)).collect();
    assert_eq!(jobs, vec![(12, None), (13, Some(-4)), (14, Some(2))]);
    assert!(o.all_steps && o.no_header);
    assert_eq!(o.mode, OutputMode::Parsable2);
    assert_eq!(o.format, DEFAULT_FORMAT);
    let o = run(&["-p", "-o", "jobid,maxrss%20", "-j", "5"]).unwrap();
    assert_eq!(
        (o.mode, o.format.as_str()),
        (OutputMode::Parsable, "jobid,maxrss%20")
    );
    assert_eq!(run(&["-i", "-j5"]).unwrap().format, PID_FORMAT);
    assert_eq!(run(&["--fields=ntasks", "7"]).unwrap().jobs[0].id, 7);
}

#[test]
fn bad_command_lines_get_slurms_text() {
    assert_eq!(
        run(&[]).unwrap_err(),
        "sstat: error: You didn't give me any jobs to stat."
    );
    assert_eq!(
        run(&["-j", "abc"]).unwrap_err(),
        "sstat: fatal: Bad job/step specified: abc"
    );
    assert_eq!(
        run(&["-j", "5,7+1.0"]).unwrap_err(),
        "sstat: fatal: Bad job/step specified: 7+1.0"
    );
    assert_eq!(run(&["-x"]).unwrap_err(), "sstat: invalid option -- 'x'");
}

#[test]
fn help_usage_version_and_field_list_stop_parsing() {
    let p = |a: &str| parse(&[a.to_string()]).unwrap();
    assert_eq!(p("-h"), Invocation::Help);
    assert_eq!(p("--usage"), Invocation::Usage);
    assert_eq!(p("-e"), Invocation::HelpFormat);
    assert_eq!(p("-V"), Invocation::Version);
}
