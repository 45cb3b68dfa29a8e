//! A single local cluster for end-to-end tests: a [`Federation`] site of one cluster named
//! `cluster`, outside any federation, whose per-cluster calls need no cluster index.

use std::ops::Deref;
use std::path::PathBuf;
use std::process::Command;

use sluice_tool::up::{UpArgs, plan};

use super::federation::Federation;
pub use super::federation::STATE_TIMEOUT;
use crate::cmd::CmdOutput;

/// A running local cluster in a temp dir; stopped (and its jobs' processes killed) on drop.
/// Every site-wide call ([`Federation::wait_for`], `logs`, `stop_dbd`, `work`, …) is reached
/// through `Deref`.
pub struct Cluster(Federation);

impl Deref for Cluster {
    type Target = Federation;

    fn deref(&self) -> &Federation {
        &self.0
    }
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
        let site = Federation::start_site(None, extra, options);
        assert_eq!(site.names, [plan::DEFAULT_CLUSTER], "one cluster");
        Cluster(site)
    }

    /// The cluster's `slurm.conf`.
    pub fn conf(&self) -> PathBuf {
        self.0.conf(0)
    }

    /// The command `program args…` with `SLURM_CONF` set, run in the work directory.
    pub fn command(&self, program: &str, args: &[&str]) -> Command {
        self.0.command(0, program, args)
    }

    /// Runs `program args…` (stdin closed).
    pub fn cmd(&self, program: &str, args: &[&str]) -> CmdOutput {
        self.0.cmd(0, program, args)
    }

    /// Runs `program args…` with `stdin`.
    pub fn cmd_stdin(&self, program: &str, args: &[&str], stdin: &str) -> CmdOutput {
        self.0.cmd_stdin(0, program, args, stdin)
    }

    /// Runs `script` with `/bin/sh` as the commands run (the cluster's configuration, the work
    /// directory, the binaries first on `PATH`).
    pub fn shell(&self, script: &str) -> CmdOutput {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script])
            .current_dir(&self.work)
            .env("SLURM_CONF", self.conf())
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", super::federation::bin_dir().display()),
            );
        crate::cmd::run(&mut cmd, None)
    }

    /// Runs a command that must succeed; returns its stdout.
    pub fn ok(&self, program: &str, args: &[&str]) -> String {
        self.0.ok(0, program, args)
    }

    /// `sbatch --parsable args…`: the new job's id.
    pub fn sbatch(&self, args: &[&str]) -> u32 {
        self.0.sbatch(0, args)
    }

    /// A job's long state as squeue shows it (see [`Federation::state`]).
    pub fn state(&self, job: &str) -> String {
        self.0.state(0, job)
    }

    /// Waits until `job` is in `state` (e.g. `RUNNING`, `COMPLETED`).
    pub fn wait_state(&self, job: impl ToString, state: &str) {
        self.0.wait_state(0, job, state)
    }

    /// Waits until `job` has finished; returns its final state.
    pub fn wait_done(&self, job: impl ToString) -> String {
        self.0.wait_done(0, job)
    }

    /// `kill -9` the controller and waits until it is gone.
    pub fn kill9_ctld(&self) {
        self.0.kill9_ctld(0)
    }

    /// `kill -9` the node daemon of `node` and waits until it is gone.
    pub fn kill9_noded(&self, node: &str) {
        self.0.kill9_noded(0, node)
    }
}
