//! The automatic handling (the guide's `nonstop.sh`): find the job's failed (then failing)
//! nodes and do what `SMD_NONSTOP_FAILED` (`SMD_NONSTOP_FAILING`) says, printing the guide's
//! lines as it goes. The requests go through [`NonstopOps`] and the waiting and the node file
//! through [`Effects`], so the whole procedure runs in tests without a controller or a clock.
//!
//! Replacing waits as the guide does: after a failed round, if `TIME_LIMIT_DELAY` allows, the
//! time limit is extended by the delay (once), and every retry interval another round is tried
//! until the retries have covered the delay (`cnt * interval >= delay`).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use ::smd::{Allocation, Client, NodeState, SmdError};

use super::policy::Policy;

/// The requests the handling makes (the library's [`Client`], or a test's script).
pub trait NonstopOps {
    /// The job's allocation.
    fn job_nodes(&mut self, job: u32) -> Result<Allocation, SmdError>;
    /// Replaces `node` by a spare.
    fn replace_node(&mut self, job: u32, node: &str) -> Result<Allocation, SmdError>;
    /// Drops `node` from the allocation.
    fn drop_node(&mut self, job: u32, node: &str) -> Result<Allocation, SmdError>;
    /// Extends the time limit by `minutes`.
    fn extend_time(&mut self, job: u32, minutes: u32) -> Result<Allocation, SmdError>;
}

impl NonstopOps for Client {
    fn job_nodes(&mut self, job: u32) -> Result<Allocation, SmdError> {
        Client::job_nodes(self, job)
    }
    fn replace_node(&mut self, job: u32, node: &str) -> Result<Allocation, SmdError> {
        Client::replace_node(self, job, node)
    }
    fn drop_node(&mut self, job: u32, node: &str) -> Result<Allocation, SmdError> {
        Client::drop_node(self, job, node)
    }
    fn extend_time(&mut self, job: u32, minutes: u32) -> Result<Allocation, SmdError> {
        Client::extend_time(self, job, minutes)
    }
}

/// What the handling does to the world besides requests: waiting between rounds and writing
/// the new job environment.
pub trait Effects {
    /// Waits `d` before the next round.
    fn sleep(&mut self, d: Duration);
    /// Writes the node file of `job`; returns its path.
    fn write_node_file(&mut self, job: u32, text: &str) -> std::io::Result<PathBuf>;
}

/// The real effects: `std::thread::sleep` and `/tmp/smd_job_<id>_nodes.sh`.
#[derive(Debug, Default)]
pub struct SystemEffects;

impl Effects for SystemEffects {
    fn sleep(&mut self, d: Duration) {
        std::thread::sleep(d);
    }
    fn write_node_file(&mut self, job: u32, text: &str) -> std::io::Result<PathBuf> {
        let path = super::nodefile::path(job);
        super::nodefile::write(&path, text)?;
        Ok(path)
    }
}

/// Whether the job may go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No node is left failed (or only reported): run the next step.
    Continue,
    /// `EXIT_JOB`, or nodes the instructions could not fix: the job should exit.
    ExitJob,
}

/// One run of the handling for a job.
pub struct Handler<'a, O: NonstopOps, E: Effects> {
    /// The requests.
    pub ops: &'a mut O,
    /// Sleeping and the node file.
    pub effects: &'a mut E,
    /// Where the lines go (flushed after each).
    pub out: &'a mut dyn Write,
    /// The job.
    pub job: u32,
    /// Time between replacement rounds (the guide's 20 s).
    pub interval: Duration,
}

