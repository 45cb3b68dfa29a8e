//! The local site every end-to-end test runs on: one accounting daemon and one or more clusters
//! started the way a user starts them (`sluice up --detach` on a directory whose configuration
//! the harness first writes with short timers), driven through the real command binaries with
//! each cluster's `SLURM_CONF`. A [`Federation`] has N clusters (`cluster1..clusterN`) in
//! federation [`FED`]; a [`Cluster`](super::cluster::Cluster) is a site of one cluster outside
//! any federation. Every cluster's commands run in one shared work directory, so batch output
//! lands in one place whichever cluster ran a job.
//!
//! Waiting is always bounded polling of the commands (never a fixed sleep as synchronisation).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use sluice_tool::up::{UpArgs, plan};

use super::ports::Reserved;
use crate::cmd::{CmdOutput, bin, run};

/// The federation's name.
pub const FED: &str = "fed1";
/// How long a job may take to reach an expected state (daemons on a loaded 2-core CI host).
pub const STATE_TIMEOUT: Duration = Duration::from_secs(60);
/// Pause between polls.
const POLL: Duration = Duration::from_millis(100);
/// Lines every test cluster's `slurm.conf` gets: a short KillWait, so kills end quickly.
pub const TEST_CONF: &[&str] = &["KillWait=1"];

/// A running local site in a temp dir; stopped (and its jobs' processes killed) on drop.
pub struct Federation {
    dir: tempfile::TempDir,
    /// The clusters' names, in order (`cluster1`, …, or `cluster` alone).
    pub names: Vec<String>,
    /// The federation the clusters form, if any.
    federation: Option<&'static str>,
    /// Where every command runs (and so where batch output lands by default).
    pub work: PathBuf,
    // Released (field order) after `drop` has stopped the daemons.
    _ports: Reserved,
}

impl Federation {
    /// `n` clusters of one node each, in federation [`FED`].
    pub fn start(n: usize) -> Federation {
        Self::start_with(n, 1, &[])
    }

    /// `n` clusters of `nodes` nodes, `extra` lines appended to every `slurm.conf`.
    pub fn start_with(n: usize, nodes: u32, extra: &[&str]) -> Federation {
        Self::start_site(Some(FED), extra, |args| {
            args.nodes = Some(nodes);
            args.clusters = Some(n.to_string());
        })
    }

    /// Prepares and starts a site: `options` set the `sluice up` options of the first start,
    /// `extra` lines are appended to every `slurm.conf`, `federation` names the federation the
    /// clusters form.
    pub fn start_site(
        federation: Option<&'static str>,
        extra: &[&str],
        options: impl FnOnce(&mut UpArgs),
    ) -> Federation {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = UpArgs::new(dir.path().join("sluice"));
        options(&mut args);
        args.federation = federation.map(str::to_string);
        let lines: Vec<String> = TEST_CONF
            .iter()
            .chain(extra)
            .map(|l| l.to_string())
            .collect();
        let mut ports = Reserved::default();
        let plan = plan::prepare_with(&args, &lines, &mut |k| ports.take(k))
            .unwrap_or_else(|e| panic!("preparing the site: {e}"));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work dir");
        let site = Federation {
            dir,
            names: plan.clusters.iter().map(|c| c.name.clone()).collect(),
            federation,
            work,
            _ports: ports,
        };
        site.up();
        site
    }

