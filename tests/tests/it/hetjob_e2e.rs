//! Heterogeneous jobs through the real binaries on a local cluster: `sbatch A : B` and
//! `#SBATCH hetjob`, the `_HET_GROUP_N` variables of the batch script, the views (squeue's
//! `123+1`, scontrol's `HetJobId=`), scancel of the whole job and of one component, and what
//! Slurm refuses (a heterogeneous array).

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

/// Each component of heterogeneous job `leader` as squeue lists it: `(JOBID, raw id, state)`,
/// in offset order.
fn components(c: &Cluster, leader: u32) -> Vec<(String, String, String)> {
    let mut parts: Vec<(String, String, String)> = c
        .ok(
            "squeue",
            &[
                "-h",
                "-t",
                "all",
                "-j",
                &leader.to_string(),
                "-o",
                "%i|%A|%T",
            ],
        )
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    parts.sort();
    parts
}

/// Waits until every component of `leader` is in `state`.
fn wait_all(c: &Cluster, leader: u32, state: &str) {
    c.wait_for(
        &format!("every component of {leader} to be {state}"),
        || {
            let parts = components(c, leader);
            !parts.is_empty() && parts.iter().all(|p| p.2 == state)
        },
    );
}

/// The value of `name` in `text`'s `NAME=value` lines.
fn var<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
}

