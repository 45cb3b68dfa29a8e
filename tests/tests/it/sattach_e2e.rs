//! `sattach JOBID.STEP` on a real local cluster: a second reader of a running step's output
//! (`-l`, `--output-filter`, `--error-filter`), its stdin to one task (`--input-filter`), the
//! step's layout (`--layout`), and only for the step's owner.

use crate::common;

use std::io::Write;
use std::process::Stdio;

use common::cluster::Cluster;
use common::lines::Lines;

/// Waits until `sattach --layout job.0` succeeds (the step runs on its nodes); returns it.
fn layout(c: &Cluster, job: &str) -> String {
    let mut text = String::new();
    c.wait_for("the step to run", || {
        let out = c.cmd("sattach", &["--layout", &format!("{job}.0")]);
        text = out.stdout;
        out.code == 0
    });
    text
}

/// `sattach --layout` of `srun -N2 -n3` (block: two tasks on the first node, one on the second).
const THREE_TASKS_ON_TWO_NODES: &str = "Job step layout:\n\t3 tasks, 2 nodes (clustern[1-2])\n\n\
     \tNode 0 (clustern1), 2 task(s): 0 1 \n\tNode 1 (clustern2), 1 task(s): 2 \n";

/// The job id srun's step runs in, once squeue shows it running.
fn running_job(c: &Cluster) -> String {
    let mut id = String::new();
    c.wait_for("srun's job to run", || {
        id = c
            .ok("squeue", &["-h", "-t", "R", "-o", "%i"])
            .trim()
            .to_string();
        !id.is_empty()
    });
    id
}

#[test]
fn sattach_shows_a_running_steps_output_and_layout() {
    let c = Cluster::start(2);
    // Each task says `tick` until the file `go` exists, then its last words on both streams.
    let task = "while [ ! -e go ]; do echo tick; sleep 0.2; done; \
                echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2";
    let srun = Lines::spawn(
        c.command("srun", &["-N2", "-n3", "sh", "-c", task])
            .stdin(Stdio::null()),
    );
    let job = running_job(&c);
    let text = layout(&c, &job);
    assert_eq!(text, THREE_TASKS_ON_TWO_NODES, "{text}");
    let step = format!("{job}.0");
    let mut all = Lines::spawn(c.command("sattach", &["-l", &step]).stdin(Stdio::null()));
    let mut filtered = Lines::spawn(
        c.command("sattach", &["--output-filter=2", "--error-filter=1", &step])
            .stdin(Stdio::null()),
    );
    // Both readers attached once each saw a tick (the filtered one shows task 2's).
    all.expect("0: tick", false);
    filtered.expect("tick", false);
    std::fs::write(c.work.join("go"), "").unwrap();
    let (out, err, code) = all.finish();
    let last: Vec<&String> = out.iter().filter(|l| !l.ends_with("tick")).collect();
    let mut sorted = last.clone();
    sorted.sort();
    assert_eq!(sorted, ["0: out 0", "1: out 1", "2: out 2"], "{out:?}");
    assert_eq!(code, 0, "{err}");
    let mut errs: Vec<&str> = err.lines().collect();
    errs.sort_unstable();
    assert_eq!(errs, ["0: err 0", "1: err 1", "2: err 2"]);
    let (out, err, code) = filtered.finish();
    let last: Vec<&String> = out.iter().filter(|l| *l != "tick").collect();
    assert_eq!(
        (last, err.as_str(), code),
        (vec![&"out 2".to_string()], "err 1", 0)
    );
    let (_, _, code) = srun.finish();
    assert_eq!(code, 0);
    let gone = c.cmd("sattach", &[&step]);
    assert_eq!(gone.code, 1);
    assert_eq!(
        gone.stderr,
        format!("sattach: error: Job {job} is not running\n")
    );
}

