//! A local federation for end-to-end tests: one accounting daemon and N clusters
//! (`cluster1..clusterN`, one node daemon each unless told otherwise) in federation `fed1`,
//! started with the real `sluice up --detach --clusters N --federation fed1`, driven through the
//! real command binaries with each cluster's `SLURM_CONF`. Every cluster's commands run in
//! one shared work directory, so batch output lands in one place whichever cluster ran a job.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use sluice_tool::up::{UpArgs, plan};

use super::cluster::{STATE_TIMEOUT, TEST_CONF, bin_dir, kill_jobs_of};
use super::ports::Reserved;
use super::{CmdOutput, bin, run};

/// The federation's name.
pub const FED: &str = "fed1";
/// Pause between polls.
const POLL: Duration = Duration::from_millis(100);

/// A running federation in a temp dir; stopped (and its jobs' processes killed) on drop.
pub struct Federation {
    dir: tempfile::TempDir,
    /// The clusters' names, in order (`cluster1`, …).
    pub names: Vec<String>,
    /// Where every command runs (and so where batch output lands by default).
    pub work: PathBuf,
    _ports: Reserved,
}

impl Federation {
    /// `n` clusters of one node each, in federation [`FED`].
    pub fn start(n: usize) -> Federation {
        Self::start_with(n, 1, &[])
    }

    /// `n` clusters of `nodes` nodes, `extra` lines appended to every `slurm.conf`.
    pub fn start_with(n: usize, nodes: u32, extra: &[&str]) -> Federation {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = UpArgs::new(dir.path().join("sluice"));
        args.nodes = Some(nodes);
        args.clusters = Some(n.to_string());
        args.federation = Some(FED.to_string());
        let lines: Vec<String> = TEST_CONF
            .iter()
            .chain(extra)
            .map(|l| l.to_string())
            .collect();
        let mut ports = Reserved::default();
        let plan = plan::prepare_with(&args, &lines, &mut |k| ports.take(k))
            .unwrap_or_else(|e| panic!("preparing the federation: {e}"));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work dir");
        let fed = Federation {
            dir,
            names: plan.clusters.iter().map(|c| c.name.clone()).collect(),
            work,
            _ports: ports,
        };
        fed.up();
        fed
    }

    /// The `sluice up` directory.
    pub fn dir(&self) -> PathBuf {
        self.dir.path().join("sluice")
    }

    /// Cluster `i`'s (0-based) `slurm.conf`.
    pub fn conf(&self, i: usize) -> PathBuf {
        self.dir().join(&self.names[i]).join("slurm.conf")
    }

    /// `sluice up --detach --federation fed1`: starts whatever is not running.
    pub fn up(&self) -> CmdOutput {
        let mut cmd = Command::new(bin("sluice"));
        cmd.args(["up", "--detach", "--federation", FED, "--dir"])
            .arg(self.dir());
        let out = run(&mut cmd, None);
        assert_eq!(out.code, 0, "sluice up failed: {out:?}\n{}", self.logs());
        out
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

    /// The federation as cluster `i`'s controller holds it (its `GetFederation` RPC; `scontrol
    /// show federation` asks the dbd instead).
    pub fn controller_view(&self, i: usize) -> sluice_wire::proto::FederationView {
        let conf = sluice_cli::slurm_conf::SlurmConf::read(&self.conf(i))
            .unwrap_or_else(|e| panic!("reading {}: {e}", self.conf(i).display()));
        let key = sluice_wire::auth::Key::load(&conf.key_path()).expect("load slurm.key");
        super::block_on(async {
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

    /// Polls until `check` holds (bounded by `timeout`); panics naming `what`.
    pub fn wait_within(&self, timeout: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while !check() {
            if Instant::now() >= deadline {
                panic!(
                    "timed out waiting for {what}\nsqueue:\n{}\n{}",
                    self.cmd(0, "squeue", &["--federation", "-t", "all"]).stdout,
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

    /// The pid of a daemon (`dbd`, `ctld-cluster1`, …), if it has a pid file.
    pub fn pid(&self, id: &str) -> Option<i32> {
        let path = self.dir().join("run").join(format!("{id}.pid"));
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// `kill -9` cluster `i`'s controller and waits until it is gone.
    pub fn kill9_ctld(&self, i: usize) {
        let id = format!("ctld-{}", self.names[i]);
        let pid = self.pid(&id).unwrap_or_else(|| panic!("no pid for {id}"));
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
        let pid = self.pid("dbd").expect("the dbd has a pid file");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
        self.wait_for("the dbd to stop", || {
            !sluice_tool::up::process::is_running(pid, "sluice-dbd")
        });
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
                std::env::temp_dir().join(format!("sluice-fed-failed-{}", std::process::id()));
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
