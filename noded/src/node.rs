//! The state one node daemon shares between its RPC handlers, its job waiters and its link to
//! the controller.

use std::time::{SystemTime, UNIX_EPOCH};

use nix::sys::signal::Signal;

use crate::acct::live::LiveTable;
use crate::attach::AttachTable;
use crate::config::NodedConfig;
use crate::env::NodeFacts;
use crate::error::NodedError;
use crate::jobs::{HeldRun, JobTable, Target};
use crate::node_scripts::JobsHere;
use crate::outbox::ExitOutbox;
use crate::spool::Spool;
use crate::stdin::StdinTable;
use crate::step_adopt::AdoptedSteps;
use crate::unkillable::Watching;

/// One node daemon's shared state.
#[derive(Debug)]
pub struct Node {
    /// Its configuration.
    pub config: NodedConfig,
    /// The port it really listens on (the configured one may be 0).
    pub port: u16,
    /// Its spool directory.
    pub spool: Spool,
    /// Jobs with processes here.
    pub jobs: JobTable,
    /// Exit reports not yet acknowledged by the controller.
    pub outbox: ExitOutbox,
    /// Steps' stdin pipes waiting for srun's stream.
    pub stdin: StdinTable,
    /// Jobs that ran here and whose epilog is still due.
    pub here: JobsHere,
    /// Tasks being sampled now, for `sstat`.
    pub live: LiveTable,
    /// Killed jobs whose processes are watched (`UnkillableStepTimeout`).
    pub kill_watch: Watching,
    /// srun steps adopted after a restart, until srun has their exits.
    pub steps: AdoptedSteps,
    /// Running steps' second readers (`sattach`).
    pub attach: AttachTable,
    /// Woken when the controller asks this node to register again now.
    pub register_now: tokio::sync::Notify,
}

impl Node {
    /// Opens the spool directory and loads the exit reports an earlier run left.
    pub fn open(config: NodedConfig, port: u16) -> Result<Self, NodedError> {
        let spool = Spool::open(&config.spool_dir)?;
        let outbox = ExitOutbox::open(&spool.exits_dir())?.synced(config.fsync());
        let here = JobsHere::open(spool.here_dir());
        Ok(Self {
            config,
            port,
            spool,
            jobs: JobTable::new(),
            outbox,
            stdin: StdinTable::default(),
            here,
            live: LiveTable::default(),
            kill_watch: Watching::default(),
            steps: AdoptedSteps::default(),
            attach: AttachTable::default(),
            register_now: tokio::sync::Notify::new(),
        })
    }

    /// This node's facts for job environments.
    pub fn facts(&self) -> NodeFacts<'_> {
        NodeFacts {
            node_name: &self.config.node_name,
            cluster: &self.config.cluster_name,
            conf_path: &self.config.conf_path,
        }
    }

    /// The jobs to report as running: those with processes here, and those whose end the
    /// controller has not acknowledged yet (their report follows), so the controller never
    /// takes a finished-but-unreported job for a lost one.
    pub fn reported_jobs(&self) -> Vec<u32> {
        let mut ids = self.jobs.running_jobs();
        ids.extend(self.outbox.pending_jobs());
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The runs to report as held, by job: those with processes here, those whose batch
    /// script's end the controller has not acknowledged yet (as [`Self::reported_jobs`]), and
    /// those whose epilog is still due here.
    pub fn reported_runs(&self) -> Vec<HeldRun> {
        let mut runs = self.jobs.runs();
        for (job, run) in self.outbox.pending_runs() {
            match runs.iter_mut().find(|r| r.job == job && r.run == run) {
                Some(held) => held.batch = true,
                None => runs.push(HeldRun {
                    job,
                    run,
                    batch: true,
                    steps: Vec::new(),
                }),
            }
        }
        // A job whose epilog is due here, its processes gone: the controller that no longer
        // holds it here says so, and the epilog runs.
        for (job, run) in self.here.runs() {
            if !runs.iter().any(|r| r.job == job) {
                runs.push(HeldRun {
                    job,
                    run,
                    batch: false,
                    steps: Vec::new(),
                });
            }
        }
        runs.sort_unstable_by_key(|r| (r.job, r.run));
        runs
    }

    /// Kills every process of `job` (`SIGKILL` to each of its process groups); `false` when
    /// it has none here.
    pub fn kill_job(&self, job: u32) -> bool {
        self.jobs.signal(job, Target::All, Some(Signal::SIGKILL))
    }
}

/// The current unix time in seconds.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
