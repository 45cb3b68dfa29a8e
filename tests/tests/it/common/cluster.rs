//! A whole local cluster for end-to-end tests: the accounting daemon, a controller and node
//! daemons, started the way a user starts them (`sluice up --detach` on a directory whose
//! configuration the harness first writes with short timers), driven through the real command
//! binaries with `SLURM_CONF` set.
//!
//! Waiting is always bounded polling of the commands (never a fixed sleep as synchronisation).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sluice_tool::up::{UpArgs, plan};

use super::ports::Reserved;
use super::{CmdOutput, bin, run};

/// How long a job may take to reach an expected state (daemons on a loaded 2-core CI host).
pub const STATE_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between polls.
const POLL: Duration = Duration::from_millis(100);

/// Lines every test cluster's `slurm.conf` gets: a short KillWait, so kills end quickly.
pub const TEST_CONF: &[&str] = &["KillWait=1"];

/// A running local cluster in a temp dir; stopped (and its jobs' processes killed) on drop.
pub struct Cluster {
    dir: tempfile::TempDir,
    name: String,
    /// Where commands run (and so where batch output lands by default).
    pub work: PathBuf,
    // Released (field order) after `drop` has stopped the daemons.
    _ports: Reserved,
}

impl Cluster {
    /// One cluster named `cluster` with `nodes` node daemons and the test timers.
    pub fn start(nodes: u32) -> Cluster {
        Self::start_with(nodes, &[])
    }

    /// Like [`Cluster::start`], with `extra` lines appended to its `slurm.conf`.
    pub fn start_with(nodes: u32, extra: &[&str]) -> Cluster {
        Self::start_args(extra, |args| args.nodes = Some(nodes))
    }