impl<O: NonstopOps, E: Effects> Handler<'_, O, E> {
    /// Handles failed nodes per `failed`, then failing nodes per `failing`. With neither, only
    /// reports both classes. Fails only when the job's nodes cannot be asked for.
    pub fn run(
        &mut self,
        failed: Option<&Policy>,
        failing: Option<&Policy>,
    ) -> Result<Outcome, SmdError> {
        let mut alloc = self.ops.job_nodes(self.job)?;
        let report_only = failed.is_none() && failing.is_none();
        let mut outcome = Outcome::Continue;
        for (state, policy) in [(NodeState::Failed, failed), (NodeState::Failing, failing)] {
            if policy.is_none() && !report_only {
                continue;
            }
            if self.class(state, policy, &mut alloc) == Outcome::ExitJob {
                outcome = Outcome::ExitJob;
            }
        }
        Ok(outcome)
    }

    fn line(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    fn class(
        &mut self,
        state: NodeState,
        policy: Option<&Policy>,
        alloc: &mut Allocation,
    ) -> Outcome {
        let job = self.job;
        let (verb, word, hosts) = match state {
            NodeState::Failing => ("is_failing", "FAILING", "failing_hosts"),
            _ => ("is_failed", "FAILED", "failed_hosts"),
        };
        self.line(&format!("{verb}: job {job} searching for {word} hosts"));
        let nodes: Vec<(String, u32)> = alloc
            .in_state(state)
            .iter()
            .map(|n| (n.name.clone(), n.cpus))
            .collect();
        if nodes.is_empty() {
            self.line(&format!("{verb}: job {job} has no {word} nodes"));
            return Outcome::Continue;
        }
        self.line(&format!(
            "{verb}: job {job} has {} {word} nodes",
            nodes.len()
        ));
        for (name, cpus) in &nodes {
            self.line(&format!(
                "{verb}: job {job} {word} node {name} cpu_count {cpus}"
            ));
        }
        let Some(policy) = policy else {
            return Outcome::Continue;
        };
        self.line(&format!("_handle_fault: job {job} handle {hosts}"));
        let mut remaining: Vec<String> = nodes.into_iter().map(|(n, _)| n).collect();
        let mut replaced = 0;
        if policy.replace {
            let before = remaining.len();
            self.try_replace(policy, &mut remaining, alloc);
            replaced = before - remaining.len();
            if !remaining.is_empty() {
                self.line(&format!(
                    "_try_replace: job {job} failed to replace down or failing nodes:"
                ));
                for n in remaining.clone() {
                    self.line(&format!("   {n}"));
                }
            }
        }
        let mut dropped = 0;
        if policy.drop && !remaining.is_empty() {
            let before = remaining.len();
            self.drop_nodes(&mut remaining, alloc);
            dropped = before - remaining.len();
        }
        let mut outcome = Outcome::Continue;
        if replaced + dropped > 0 && !self.node_file(alloc, remaining.len()) {
            outcome = Outcome::ExitJob;
        }
        if let Some(m) = policy.extend_minutes.filter(|_| replaced > 0) {
            self.extend(m.saturating_mul(replaced as u32), alloc);
        }
        if let Some(m) = policy.drop_minutes.filter(|_| dropped > 0) {
            self.extend(m.saturating_mul(dropped as u32), alloc);
        }
        let exit_alone = policy.exit_job && !policy.replace && !policy.drop;
        if !remaining.is_empty() || exit_alone {
            self.line(&format!(
                "_handle_fault: job {job} has {} {word} nodes left, the job should exit",
                remaining.len()
            ));
            outcome = Outcome::ExitJob;
        }
        outcome
    }

    fn try_replace(
        &mut self,
        policy: &Policy,
        remaining: &mut Vec<String>,
        alloc: &mut Allocation,
    ) {
        let job = self.job;
        let delay = Duration::from_secs(u64::from(policy.delay_minutes.unwrap_or(0)) * 60);
        let interval = self.interval.max(Duration::from_secs(1));
        let mut extended = false;
        let mut cnt: u32 = 0;
        loop {
            if cnt > 0 && interval * cnt >= delay {
                return;
            }
            self.line(&format!(
                "_try_replace: job {job} trying to replace {} nodes",
                remaining.len()
            ));
            while let Some(node) = remaining.first().cloned() {
                match self.ops.replace_node(job, &node) {
                    Ok(after) => {
                        let by = match super::show::new_node(alloc, &after) {
                            n if n.is_empty() => "?".to_string(),
                            n => n,
                        };
                        self.line(&format!(
                            "_try_replace: job {job} node {node} replaced by {by}"
                        ));
                        remaining.remove(0);
                        *alloc = after;
                    }
                    Err(e) => {
                        self.line(&format!(
                            "_try_replace: smd_replace_node() error job_id {job}: {e}"
                        ));
                        break;
                    }
                }
            }
            if remaining.is_empty() {
                return;
            }
            let Some(minutes) = policy.delay_minutes else {
                return;
            };
            if !extended {
                extended = true;
                self.extend(minutes, alloc);
            }
            self.line(&format!(
                "_try_replace: job {job} waited for {} sec cnt {cnt} trying every {} sec...",
                (interval * cnt).as_secs(),
                interval.as_secs()
            ));
            self.effects.sleep(interval);
            cnt += 1;
        }
    }

    fn drop_nodes(&mut self, remaining: &mut Vec<String>, alloc: &mut Allocation) {
        let job = self.job;
        let mut kept = Vec::new();
        for node in std::mem::take(remaining) {
            match self.ops.drop_node(job, &node) {
                Ok(after) => {
                    self.line(&format!(
                        "_drop_nodes: job {job} node {node} dropped all right"
                    ));
                    *alloc = after;
                }
                Err(e) => {
                    self.line(&format!(
                        "_drop_nodes: smd_drop_node() error job_id {job}: {e}"
                    ));
                    kept.push(node);
                }
            }
        }
        *remaining = kept;
    }

    /// Writes the node file; false if it could not be written.
    fn node_file(&mut self, alloc: &Allocation, left: usize) -> bool {
        let job = self.job;
        match left {
            0 => self.line(&format!(
                "_generate_node_file: job {job} all nodes replaced"
            )),
            n => self.line(&format!(
                "_generate_node_file: job {job} {n} nodes not replaced"
            )),
        }
        match self
            .effects
            .write_node_file(job, &super::nodefile::text(alloc))
        {
            Ok(path) => {
                self.line(&format!(
                    "source the {} hostfile to get the new job environment",
                    path.display()
                ));
                true
            }
            Err(e) => {
                self.line(&format!(
                    "_generate_node_file: job {job} cannot write the hostfile: {e}"
                ));
                false
            }
        }
    }

    fn extend(&mut self, minutes: u32, alloc: &mut Allocation) {
        let job = self.job;
        self.line(&format!(
            "_time_limit_extend: job {job} extending job time limit by {minutes} minutes"
        ));
        match self.ops.extend_time(job, minutes) {
            Ok(after) => {
                *alloc = after;
                self.line(&format!(
                    "_increase_job_runtime: job {job} run time limit extended by {minutes}min successfully"
                ));
            }
            Err(e) => self.line(&format!(
                "_increase_job_runtime: smd_extend_time() error job_id {job}: {e}"
            )),
        }
    }
}