/// The layout comes from what srun told every node: a node whose tasks have all ended is
/// still listed (Slurm's sattach lists the whole step).
#[test]
fn the_layout_lists_the_nodes_whose_tasks_have_ended() {
    let c = Cluster::start(2);
    // Task 2, alone on the second node, ends at once; the others wait for `go`.
    let task = "[ $SLURM_PROCID = 2 ] && exit 0; while [ ! -e go ]; do sleep 0.1; done";
    let srun = Lines::spawn(
        c.command("srun", &["-N2", "-n3", "sh", "-c", task])
            .stdin(Stdio::null()),
    );
    let job = running_job(&c);
    let step = format!("{job}.0");
    // sstat counts the tasks of the nodes still running the step.
    c.wait_for("the second node's task to end", || {
        c.cmd("sstat", &["-n", "-P", "-o", "NTasks", "-j", &step])
            .stdout
            .trim()
            == "2"
    });
    let text = layout(&c, &job);
    assert_eq!(text, THREE_TASKS_ON_TWO_NODES, "{text}");
    std::fs::write(c.work.join("go"), "").unwrap();
    let (_, err, code) = srun.finish();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn sattach_input_goes_to_the_filtered_task() {
    let c = Cluster::start(1);
    let task = "echo ready; read line; echo \"$SLURM_PROCID:$line\"";
    let mut srun = Lines::spawn(
        c.command("srun", &["-n2", "-l", "sh", "-c", task])
            .stdin(Stdio::piped()),
    );
    srun.expect_each(&["0: ready", "1: ready"]);
    let job = running_job(&c);
    let step = format!("{job}.0");
    let mut sattach = Lines::spawn(
        c.command("sattach", &["--input-filter=1", "--output-filter=1", &step])
            .stdin(Stdio::piped()),
    );
    let mut input = sattach.child.stdin.take().unwrap();
    input.write_all(b"hello\n").unwrap();
    drop(input);
    sattach.expect("1:hello", false);
    // srun's stdin is still the tasks': its end is task 0's EOF, and the step's end sattach's.
    let mut stdin = srun.child.stdin.take().unwrap();
    stdin.write_all(b"bye\n").unwrap();
    drop(stdin);
    let (rest, err, code) = srun.finish();
    assert_eq!(rest, ["1: 1:hello", "0: 0:bye"], "{err}");
    assert_eq!(code, 0);
    let (rest, err, code) = sattach.finish();
    assert_eq!((rest.len(), err.as_str(), code), (0, "", 0), "{rest:?}");
}

#[test]
fn a_cyclic_steps_layout_and_input_follow_its_ranks() {
    let c = Cluster::start(2);
    // Ranks 0 and 2 on the first node, 1 and 3 on the second; only rank 3 reads. The others
    // wait for the test's mark, so the first node still runs the step when its layout is asked
    // (sattach learns each node's ranks from its node daemon while the step runs there).
    let mark = c.work.join("layout-seen");
    let task = format!(
        "if [ $SLURM_PROCID = 3 ]; then echo ready; read line; echo \"got:$line\"; \
         else echo ready; while [ ! -e {} ]; do sleep 0.1; done; fi",
        mark.display()
    );
    let mut srun = Lines::spawn(
        c.command(
            "srun",
            &["-N2", "-n4", "-m", "cyclic", "-l", "sh", "-c", &task],
        )
        .stdin(Stdio::piped()),
    );
    srun.expect_each(&["0: ready", "1: ready", "2: ready", "3: ready"]);
    let job = running_job(&c);
    let text = layout(&c, &job);
    assert_eq!(
        text,
        "Job step layout:\n\t4 tasks, 2 nodes (clustern[1-2])\n\n\
         \tNode 0 (clustern1), 2 task(s): 0 2 \n\tNode 1 (clustern2), 2 task(s): 1 3 \n",
        "{text}"
    );
    std::fs::write(&mark, "").unwrap();
    let step = format!("{job}.0");
    let mut sattach = Lines::spawn(
        c.command("sattach", &["--input-filter=3", "--output-filter=3", &step])
            .stdin(Stdio::piped()),
    );
    let mut input = sattach.child.stdin.take().unwrap();
    input.write_all(b"hello\n").unwrap();
    drop(input);
    sattach.expect("got:hello", false);
    drop(srun.child.stdin.take());
    let (rest, err, code) = srun.finish();
    assert_eq!((rest, code), (vec!["3: got:hello".to_string()], 0), "{err}");
}

#[cfg_attr(not(test_as_root), ignore = "needs root to switch users")]
#[test]
fn only_the_owner_attaches() {
    use common::users::TestUser;
    use std::os::unix::fs::PermissionsExt;
    let other = TestUser::create("sat");
    let c = Cluster::start(1);
    // The other user reaches the site and runs in the work directory, as on a shared host.
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let mut srun = Lines::spawn(
        c.command("srun", &["sh", "-c", "echo ready; exec sleep 300"])
            .stdin(Stdio::null()),
    );
    srun.expect("ready", false);
    let job = running_job(&c);
    let mut cmd = c.command("sattach", &[&format!("{job}.0")]);
    let out = common::run(other.apply(&mut cmd), None);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!("sattach: error: Unable to attach to StepId={job}.0: Access/permission denied\n")
    );
    c.ok("scancel", &[&job]);
    let _ = srun.finish();
}
