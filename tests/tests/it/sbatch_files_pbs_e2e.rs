//! sbatch's options that read files, and foreign directives, on a real local cluster through
//! sbatch and scontrol: `--export-file`, `-i/--input`, `-F/--nodefile`, `#PBS` and `#BSUB`
//! lines, and `--ignore-pbs`.

use crate::common;

use common::cluster::Cluster;

fn show(c: &Cluster, job: u32) -> String {
    c.ok("scontrol", &["show", "job", &job.to_string()])
}

/// `sbatch --parsable args` with `script` on stdin: the new job's id.
fn sbatch_script(c: &Cluster, args: &[&str], script: &str) -> u32 {
    let mut all = vec!["--parsable"];
    all.extend_from_slice(args);
    let out = c.cmd_stdin("sbatch", &all, script);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().parse().expect("a job id")
}

#[test]
fn export_file_input_and_node_file_reach_the_job() {
    let c = Cluster::start(2);
    let work = c.work.clone();
    std::fs::write(work.join("vars"), "EF_A=1\0EF_B=two words\0").unwrap();
    std::fs::write(work.join("in.txt"), "hello from stdin\n").unwrap();
    std::fs::write(work.join("nodes"), "clustern2\n").unwrap();

    let ef = c.sbatch(&[
        "--export-file=vars",
        "-o",
        "ef.out",
        "--wrap",
        "echo \"EF=$EF_A/$EF_B\"",
    ]);
    let input = c.sbatch(&["-i", "in.txt", "-o", "in.out", "--wrap", "cat"]);
    let nodes = c.sbatch(&["-F", "nodes", "--wrap", "true"]);
    for job in [ef, input, nodes] {
        assert_eq!(c.wait_done(job), "COMPLETED", "{}", show(&c, job));
    }
    c.wait_file("ef.out", "EF=1/two words");
    c.wait_file("in.out", "hello from stdin");
    let s = show(&c, input);
    assert!(
        s.contains(&format!("StdIn={}/in.txt\n", work.display())),
        "{s}"
    );
    assert!(show(&c, ef).contains("StdIn=/dev/null\n"));
    let s = show(&c, nodes);
    assert!(s.contains("ReqNodeList=clustern2 "), "{s}");
    assert!(s.contains("   NodeList=clustern2\n"), "{s}");

    // Files that cannot be read: Slurm's words and exit codes.
    let out = c.cmd(
        "sbatch",
        &["--export-file=/nonexistent/v", "--wrap", "true"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: error: Could not open user environment file /nonexistent/v\n"
    );
    let out = c.cmd("sbatch", &["-F", "/nonexistent/n", "--wrap", "true"]);
    assert_eq!(out.code, 255, "{out:?}");
    assert!(
        out.stderr
            .ends_with("sbatch: error: Invalid --nodefile node file\n"),
        "{out:?}"
    );
}

const PBS: &str = "#!/bin/sh\n#SBATCH -J sbname\n#PBS -N pbsjob\n\
    #PBS -l walltime=00:05:00\n#PBS -o pbs.out\n#PBS -v PV=from_pbs\necho \"PV=$PV\"\n";

#[test]
fn pbs_and_bsub_directives_are_read_unless_ignored() {
    let c = Cluster::start(1);
    let pbs = sbatch_script(&c, &[], PBS);
    assert_eq!(c.wait_done(pbs), "COMPLETED");
    let s = show(&c, pbs);
    assert!(s.contains("JobName=pbsjob\n"), "{s}");
    assert!(s.contains(" TimeLimit=00:05:00 "), "{s}");
    c.wait_file("pbs.out", "PV=from_pbs");

    let ignored = sbatch_script(&c, &["--ignore-pbs"], PBS);
    assert_eq!(c.wait_done(ignored), "COMPLETED");
    let s = show(&c, ignored);
    assert!(s.contains("JobName=sbname\n"), "{s}");
    assert!(s.contains(" TimeLimit=UNLIMITED "), "{s}");

    let bsub = "#!/bin/sh\n#BSUB -J bsubjob -W 7\n#PBS -N never\ntrue\n";
    let job = sbatch_script(&c, &[], bsub);
    assert_eq!(c.wait_done(job), "COMPLETED");
    let s = show(&c, job);
    assert!(s.contains("JobName=bsubjob\n"), "{s}");
    assert!(s.contains(" TimeLimit=00:07:00 "), "{s}");

    let out = c.cmd_stdin("sbatch", &[], "#!/bin/sh\n#PBS -X y\ntrue\n");
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: invalid option -- 'X'\nsbatch: error: Unrecognized command line parameter ?\n"
    );
}

#[test]
fn propagate_resource_limits_except_keeps_a_limit_at_home() {
    let c = Cluster::start_with(1, &["PropagateResourceLimitsExcept=NOFILE"]);
    let out = c.shell(
        "ulimit -S -n 321 && ulimit -S -c 1234 && exec sbatch --parsable --wrap 'ulimit -n; ulimit -c'",
    );
    let job: u32 = out
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(c.wait_done(job), "COMPLETED");
    let text = c.read(&format!("slurm-{job}.out"));
    let mut lines = text.lines();
    assert_ne!(lines.next(), Some("321"), "NOFILE is not carried: {text}");
    assert_eq!(lines.next(), Some("1234"), "CORE still is: {text}");
    // --propagate overrides the configuration.
    let out =
        c.shell("ulimit -S -n 321 && exec sbatch --parsable --propagate=NOFILE --wrap 'ulimit -n'");
    let job: u32 = out.stdout.trim().parse().unwrap();
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{job}.out")), "321\n");
}