#[test]
fn sbatch_with_colons_runs_one_job_of_components_on_nodes_of_their_own() {
    let c = Cluster::start(2);
    let out = c.cmd(
        "sbatch",
        &[
            "--parsable",
            "-J",
            "hx",
            "-t",
            "5",
            "-o",
            "het-%j.out",
            ":",
            "-n1",
            "--wrap",
            "env | grep -E '^SLURM_(HET|PACK|JOB_ID|JOB_NODELIST|NTASKS|JOB_NAME)' | sort",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let leader: u32 = out.stdout.trim().parse().expect("the leader's id");
    wait_all(&c, leader, "COMPLETED");
    let follower = leader + 1;
    assert_eq!(
        components(&c, leader),
        [
            (
                format!("{leader}+0"),
                leader.to_string(),
                "COMPLETED".to_string()
            ),
            (
                format!("{leader}+1"),
                follower.to_string(),
                "COMPLETED".to_string()
            ),
        ]
    );
    let env = c.wait_file(&format!("het-{leader}.out"), "SLURM_HET_SIZE");
    assert_eq!(var(&env, "SLURM_HET_SIZE"), Some("2"), "{env}");
    assert_eq!(var(&env, "SLURM_PACK_SIZE"), Some("2"), "{env}");
    assert_eq!(var(&env, "SLURM_JOB_ID"), Some(leader.to_string().as_str()));
    assert_eq!(
        var(&env, "SLURM_JOB_ID_HET_GROUP_0"),
        Some(leader.to_string().as_str())
    );
    assert_eq!(
        var(&env, "SLURM_JOB_ID_HET_GROUP_1"),
        Some(follower.to_string().as_str())
    );
    // The job name is passed on to the second component; each runs on a node of its own.
    assert_eq!(var(&env, "SLURM_JOB_NAME_HET_GROUP_1"), Some("hx"));
    let (n0, n1) = (
        var(&env, "SLURM_JOB_NODELIST_HET_GROUP_0").unwrap(),
        var(&env, "SLURM_JOB_NODELIST_HET_GROUP_1").unwrap(),
    );
    assert_ne!(n0, n1, "{env}");
    assert_eq!(var(&env, "SLURM_JOB_NODELIST"), Some(n0));
    assert_eq!(var(&env, "SLURM_NTASKS_HET_GROUP_1"), Some("1"));

    // scontrol: every component of the job, or the one named.
    let show = c.ok("scontrol", &["show", "job", &leader.to_string()]);
    assert!(
        show.contains(&format!(
            "JobId={leader} HetJobId={leader} HetJobOffset=0 JobName=hx"
        )),
        "{show}"
    );
    assert!(
        show.contains(&format!(
            "JobId={follower} HetJobId={leader} HetJobOffset=1 JobName=hx"
        )),
        "{show}"
    );
    assert!(
        show.contains(&format!("HetJobIdSet={leader}-{follower}")),
        "{show}"
    );
    // sacct: the components as `N+K`, the batch step under the leader.
    let want = format!(
        "{leader}+0|{leader}|COMPLETED\n{leader}+0.batch|{leader}.batch|COMPLETED\n\
         {leader}+1|{follower}|COMPLETED\n"
    );
    c.wait_for("the job's history", || {
        history(&c, &leader.to_string()) == want
    });
    // A component's own id names it alone.
    let own = c.ok(
        "sacct",
        &["-j", &follower.to_string(), "-X", "-P", "-n", "-o", "JobID"],
    );
    assert_eq!(own, format!("{leader}+1\n"));
    // `N+K` names that component alone; `N+0` is the leader's rows, not every component's.
    let rows = history(&c, &format!("{leader}+1"));
    assert_eq!(rows, format!("{leader}+1|{follower}|COMPLETED\n"));
    let rows = history(&c, &format!("{leader}+0"));
    assert_eq!(
        rows,
        format!("{leader}+0|{leader}|COMPLETED\n{leader}+0.batch|{leader}.batch|COMPLETED\n")
    );
    let rows = history(&c, &format!("{leader}+0.batch"));
    assert_eq!(rows, format!("{leader}+0.batch|{leader}.batch|COMPLETED\n"));
    // A component the job does not have: nothing.
    assert_eq!(history(&c, &format!("{leader}+5")), "");
    let bad = format!("{leader}+x");
    let out = c.cmd("sacct", &["-j", &bad]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            format!("sacct: fatal: Bad job/step specified: {bad}\n").as_str()
        ),
        "{out:?}"
    );
    let one = c.ok("scontrol", &["show", "job", &format!("{leader}+1")]);
    assert!(one.starts_with(&format!("JobId={follower} ")), "{one}");
    assert_eq!(one.matches("JobId=").count(), 2, "one record: {one}");
    // The time limit is passed on too.
    assert!(one.contains("TimeLimit=00:05:00"), "{one}");
}

#[test]
fn srun_het_group_runs_one_step_across_the_components_with_ranks_across_them() {
    let c = Cluster::start(2);
    let script = "#!/bin/sh\n\
                  #SBATCH -o steps-%j.out -n1\n\
                  #SBATCH hetjob\n\
                  #SBATCH -n1\n\
                  srun --het-group=0,1 -l sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID \
                  rank=$SLURM_PROCID of=$SLURM_NTASKS nodes=$SLURM_STEP_NUM_NODES on=$SLURMD_NODENAME' \
                  | sort\n\
                  srun sh -c 'echo plain=$SLURM_PROCID/$SLURM_NTASKS on=$SLURMD_NODENAME'\n\
                  srun --het-group=1 sh -c 'echo second=$SLURM_PROCID/$SLURM_NTASKS on=$SLURMD_NODENAME'\n\
                  srun --het-group=2 true; echo rc=$?\n\
                  echo done\n";
    std::fs::write(c.work.join("steps.sh"), script).unwrap();
    let leader = c.sbatch(&["steps.sh"]);
    wait_all(&c, leader, "COMPLETED");
    let text = c.wait_file(&format!("steps-{leader}.out"), "done");
    let lines: Vec<&str> = text.lines().collect();
    let show = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &leader.to_string(), "-o", "%i %N"],
    );
    let node_of = |k: u32| {
        show.lines()
            .find_map(|l| l.strip_prefix(&format!("{leader}+{k} ")))
            .unwrap()
            .to_string()
    };
    let (n0, n1) = (node_of(0), node_of(1));
    assert_eq!(
        &lines[..2],
        [
            format!("0: job={leader} step=0 rank=0 of=2 nodes=2 on={n0}"),
            format!("1: job={leader} step=0 rank=1 of=2 nodes=2 on={n1}"),
        ],
        "{text}"
    );
    // A plain srun runs in the first component; --het-group=1 in the second, numbered on.
    assert_eq!(lines[2], format!("plain=0/1 on={n0}"), "{text}");
    assert_eq!(lines[3], format!("second=0/1 on={n1}"), "{text}");
    assert_eq!(
        &lines[4..],
        [
            "srun: error: Requested het-group offset exceeds highest hetjob index (2 > 1)",
            "rc=1",
            "done"
        ],
        "{text}"
    );
    // The history: every component and its part of each step, one step id for the job
    // (a step across the components is `N+0.0` and `N+1.0`, as in Slurm).
    let f = leader + 1;
    let want = format!(
        "{leader}+0|{leader}|COMPLETED\n{leader}+0.batch|{leader}.batch|COMPLETED\n\
         {leader}+0.0|{leader}.0|COMPLETED\n{leader}+0.1|{leader}.1|COMPLETED\n\
         {leader}+1|{f}|COMPLETED\n{leader}+1.0|{f}.0|COMPLETED\n{leader}+1.2|{f}.2|COMPLETED\n"
    );
    c.wait_for("the job's history", || {
        history(&c, &leader.to_string()) == want
    });
}

