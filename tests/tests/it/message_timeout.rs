//! `MessageTimeout` bounds every request a command makes: with the controller stopped
//! (SIGSTOP), squeue and sbatch give up after it with Slurm's socket timeout error and exit 1.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::common;
use common::cluster::Cluster;

/// Sends SIGCONT to the stopped process when dropped, so a failing test leaves no stopped
/// controller behind.
struct Stopped(Pid);

impl Stopped {
    fn new(pid: i32) -> Self {
        let pid = Pid::from_raw(pid);
        kill(pid, Signal::SIGSTOP).unwrap();
        Self(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

#[test]
fn commands_give_up_on_a_stopped_controller_after_message_timeout() {
    let c = Cluster::start_with(1, &["MessageTimeout=2"]);
    let stopped = Stopped::new(c.pid("ctld-cluster").expect("controller pid"));

    let out = c.cmd("squeue", &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "slurm_load_jobs error: Socket timed out on send/recv operation\n"
        ),
        "{out:?}"
    );
    let out = c.cmd("sbatch", &["--wrap", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n"
        ),
        "{out:?}"
    );

    // Resumed, the controller serves again. (Whether the submission whose client gave up was
    // dropped is not checked: nothing guarantees it yet.)
    drop(stopped);
    let job = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
}