    /// Like [`Cluster::start_with`], `options` setting the `sluice up` options (e.g.
    /// `--cloud-nodes`) of the first start.
    pub fn start_args(extra: &[&str], options: impl FnOnce(&mut UpArgs)) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = UpArgs::new(dir.path().join("sluice"));
        options(&mut args);
        let lines: Vec<String> = TEST_CONF
            .iter()
            .chain(extra)
            .map(|l| l.to_string())
            .collect();
        let mut ports = Reserved::default();
        plan::prepare_with(&args, &lines, &mut |n| ports.take(n))
            .unwrap_or_else(|e| panic!("preparing the cluster: {e}"));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work dir");
        let cluster = Cluster {
            dir,
            name: plan::DEFAULT_CLUSTER.to_string(),
            work,
            _ports: ports,
        };
        cluster.up();
        cluster
    }

    /// The `sluice up` directory.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().join("sluice")
    }

    /// The cluster's `slurm.conf`.
    pub fn conf(&self) -> PathBuf {
        self.dir().join(&self.name).join("slurm.conf")
    }

    /// `sluice up --detach` on the directory: starts whatever is not running and waits until
    /// every node has registered.
    pub fn up(&self) -> CmdOutput {
        let out = self.sluice(&["up", "--detach"]);
        assert_eq!(out.code, 0, "sluice up failed: {out:?}\n{}", self.logs());
        out
    }

    /// Runs `sluice <args> --dir DIR`.
    pub fn sluice(&self, args: &[&str]) -> CmdOutput {
        let mut cmd = Command::new(bin("sluice"));
        cmd.args(args).arg("--dir").arg(self.dir());
        run(&mut cmd, None)
    }

    /// The command `program args…` with `SLURM_CONF` set, run in the work directory.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin(program));
        cmd.args(args)
            .current_dir(&self.work)
            .env("SLURM_CONF", self.conf())
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir().display()));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") && name != "SLURM_CONF" {
                cmd.env_remove(name);
            }
        }
        cmd
    }

    /// Runs `program args…` (stdin closed).
    pub fn cmd(&self, program: &str, args: &[&str]) -> CmdOutput {
        run(&mut self.command(program, args), None)
    }

    /// Runs `program args…` with `stdin`.
    pub fn cmd_stdin(&self, program: &str, args: &[&str], stdin: &str) -> CmdOutput {
        run(&mut self.command(program, args), Some(stdin))
    }

    /// Runs a command that must succeed; returns its stdout.
    pub fn ok(&self, program: &str, args: &[&str]) -> String {
        let out = self.cmd(program, args);
        assert_eq!(out.code, 0, "{program} {args:?} failed: {out:?}");
        out.stdout
    }

    /// `sbatch --parsable args…`: the new job's id.
    pub fn sbatch(&self, args: &[&str]) -> u32 {
        let mut all = vec!["--parsable"];
        all.extend_from_slice(args);
        let out = self.ok("sbatch", &all);
        out.trim()
            .split(';')
            .next()
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("sbatch --parsable printed {out:?}"))
    }

    /// A job's (or array task's, `"12_3"`) long state as squeue shows it (`%T`), including
    /// finished jobs; empty when the controller does not know it.
    pub fn state(&self, job: &str) -> String {
        let out = self.cmd("squeue", &["-h", "-t", "all", "-j", job, "-o", "%T"]);
        out.stdout.trim().to_string()
    }

    /// Polls until `check` holds (bounded by [`STATE_TIMEOUT`]); panics naming `what`.
    pub fn wait_for(&self, what: &str, check: impl FnMut() -> bool) {
        self.wait_within(STATE_TIMEOUT, what, check);
    }

    /// Polls until `check` holds, for at most `timeout`; panics naming `what`.
    pub fn wait_within(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !check() {
            if Instant::now() >= deadline {
                panic!(
                    "timed out waiting for {what}\nsqueue:\n{}\n{}",
                    self.cmd("squeue", &["-t", "all"]).stdout,
                    self.logs()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits until `job` is in `state` (e.g. `RUNNING`, `COMPLETED`).
    pub fn wait_state(&self, job: impl ToString, state: &str) {
        let job = job.to_string();
        self.wait_for(&format!("job {job} to be {state}"), || {
            self.state(&job) == state
        });
    }

    /// Waits until `job` has finished (any state that is neither pending, running, suspended
    /// nor completing); returns that state.
    pub fn wait_done(&self, job: impl ToString) -> String {
        let job = job.to_string();
        let mut last = String::new();
        self.wait_for(&format!("job {job} to finish"), || {
            last = self.state(&job);
            !last.is_empty()
                && ![
                    "PENDING",
                    "RUNNING",
                    "SUSPENDED",
                    "COMPLETING",
                    "CONFIGURING",
                ]
                .contains(&last.as_str())
        });
        last
    }

    /// Waits until `path` (relative to the work directory) exists and holds `needle`.
    pub fn wait_file(&self, path: &str, needle: &str) -> String {
        let path = self.work.join(path);
        let mut text = String::new();
        self.wait_for(&format!("{} to hold {needle:?}", path.display()), || {
            text = std::fs::read_to_string(&path).unwrap_or_default();
            text.contains(needle)
        });
        text
    }

    /// The work directory's `file`, or an empty string.
    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.work.join(file)).unwrap_or_default()
    }

    /// The pid of a daemon (`dbd`, `ctld-cluster`, `noded-cluster-clustern1`).
    pub fn pid(&self, id: &str) -> i32 {
        let path = self.dir().join("run").join(format!("{id}.pid"));
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("no pid in {}", path.display()))
    }

    /// `kill -9` the controller and waits until it is gone.
    pub fn kill9_ctld(&self) {
        let id = format!("ctld-{}", self.name);
        let pid = self.pid(&id);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        self.wait_for("the controller to die", || {
            !sluice_tool::up::process::is_running(pid, "sluice-ctld")
        });
    }

    /// Stops the accounting daemon (SIGTERM) and waits until it is gone.
    pub fn stop_dbd(&self) {
        let pid = self.pid("dbd");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
        self.wait_for("the dbd to stop", || {
            !sluice_tool::up::process::is_running(pid, "sluice-dbd")
        });
    }

    /// The daemons' logs, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        let Ok(entries) = std::fs::read_dir(self.dir().join("log")) else {
            return text;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(30)..].join("\n");
            text.push_str(&format!("==> {} <==\n{tail}\n", path.display()));
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(bin("sluice"))
            .args(["down", "--dir"])
            .arg(self.dir())
            .stdout(std::process::Stdio::null())
            .status();
        kill_jobs_of(&self.conf());
    }
}

/// The directory holding the built binaries.
pub fn bin_dir() -> PathBuf {
    bin("sluice")
        .parent()
        .map(Path::to_path_buf)
        .expect("binaries live in a directory")
}

/// SIGKILLs every process whose environment names `conf` as `SLURM_CONF`: the job processes
/// a stopped cluster leaves running (node daemons leave jobs running across their restarts).
pub fn kill_jobs_of(conf: &Path) {
    let needle = format!("SLURM_CONF={}", conf.display());
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}