#[test]
fn salloc_with_colons_gives_its_command_every_component() {
    let c = Cluster::start(2);
    let out = c.cmd(
        "salloc",
        &[
            "-n1",
            ":",
            "-n1",
            "sh",
            "-c",
            "echo size=$SLURM_HET_SIZE g0=$SLURM_JOB_ID_HET_GROUP_0 \
             g1=$SLURM_JOB_ID_HET_GROUP_1 n1=$SLURM_NODELIST_HET_GROUP_1; \
             srun --het-group=0,1 -l sh -c 'echo $SLURM_JOB_ID $SLURM_NTASKS' | sort",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let leader: u32 = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("salloc: Granted job allocation "))
        .expect("granted")
        .parse()
        .unwrap();
    let parts = components(&c, leader);
    let n1 = c.ok(
        "squeue",
        &[
            "-h",
            "-t",
            "all",
            "-j",
            &(leader + 1).to_string(),
            "-o",
            "%N",
        ],
    );
    assert_eq!(
        out.stdout,
        format!(
            "size=2 g0={leader} g1={} n1={}\n0: {leader} 2\n1: {leader} 2\n",
            leader + 1,
            n1.trim()
        ),
        "{parts:?}"
    );
    // The allocation ends whole with salloc's command.
    wait_all(&c, leader, "COMPLETED");
}

#[test]
fn srun_with_colons_makes_its_own_heterogeneous_job_or_a_step_across_one() {
    let c = Cluster::start(2);
    let out = c.cmd(
        "srun",
        &[
            "-l",
            "-n1",
            ":",
            "-n1",
            "sh",
            "-c",
            "echo job=$SLURM_JOB_ID of=$SLURM_NTASKS size=$SLURM_HET_SIZE on=$SLURMD_NODENAME",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines.len(), 2, "{out:?}");
    let leader: u32 = lines[0]
        .split_whitespace()
        .find_map(|w| w.strip_prefix("job="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        lines[0].starts_with(&format!("0: job={leader} of=2 size=2 on=")),
        "{out:?}"
    );
    assert!(
        lines[1].starts_with(&format!("1: job={leader} of=2 size=2 on=")),
        "{out:?}"
    );
    assert_ne!(
        lines[0].rsplit('=').next(),
        lines[1].rsplit('=').next(),
        "a node per component"
    );
    // srun's job ends whole with its step.
    wait_all(&c, leader, "COMPLETED");

    // Inside a heterogeneous allocation: a step across its components, each part with its
    // own options.
    let script = "#!/bin/sh\n#SBATCH -o across-%j.out -n1\n#SBATCH hetjob\n#SBATCH -n1\n\
                  srun -n1 : -n1 sh -c 'echo rank=$SLURM_PROCID of=$SLURM_NTASKS' | sort\n\
                  echo done\n";
    std::fs::write(c.work.join("across.sh"), script).unwrap();
    let job = c.sbatch(&["across.sh"]);
    wait_all(&c, job, "COMPLETED");
    let text = c.wait_file(&format!("across-{job}.out"), "done");
    assert_eq!(text, "rank=0 of=2\nrank=1 of=2\ndone\n");
}

#[test]
fn scancel_ends_every_component_and_a_pending_one_only_with_its_job() {
    let c = Cluster::start(2);
    let held = c.sbatch(&["-H", "-n1", ":", "-n1", "--wrap", "true"]);
    let out = c.cmd("scancel", &[&format!("{held}+1")]);
    assert_eq!(
        out.stderr,
        format!(
            "scancel: error: Kill job error on job id {held}+1: Operation not permitted on \
             individual component of heterogeneous job\n"
        ),
        "{out:?}"
    );
    c.ok("scancel", &[&held.to_string()]);
    wait_all(&c, held, "CANCELLED");

    let running = c.sbatch(&["-n1", ":", "-n1", "--wrap", "sleep 300"]);
    wait_all(&c, running, "RUNNING");
    // A running component may be cancelled by itself, as in Slurm; the leader goes on.
    c.ok("scancel", &[&format!("{running}+1")]);
    c.wait_for("the second component to be cancelled", || {
        components(&c, running)
            .iter()
            .map(|p| p.2.as_str())
            .eq(["RUNNING", "CANCELLED"])
    });
    c.ok("scancel", &[&running.to_string()]);
    wait_all(&c, running, "CANCELLED");
}

#[test]
fn what_slurm_refuses_is_refused_with_its_words() {
    let c = Cluster::start(2);
    let out = c.cmd(
        "sbatch",
        &["--array=1-2", "-n1", ":", "-n1", "--wrap", "true"],
    );
    assert_eq!(
        out.stderr,
        "sbatch: error: Batch job submission failed: Invalid job array specification\n"
    );
    // Slurm's controller names the partition first (its `err_msg`).
    let out = c.cmd("sbatch", &["-n1", ":", "-p", "nope", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: invalid partition specified: nope\n\
         sbatch: error: Batch job submission failed: Invalid partition name specified\n"
    );
    // Nothing was queued.
    assert_eq!(c.ok("squeue", &["-h", "-t", "all"]), "");
}

fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn hetjob_directives_split_a_users_script_into_components() {
    use std::os::unix::fs::PermissionsExt;
    let user = TestUser::create("hj");
    let c = Cluster::start(2);
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let script = "#!/bin/sh\n\
                  #SBATCH -J dirs -o dirs-%j.out\n\
                  #SBATCH -n1\n\
                  #SBATCH hetjob\n\
                  #SBATCH -n1 -t 7\n\
                  echo size=$SLURM_HET_SIZE g1=$SLURM_JOB_ID_HET_GROUP_1 user=$(id -u)\n";
    std::fs::write(c.work.join("dirs.sh"), script).unwrap();
    let out = as_user(&c, &user, "sbatch", &["--parsable", "dirs.sh"]);
    assert_eq!(out.code, 0, "{out:?}");
    let leader: u32 = out.stdout.trim().parse().unwrap();
    wait_all(&c, leader, "COMPLETED");
    let text = c.wait_file(&format!("dirs-{leader}.out"), "size=");
    assert_eq!(
        text,
        format!("size=2 g1={} user={}\n", leader + 1, user.uid)
    );
    let limits = c.ok(
        "squeue",
        &[
            "-h",
            "-t",
            "all",
            "-j",
            &leader.to_string(),
            "-o",
            "%i %l %u",
        ],
    );
    assert_eq!(
        limits,
        format!(
            "{leader}+0 UNLIMITED {u}\n{leader}+1 7:00 {u}\n",
            u = user.name
        )
    );
}

/// `sacct -j SEL -P -n -o JobID,JobIDRaw,State`.
fn history(c: &Cluster, sel: &str) -> String {
    c.ok(
        "sacct",
        &["-j", sel, "-P", "-n", "-o", "JobID,JobIDRaw,State"],
    )
}

/// `sbatch --test-only`'s line split into (job id, start, the rest after the start).
fn will_run_line(out: &common::CmdOutput) -> (String, String, String) {
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert_eq!(out.stderr.lines().count(), 1, "one line: {out:?}");
    let line = out.stderr.trim_end();
    let rest = line
        .strip_prefix("sbatch: Job ")
        .or_else(|| line.strip_prefix("srun: Job "))
        .expect(line);
    let (id, rest) = rest.split_once(" to start at ").expect(line);
    let (when, rest) = rest.split_once(' ').expect(line);
    (id.to_string(), when.to_string(), rest.to_string())
}

/// The processors of a single job's `--test-only` line.
fn processors(rest: &str) -> u32 {
    rest.strip_prefix("using ")
        .and_then(|r| r.split_once(' '))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("{rest}"))
}

#[test]
fn test_only_of_components_prints_one_line_and_queues_nothing() {
    let c = Cluster::start(2);
    // Each component is tested on its own: its processors as a job of its own would get.
    let one = c.cmd("sbatch", &["--test-only", "-n1", "--wrap", "true"]);
    let two = c.cmd("sbatch", &["--test-only", "-N2", "--wrap", "true"]);
    let (one, two) = (will_run_line(&one).2, will_run_line(&two).2);
    let sum = processors(&one) + processors(&two);
    let out = c.cmd(
        "sbatch",
        &["--test-only", "-n1", ":", "-N2", "--wrap", "true"],
    );
    let (id, when, rest) = will_run_line(&out);
    assert!(id.parse::<u32>().is_ok(), "{out:?}");
    assert_eq!(when.len(), "2026-11-27T01:00:00".len(), "{out:?}");
    // No partition: the components' processors summed on all their nodes.
    assert_eq!(rest, format!("using {sum} processors on clustern[1-2]"));
    // `#SBATCH hetjob` components are tested the same way.
    let script = "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -N2\ntrue\n";
    std::fs::write(c.work.join("will.sh"), script).unwrap();
    let out = c.cmd("sbatch", &["--test-only", "will.sh"]);
    assert_eq!(will_run_line(&out).2, rest);
    // srun tests each of its components on its own, one line each (Slurm's srun asks once
    // per component).
    let out = c.cmd("srun", &["--test-only", "-n1", "true", ":", "-N2", "true"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "one line per component: {out:?}");
    for (line, single) in lines.iter().zip([&one, &two]) {
        let rest = line.split_once(" to start at ").expect(line).1;
        assert_eq!(
            rest.split_once(' ').expect(line).1,
            single.as_str(),
            "{out:?}"
        );
    }
    // A component that can never run refuses the test, as its submission would be.
    let out = c.cmd(
        "sbatch",
        &["--test-only", "-n1", ":", "-p", "nope", "--wrap", "true"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: error: invalid partition specified: nope\n\
         allocation failure: Invalid partition name specified\n",
        "{out:?}"
    );
    // srun: the first component's line, then the refusal as Slurm's `slurm_perror` prints it.
    let out = c.cmd(
        "srun",
        &["--test-only", "-n1", "true", ":", "-p", "nope", "true"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines.len() == 3
            && lines[0].starts_with("srun: Job ")
            && lines[1] == "srun: error: invalid partition specified: nope"
            && lines[2] == "allocation failure: Invalid partition name specified",
        "{out:?}"
    );
    assert_eq!(c.ok("squeue", &["-h", "-t", "all"]), "", "nothing queued");
}

#[test]
fn srun_components_run_their_commands_with_their_own_output_options() {
    let c = Cluster::start(2);
    // Each component its command and its output file.
    let out = c.cmd(
        "srun",
        &[
            "-n1", "-o", "a.out", "sh", "-c", "echo one", ":", "-n1", "-o", "b.out", "sh", "-c",
            "echo two",
        ],
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert_eq!(c.read("a.out"), "one\n");
    assert_eq!(c.read("b.out"), "two\n");
    // A later component's -l labels its tasks alone, by their rank in the whole step.
    let out = c.cmd(
        "srun",
        &["-n1", "echo", "plain", ":", "-n1", "-l", "echo", "labelled"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["1: labelled", "plain"], "{out:?}");
}

#[test]
fn srun_components_each_run_their_own_multi_prog_file() {
    let c = Cluster::start(2);
    // Each file's ranks are its component's own, from 0; the labels are the step's ranks.
    std::fs::write(c.work.join("a.conf"), "0 echo a%t\n1 echo a%t\n").unwrap();
    std::fs::write(c.work.join("b.conf"), "* echo b%t\n").unwrap();
    // No -n: the first component runs as many tasks as its file names.
    let out = c.cmd(
        "srun",
        &[
            "-l",
            "--multi-prog",
            "a.conf",
            ":",
            "-n1",
            "--multi-prog",
            "b.conf",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0: a0", "1: a1", "2: b0"], "{out:?}");
    // A file that gives a component's task no program fails the step before anything runs.
    std::fs::write(c.work.join("one.conf"), "0 echo one\n").unwrap();
    let out = c.cmd(
        "srun",
        &["-n1", "echo", "x", ":", "-n2", "--multi-prog", "one.conf"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("Configuration file one.conf invalid: no program for "),
        "{out:?}"
    );
    assert_eq!(out.stdout, "", "{out:?}");
}
