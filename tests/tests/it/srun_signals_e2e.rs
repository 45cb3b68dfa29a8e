//! srun and the terminal's signals, as Slurm 22.05's srun treats them: SIGUSR1, SIGUSR2 and
//! SIGALRM passed on to the tasks, Ctrl-Z ignored, Ctrl-C once for the tasks' status and twice
//! within a second to send them SIGINT, and srun's exit code as Slurm's (the tasks' highest,
//! `128 + signal` for a task a signal ended).

use crate::common;

use std::process::Stdio;

use common::cluster::Cluster;
use common::lines::Lines;
use nix::sys::signal::Signal;

#[test]
fn srun_passes_usr1_on_and_ignores_ctrl_z() {
    let c = Cluster::start(1);
    let task = "trap 'echo got usr1; exit 3' USR1; echo ready; while :; do sleep 0.1; done";
    let mut srun = Lines::spawn(c.command("srun", &["sh", "-c", task]).stdin(Stdio::null()));
    srun.expect("ready", false);
    // Ctrl-Z's SIGTSTP stops neither srun nor its task: the USR1 after it still gets through.
    srun.signal(Signal::SIGTSTP);
    srun.signal(Signal::SIGUSR1);
    let (rest, stderr, code) = srun.finish();
    assert_eq!(rest, ["got usr1"], "{stderr}");
    assert_eq!(code, 3, "the task's exit code: {stderr}");
    assert!(
        stderr.contains("task 0: Exited with exit code 3"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_twice_within_a_second_interrupts_the_tasks() {
    let c = Cluster::start(1);
    let args = ["-n2", "sh", "-c", "echo ready; exec sleep 300"];
    let mut srun = Lines::spawn(c.command("srun", &args).stdin(Stdio::null()));
    srun.expect("ready", false);
    srun.expect("ready", false);
    srun.signal(Signal::SIGINT);
    // Two signals sent at once may arrive as one: the second goes once the first was seen.
    srun.expect("srun: interrupt (one more within 1 sec to abort)", true);
    srun.expect("tasks 0-1: running", true);
    srun.signal(Signal::SIGINT);
    srun.expect("srun: sending Ctrl-C to StepId=", true);
    let (_, stderr, code) = srun.finish();
    assert_eq!(code, 130, "128 + SIGINT, as Slurm's srun: {stderr}");
}

#[cfg_attr(not(test_as_root), ignore = "needs root to switch users")]
#[test]
fn a_users_srun_reaches_its_own_tasks_with_signals() {
    use common::users::TestUser;
    use std::os::unix::fs::PermissionsExt;
    let user = TestUser::create("sig");
    let c = Cluster::start(1);
    // The user reaches the site and runs in the work directory, as on a shared host.
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let task = "trap 'echo got usr1; exit 3' USR1; echo ready; while :; do sleep 0.1; done";
    let mut cmd = c.command("srun", &["sh", "-c", task]);
    let mut srun = Lines::spawn(user.apply(&mut cmd).stdin(Stdio::null()));
    srun.expect("ready", false);
    // The node daemon takes the signal from the step's owner, not only from root.
    srun.signal(Signal::SIGUSR1);
    let (rest, stderr, code) = srun.finish();
    assert_eq!(
        (rest.as_slice(), code),
        (&["got usr1".to_string()][..], 3),
        "{stderr}"
    );
}
