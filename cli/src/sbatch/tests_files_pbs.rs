//! sbatch's planning of the options that read files (`--export-file`, `-F`, `-w` with a path,
//! `-i`) and of `#PBS` directives with their precedence and `--ignore-pbs`.

use super::*;

fn who(cwd: &str) -> Submitter {
    Submitter {
        user: "u".into(),
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        host: "h".into(),
        cwd: cwd.into(),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn submit(list: &[&str], environ: &[(String, String)], script: &str) -> Submission {
    match plan(&args(list), environ, &who("/work"), &mut script.as_bytes()) {
        Ok(Plan::Submit(s)) => *s,
        other => panic!("expected a submission, got {other:?}"),
    }
}

fn refused(list: &[&str], script: &str) -> SbatchError {
    match plan(&args(list), &[], &who("/work"), &mut script.as_bytes()) {
        Err(e) => e,
        Ok(p) => panic!("expected a refusal, got {p:?}"),
    }
}

fn var<'a>(s: &'a Submission, name: &str) -> Option<&'a str> {
    s.request
        .env
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.value.as_str())
}

const PLAIN: &str = "#!/bin/sh\necho hi\n";

#[test]
fn export_file_variables_join_the_environment_before_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("vars");
    std::fs::write(&f, "EF_A=1\0EF_B=two\nlines\0").unwrap();
    let path = f.to_str().unwrap();
    let base = env(&[("HOME", "/h"), ("EF_A", "old")]);
    let s = submit(&["--export-file", path], &base, PLAIN);
    assert_eq!(var(&s, "EF_A"), Some("1"), "the file overrides");
    assert_eq!(var(&s, "EF_B"), Some("two\nlines"));
    assert_eq!(var(&s, "HOME"), Some("/h"));
    // As on Slurm: NONE drops them, a listed setting overrides one and drops the rest.
    let s = submit(&["--export=NONE", "--export-file", path], &base, PLAIN);
    assert_eq!((var(&s, "EF_A"), var(&s, "HOME")), (None, None));
    let s = submit(
        &["--export=EF_X=9,EF_A=7", "--export-file", path],
        &base,
        PLAIN,
    );
    assert_eq!(
        (var(&s, "EF_A"), var(&s, "EF_B"), var(&s, "EF_X")),
        (Some("7"), None, Some("9"))
    );
    let e = refused(&["--export-file=/nonexistent/f"], PLAIN);
    assert_eq!(
        e.to_string(),
        "Could not open user environment file /nonexistent/f"
    );
    assert_eq!(e.exit_code(), 1);
}

#[test]
fn node_files_set_the_required_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nodes");
    std::fs::write(&f, "n1\nn[3-4]\n").unwrap();
    let path = f.to_str().unwrap();
    let s = submit(&["-F", path], &[], PLAIN);
    assert_eq!(s.request.nodelist, "n1,n3,n4");
    // `-w` with a `/` reads a node file too.
    let s = submit(&["-w", path], &[], PLAIN);
    assert_eq!(s.request.nodelist, "n1,n3,n4");
    let e = refused(&["--nodefile=/nonexistent/n"], PLAIN);
    let mut text = Vec::new();
    e.print(&mut text);
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "sbatch: error: slurm_allocate_resources error opening file /nonexistent/n, \
         No such file or directory\nsbatch: error: Invalid --nodefile node file\n"
    );
    assert_eq!(e.exit_code(), 255);
}

#[test]
fn input_is_the_scripts_stdin_pattern() {
    let s = submit(&["-i", "in-%j.txt"], &[], PLAIN);
    assert_eq!(s.request.stdin.as_deref(), Some("in-%j.txt"));
    let s = submit(&["--input=/dev/zero"], &[], PLAIN);
    assert_eq!(s.request.stdin.as_deref(), Some("/dev/zero"));
    assert_eq!(submit(&[], &[], PLAIN).request.stdin, None);
}

const PBS: &str = "#!/bin/sh\n#SBATCH -J sb -p sbpart\n#PBS -N pbsname\n\
    #PBS -l walltime=00:05:00,nodes=1:ppn=2,mem=100mb\n#PBS -m be -M a@b\n\
    #PBS -o pbs.out\n#PBS -W depend=afterok:12\necho hi\n#PBS -N never\n";

#[test]
fn pbs_directives_follow_sbatch_ones_and_yield_to_environment_and_command_line() {
    let s = submit(&[], &[], PBS);
    let r = &s.request;
    assert_eq!(r.name, "pbsname", "#PBS -N after #SBATCH -J");
    assert_eq!(r.partition.as_deref(), Some("sbpart"));
    assert_eq!(r.time_limit.as_deref(), Some("00:05:00"));
    assert_eq!(
        (r.min_nodes, r.ntasks, r.ntasks_per_node),
        (Some(1), Some(2), Some(2))
    );
    assert_eq!(r.mem_mb, Some(100));
    assert_eq!(
        (r.mail_type.as_str(), r.mail_user.as_str()),
        ("BEGIN,END", "a@b")
    );
    assert_eq!(r.stdout.as_deref(), Some("pbs.out"));
    assert_eq!(r.dependency.as_deref(), Some("afterok:12"));
    let s = submit(&[], &env(&[("SBATCH_JOB_NAME", "envname")]), PBS);
    assert_eq!(s.request.name, "envname");
    let s = submit(&["-J", "cli"], &[], PBS);
    assert_eq!(s.request.name, "cli");
}

#[test]
fn ignore_pbs_from_the_command_line_environment_or_a_directive() {
    for (list, environ, script) in [
        (vec!["--ignore-pbs"], vec![], PBS.to_string()),
        (vec![], env(&[("SBATCH_IGNORE_PBS", "1")]), PBS.to_string()),
        (
            vec![],
            vec![],
            PBS.replacen("#SBATCH -J sb", "#SBATCH --ignore-pbs -J sb", 1),
        ),
    ] {
        let s = submit(&list, &environ, &script);
        assert_eq!(s.request.name, "sb", "{list:?} {environ:?}");
        assert_eq!(s.request.time_limit, None);
    }
    // Ignored PBS lines are not read at all: a bad one does not matter.
    let bad = "#!/bin/sh\n#PBS -X y\necho\n";
    assert!(matches!(refused(&[], bad), SbatchError::ForeignOption('X')));
    submit(&["--ignore-pbs"], &[], bad);
}

#[test]
fn bsub_lines_are_read_instead_of_pbs_ones() {
    let script =
        "#!/bin/sh\n#SBATCH -J s\n#PBS -l walltime=5:00\n#BSUB -J b -W 7\n#BSUB -x\necho\n";
    let s = submit(&[], &[], script);
    assert_eq!(s.request.name, "b");
    assert_eq!(
        s.request.time_limit.as_deref(),
        Some("7"),
        "not the #PBS walltime"
    );
    assert_eq!(
        s.request.share,
        i32::from(sluice_wire::proto::JobShare::Exclusive)
    );
    let s = submit(&["--ignore-pbs"], &[], script);
    assert_eq!((s.request.name.as_str(), s.request.time_limit), ("s", None));
}