    /// The `sluice up` directory.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().join("sluice")
    }

    /// Cluster `i`'s (0-based) `slurm.conf`.
    pub fn conf(&self, i: usize) -> PathBuf {
        self.dir().join(&self.names[i]).join("slurm.conf")
    }

    /// `sluice up --detach [--federation fed1]`: starts whatever is not running and waits until
    /// every node has registered.
    pub fn up(&self) -> CmdOutput {
        let mut args = vec!["up", "--detach"];
        if let Some(fed) = self.federation {
            args.extend(["--federation", fed]);
        }
        let out = self.sluice(&args);
        assert_eq!(out.code, 0, "sluice up failed: {out:?}\n{}", self.logs());
        out
    }

    /// Runs `sluice <args> --dir DIR`.
    pub fn sluice(&self, args: &[&str]) -> CmdOutput {
        let mut cmd = Command::new(bin("sluice"));
        cmd.args(args).arg("--dir").arg(self.dir());
        run(&mut cmd, None)
    }

    /// The command `program args…` with cluster `i`'s `SLURM_CONF`, in the work directory.
    pub fn command(&self, i: usize, program: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin(program));
        cmd.args(args)
            .current_dir(&self.work)
            .env("SLURM_CONF", self.conf(i))
            .env("PATH", format!("{}:/usr/bin:/bin", bin_dir().display()));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") && name != "SLURM_CONF" {
                cmd.env_remove(name);
            }
        }
        cmd
    }

    /// Runs `program args…` on cluster `i` (stdin closed).
    pub fn cmd(&self, i: usize, program: &str, args: &[&str]) -> CmdOutput {
        run(&mut self.command(i, program, args), None)
    }

    /// Runs `program args…` on cluster `i` with `stdin`.
    pub fn cmd_stdin(&self, i: usize, program: &str, args: &[&str], stdin: &str) -> CmdOutput {
        run(&mut self.command(i, program, args), Some(stdin))
    }

    /// Runs a command on cluster `i` that must succeed; returns its stdout.
    pub fn ok(&self, i: usize, program: &str, args: &[&str]) -> String {
        let out = self.cmd(i, program, args);
        assert_eq!(out.code, 0, "{program} {args:?} on #{i} failed: {out:?}");
        out.stdout
    }

    /// `sbatch --parsable args…` on cluster `i`: the new job's id.
    pub fn sbatch(&self, i: usize, args: &[&str]) -> u32 {
        let mut all = vec!["--parsable"];
        all.extend_from_slice(args);
        let out = self.ok(i, "sbatch", &all);
        parse_job_id(&out).unwrap_or_else(|| panic!("sbatch --parsable printed {out:?}"))
    }

    /// `sacctmgr -i args…` (any cluster's configuration: one dbd); must succeed.
    pub fn sacctmgr(&self, args: &[&str]) -> String {
        let mut all = vec!["-i"];
        all.extend_from_slice(args);
        self.ok(0, "sacctmgr", &all)
    }

    /// A job's (or array task's, `"12_3"`) long state as cluster `i`'s squeue shows it (`%T`),
    /// including finished jobs; empty when the controller does not know it.
    pub fn state(&self, i: usize, job: &str) -> String {
        let out = self.cmd(i, "squeue", &["-h", "-t", "all", "-j", job, "-o", "%T"]);
        out.stdout.trim().to_string()
    }

    /// Waits until `job` is in `state` (e.g. `RUNNING`, `COMPLETED`) on cluster `i`.
    pub fn wait_state(&self, i: usize, job: impl ToString, state: &str) {
        let job = job.to_string();
        self.wait_for(&format!("job {job} to be {state}"), || {
            self.state(i, &job) == state
        });
    }

    /// Waits until `job` has finished on cluster `i` (any state that is neither pending,
    /// running, suspended nor completing); returns that state.
    pub fn wait_done(&self, i: usize, job: impl ToString) -> String {
        let job = job.to_string();
        let mut last = String::new();
        self.wait_for(&format!("job {job} to finish"), || {
            last = self.state(i, &job);
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

    /// The federation as cluster `i`'s controller holds it (its `GetFederation` RPC; `scontrol
    /// show federation` asks the dbd instead).
    pub fn controller_view(&self, i: usize) -> sluice_wire::proto::FederationView {
        let conf = sluice_cli::slurm_conf::SlurmConf::read(&self.conf(i))
            .unwrap_or_else(|e| panic!("reading {}: {e}", self.conf(i).display()));
        let key = sluice_wire::auth::Key::load(&conf.key_path()).expect("load slurm.key");
        crate::cmd::block_on(async {
            let signer = sluice_wire::auth::Signer::for_current_user(key);
            let channel = sluice_wire::client::connect(&conf.ctld_host, conf.ctld_port, signer)
                .await
                .unwrap_or_else(|e| panic!("connecting to {}'s controller: {e}", self.names[i]));
            sluice_wire::client::CtldFedClient::new(channel)
                .get_federation(sluice_wire::proto::GetFederationRequest {})
                .await
                .unwrap_or_else(|s| panic!("GetFederation of {}: {s}", self.names[i]))
                .into_inner()
        })
    }

    /// Polls until `check` holds (bounded by `timeout`); panics naming `what`, with the queue
    /// and the daemons' logs.
    pub fn wait_within(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !check() {
            if Instant::now() >= deadline {
                let queue = match self.federation {
                    Some(_) => self.cmd(0, "squeue", &["--federation", "-t", "all"]),
                    None => self.cmd(0, "squeue", &["-t", "all"]),
                };
                panic!(
                    "timed out waiting for {what}\nsqueue:\n{}\n{}",
                    queue.stdout,
                    self.logs()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Polls until `check` holds (bounded by [`STATE_TIMEOUT`]).
    pub fn wait_for(&self, what: &str, check: impl FnMut() -> bool) {
        self.wait_within(STATE_TIMEOUT, what, check);
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

    /// The pid of a daemon (`dbd`, `ctld-cluster1`, `noded-cluster-clustern1`, …), if it has a
    /// pid file.
    pub fn pid(&self, id: &str) -> Option<i32> {
        let path = self.dir().join("run").join(format!("{id}.pid"));
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Sends `signal` to daemon `id` (see [`Federation::pid`]), which must be running as
    /// `program`, and waits until it is gone.
    fn stop_daemon(&self, id: &str, program: &str, signal: nix::sys::signal::Signal) {
        let pid = self.pid(id).unwrap_or_else(|| panic!("no pid for {id}"));
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
        self.wait_for(&format!("{id} to stop"), || {
            !sluice_tool::up::process::is_running(pid, program)
        });
    }

    /// `kill -9` cluster `i`'s controller and waits until it is gone.
    pub fn kill9_ctld(&self, i: usize) {
        let id = format!("ctld-{}", self.names[i]);
        self.stop_daemon(&id, "sluice-ctld", nix::sys::signal::Signal::SIGKILL);
    }

    /// `kill -9` the node daemon of `node` in cluster `i` and waits until it is gone (its jobs'
    /// processes keep running).
    pub fn kill9_noded(&self, i: usize, node: &str) {
        let id = format!("noded-{}-{node}", self.names[i]);
        self.stop_daemon(&id, "sluice-noded", nix::sys::signal::Signal::SIGKILL);
    }

    /// Stops the accounting daemon (SIGTERM) and waits until it is gone.
    pub fn stop_dbd(&self) {
        self.stop_daemon("dbd", "sluice-dbd", nix::sys::signal::Signal::SIGTERM);
    }

    /// The daemons' logs (last lines of each), for failure messages.
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

/// The job id at the start of `sbatch --parsable` output (`N` or `N;cluster`).
pub fn parse_job_id(out: &str) -> Option<u32> {
    out.trim().split(';').next().and_then(|id| id.parse().ok())
}

impl Drop for Federation {
    fn drop(&mut self) {
        // A failed test keeps the daemons' full logs for a look afterwards.
        if std::thread::panicking() {
            let keep =
                std::env::temp_dir().join(format!("sluice-site-failed-{}", std::process::id()));
            if std::fs::create_dir_all(&keep).is_ok() {
                for entry in std::fs::read_dir(self.dir().join("log"))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    let _ = std::fs::copy(entry.path(), keep.join(entry.file_name()));
                }
                eprintln!("daemon logs kept in {}", keep.display());
            }
        }
        let _ = Command::new(bin("sluice"))
            .args(["down", "--dir"])
            .arg(self.dir())
            .stdout(std::process::Stdio::null())
            .status();
        for i in 0..self.names.len() {
            kill_jobs_of(&self.conf(i));
        }
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
