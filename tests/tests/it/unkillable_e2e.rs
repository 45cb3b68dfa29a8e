//! `UnkillableStepTimeout` for real: a job's process frozen in a cgroup v1 freezer survives
//! SIGKILL (it stays in the kernel until thawed), so cancelling the job leaves it behind; once
//! the timeout passed the node is drained with Slurm's reason `Kill task failed` and the job
//! ends CANCELLED. The test thaws the process (the pending SIGKILL ends it) and removes its
//! cgroup.

use crate::common;

use std::path::{Path, PathBuf};

use common::cluster::Cluster;

/// The freezer hierarchy (cgroup v1), mounted on this machine and in CI.
const FREEZER: &str = "/sys/fs/cgroup/freezer";

/// A freezer cgroup of the test's own; thawed and removed however the test ends.
struct Frozen(PathBuf);

impl Frozen {
    fn new(name: &str) -> Frozen {
        let dir = Path::new(FREEZER).join(name);
        std::fs::create_dir(&dir).unwrap();
        Frozen(dir)
    }

    fn add(&self, pid: i32) {
        std::fs::write(self.0.join("cgroup.procs"), pid.to_string()).unwrap();
    }

    fn set(&self, state: &str) {
        std::fs::write(self.0.join("freezer.state"), state).unwrap();
    }

    fn state(&self) -> String {
        std::fs::read_to_string(self.0.join("freezer.state"))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    fn tasks(&self) -> String {
        std::fs::read_to_string(self.0.join("cgroup.procs")).unwrap_or_default()
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("freezer.state"), "THAWED");
        // Its processes end (killed) once thawed; an empty cgroup can go.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

#[test]
#[cfg_attr(
    not(test_as_root),
    ignore = "needs root to freeze a process in a cgroup"
)]
fn a_process_surviving_sigkill_drains_the_node_kill_task_failed() {
    assert!(
        Path::new(FREEZER).join("cgroup.procs").exists(),
        "no cgroup v1 freezer at {FREEZER}"
    );
    let c = Cluster::start_with(1, &["UnkillableStepTimeout=2", "KillWait=1"]);
    let job = c.sbatch(&["--wrap", "echo $$ > pid; while true; do sleep 1; done"]);
    let pid: i32 = c.wait_file("pid", "\n").trim().parse().unwrap();
    let cgroup = Frozen::new(&format!("sluice-test-{}-{job}", std::process::id()));
    cgroup.add(pid);
    cgroup.set("FROZEN");
    c.wait_for("the script to be frozen", || cgroup.state() == "FROZEN");

    c.ok("scancel", &[&job.to_string()]);
    c.wait_for("the node drained with Kill task failed", || {
        c.ok("scontrol", &["show", "node", "clustern1"])
            .contains("Reason=Kill task failed")
    });
    assert_eq!(c.wait_done(job), "CANCELLED");
    assert!(
        cgroup.tasks().contains(&pid.to_string()),
        "the frozen script is still there"
    );
    let state = c.ok("sinfo", &["-h", "-o", "%t"]);
    assert!(state.trim().starts_with("drain"), "{state}");

    // Thawed, the pending SIGKILL ends it; its cgroup empties and is removed.
    cgroup.set("THAWED");
    c.wait_for("the thawed script to end", || {
        cgroup.tasks().trim().is_empty()
    });
    drop(cgroup);
}
