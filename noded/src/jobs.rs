//! The jobs running on this node and their process groups: the batch script's group and one
//! group per step task. Signals go to whole groups (`killpg`), so children a script starts in
//! the background are reached too.
//!
//! The table is only touched for a few instructions at a time (no await while locked), so a
//! plain mutex serves every handler and waiter without an owner task.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use sluice_vocab::ids::is_no_alloc;

/// A part of a job that owns process groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The batch script.
    Batch,
    /// The tasks of step `n` on this node.
    Step(u32),
}

/// Which of a job's process groups a signal is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Every group of the job.
    All,
    /// The batch script's group only.
    Batch,
    /// The groups of one step.
    Step(u32),
}

#[derive(Debug, Default)]
struct JobProcs {
    restart: u32,
    parts: HashMap<Part, Vec<i32>>,
    suspended: bool,
    /// A terminating signal came for the whole job or its script (e.g. while its prolog ran,
    /// before any process existed): a script not started yet must not start.
    killed: bool,
}

/// One run of a job with processes here, as reported to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRun {
    /// The job.
    pub job: u32,
    /// The run (the job's requeue count at its launch).
    pub run: u32,
    /// Its batch script runs here.
    pub batch: bool,
    /// Its srun steps with tasks here.
    pub steps: Vec<u32>,
}

/// Every job with processes on this node.
#[derive(Debug, Default)]
pub struct JobTable {
    jobs: Mutex<HashMap<u32, JobProcs>>,
    ended: Mutex<EndedRuns>,
}

/// How many jobs' last ended batch run are remembered (a few hundred kB at most).
const ENDED_KEPT: usize = 65_536;

/// The batch runs that ended here, newest per job, the oldest forgotten first: a launch the
/// controller sends again for a run that already ran and ended here (its first answer was lost
/// while the controller was stopped, and it retried after the run's end was acknowledged)
/// must not start the script a second time.
#[derive(Debug, Default)]
struct EndedRuns {
    last: HashMap<u32, u32>,
    order: VecDeque<u32>,
}

impl EndedRuns {
    fn note(&mut self, job: u32, restart: u32) {
        match self.last.insert(job, restart) {
            Some(before) if before > restart => {
                self.last.insert(job, before);
            }
            Some(_) => {}
            None => {
                self.order.push_back(job);
                if self.order.len() > ENDED_KEPT
                    && let Some(old) = self.order.pop_front()
                {
                    self.last.remove(&old);
                }
            }
        }
    }

    fn ran(&self, job: u32, restart: u32) -> bool {
        self.last.get(&job).is_some_and(|&r| r >= restart)
    }
}

impl JobTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    fn ended(&self) -> std::sync::MutexGuard<'_, EndedRuns> {
        self.ended.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<u32, JobProcs>) -> R) -> R {
        let mut guard = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// Claims the batch part of `job`; `false` when that launch (same `restart` count) or a
    /// newer one already runs here, or ran and ended here, so a repeated launch starts no
    /// second copy.
    pub fn claim_batch(&self, job: u32, restart: u32) -> bool {
        if self.ended().ran(job, restart) {
            return false;
        }
        self.with(|jobs| {
            let procs = jobs.entry(job).or_default();
            if procs.parts.contains_key(&Part::Batch) && procs.restart >= restart {
                return false;
            }
            procs.restart = restart;
            procs.killed = false;
            procs.parts.insert(Part::Batch, Vec::new());
            true
        })
    }

    /// Notes that `job`'s processes here belong to run `run` (a step's credential names it):
    /// a job new here takes it, and a newer run replaces an older one.
    pub fn note_run(&self, job: u32, run: u32) {
        self.with(|jobs| {
            let procs = jobs.entry(job).or_default();
            if procs.parts.is_empty() || run > procs.restart {
                procs.restart = run;
            }
        });
    }

    /// The runs with processes here, sorted by job: each job's run, whether its batch script
    /// runs here, and its steps here (sorted). `srun -Z` steps belong to no job the
    /// controller knows: they are left out, or the controller would have them killed.
    pub fn runs(&self) -> Vec<HeldRun> {
        let mut runs: Vec<HeldRun> = self.with(|jobs| {
            jobs.iter()
                .filter(|(job, _)| !is_no_alloc(**job))
                .map(|(&job, procs)| {
                    let mut steps: Vec<u32> = procs
                        .parts
                        .keys()
                        .filter_map(|p| match p {
                            Part::Step(s) => Some(*s),
                            Part::Batch => None,
                        })
                        .collect();
                    steps.sort_unstable();
                    HeldRun {
                        job,
                        run: procs.restart,
                        batch: procs.parts.contains_key(&Part::Batch),
                        steps,
                    }
                })
                .collect()
        });
        runs.sort_unstable_by_key(|r| r.job);
        runs
    }

    /// Kills run `run` of `job` (`SIGKILL` to its process groups; with `steps`, only those
    /// steps'); `false` when the job has no processes here or they belong to another run.
    pub fn kill_run(&self, job: u32, run: u32, steps: &[u32]) -> bool {
        if self.with(|jobs| jobs.get(&job).map(|p| p.restart)) != Some(run) {
            return false;
        }
        if steps.is_empty() {
            return self.signal(job, Target::All, Some(Signal::SIGKILL));
        }
        let mut any = false;
        for &s in steps {
            any |= self.signal(job, Target::Step(s), Some(Signal::SIGKILL));
        }
        any
    }

    /// Records process group `pgid` as part of `job`. A suspend, or a kill of the batch script,
    /// that came while the group was starting (the job claimed, its pid not known yet) applies
    /// to it now, so no signal is lost to that window.
    pub fn add_group(&self, job: u32, part: Part, pgid: i32) {
        let (suspended, killed) = self.with(|jobs| {
            let procs = jobs.entry(job).or_default();
            procs.parts.entry(part).or_default().push(pgid);
            (procs.suspended, procs.killed && part == Part::Batch)
        });
        if killed {
            signal_group(pgid, Some(Signal::SIGTERM));
        }
        if suspended {
            signal_group(pgid, Some(Signal::SIGSTOP));
        }
    }

    /// Forgets a part of `job` (its processes ended); the job goes when nothing is left.
    pub fn remove_part(&self, job: u32, part: Part) {
        self.with(|jobs| {
            if let Some(procs) = jobs.get_mut(&job) {
                procs.parts.remove(&part);
                if procs.parts.is_empty() {
                    jobs.remove(&job);
                }
            }
        });
    }

    /// Forgets the batch part of `job` launched with `restart` (a newer launch is kept).
    pub fn finish_batch(&self, job: u32, restart: u32) {
        self.ended().note(job, restart);
        let current = self.with(|jobs| jobs.get(&job).map(|p| p.restart));
        if current == Some(restart) {
            self.remove_part(job, Part::Batch);
        }
    }

    /// Whether a terminating signal for the whole job or its script came since its batch part
    /// was claimed.
    pub fn killed(&self, job: u32) -> bool {
        self.with(|jobs| jobs.get(&job).is_some_and(|p| p.killed))
    }

    /// Whether `job`'s batch script was claimed here and has not ended.
    pub fn has_batch(&self, job: u32) -> bool {
        self.with(|jobs| {
            jobs.get(&job)
                .is_some_and(|p| p.parts.contains_key(&Part::Batch))
        })
    }

    /// Every process group of `job` here.
    pub fn groups(&self, job: u32) -> Vec<i32> {
        self.with(|jobs| {
            jobs.get(&job)
                .map(|p| p.parts.values().flatten().copied().collect())
                .unwrap_or_default()
        })
    }

    /// Whether `job` has processes here.
    pub fn contains(&self, job: u32) -> bool {
        self.with(|jobs| jobs.contains_key(&job))
    }

    /// The jobs with processes here, sorted (no `srun -Z` step's, as [`Self::runs`]).
    pub fn running_jobs(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.with(|jobs| {
            jobs.keys()
                .copied()
                .filter(|job| !is_no_alloc(*job))
                .collect()
        });
        ids.sort_unstable();
        ids
    }

    /// Sends `signal` to `target`'s process groups of `job` (`None`: the signal-0 probe);
    /// `false` when the job has no processes here. Groups already gone are skipped.
    pub fn signal(&self, job: u32, target: Target, signal: Option<Signal>) -> bool {
        let Some((groups, suspended)) = self.with(|jobs| {
            jobs.get_mut(&job).map(|procs| {
                match signal {
                    Some(Signal::SIGSTOP) => procs.suspended = true,
                    Some(Signal::SIGCONT) => procs.suspended = false,
                    Some(Signal::SIGTERM | Signal::SIGKILL | Signal::SIGINT)
                        if matches!(target, Target::All | Target::Batch) =>
                    {
                        procs.killed = true
                    }
                    _ => {}
                }
                let groups: Vec<i32> = procs
                    .parts
                    .iter()
                    .filter(|(part, _)| match target {
                        Target::All => true,
                        Target::Batch => **part == Part::Batch,
                        Target::Step(s) => **part == Part::Step(s),
                    })
                    .flat_map(|(_, g)| g.iter().copied())
                    .collect();
                (groups, procs.suspended)
            })
        }) else {
            return false;
        };
        for pgid in &groups {
            signal_group(*pgid, signal);
            // A stopped process only acts on a terminating signal once it runs again.
            if suspended && matches!(signal, Some(Signal::SIGTERM | Signal::SIGINT)) {
                signal_group(*pgid, Some(Signal::SIGCONT));
            }
        }
        true
    }
}

/// `killpg`, ignoring groups that no longer exist.
pub fn signal_group(pgid: i32, signal: Option<Signal>) {
    if pgid <= 1 {
        return;
    }
    match killpg(Pid::from_raw(pgid), signal) {
        Ok(()) | Err(Errno::ESRCH) => {}
        Err(e) => tracing::warn!(pgid, ?signal, "cannot signal process group: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_launch_is_claimed_once_per_restart() {
        let t = JobTable::new();
        assert!(t.claim_batch(7, 0));
        assert!(!t.claim_batch(7, 0), "a repeated launch starts nothing");
        assert!(t.claim_batch(7, 1), "a requeued launch replaces it");
        assert_eq!(t.running_jobs(), vec![7]);
        t.add_group(7, Part::Step(0), 123_456_789);
        t.finish_batch(7, 0);
        assert!(
            !t.claim_batch(7, 1),
            "the older launch's end leaves the newer"
        );
        t.finish_batch(7, 1);
        assert!(t.contains(7), "the step still runs");
        t.remove_part(7, Part::Step(0));
        assert!(!t.contains(7));
        assert!(t.running_jobs().is_empty());
        // The controller sends run 1's launch again after its end (its first answer was lost
        // while it was stopped): the script does not run twice; a later run may start.
        assert!(!t.claim_batch(7, 1), "an ended run is not started again");
        assert!(!t.claim_batch(7, 0), "nor an older one");
        assert!(t.claim_batch(7, 2));
    }

    #[test]
    fn no_allocation_steps_are_held_but_not_reported() {
        let t = JobTable::new();
        let z = 0xffff_2094;
        t.note_run(z, 0);
        t.add_group(z, Part::Step(915_579_058), 123_456_789);
        t.add_group(7, Part::Step(0), 123_456_790);
        assert!(t.contains(z), "signals and srun's stream still reach it");
        assert_eq!(t.running_jobs(), vec![7]);
        let jobs: Vec<u32> = t.runs().iter().map(|r| r.job).collect();
        assert_eq!(jobs, vec![7]);
    }

    #[test]
    fn ended_runs_are_remembered_for_the_newest_jobs() {
        let t = JobTable::new();
        for job in 0..=ENDED_KEPT as u32 {
            assert!(t.claim_batch(job, 0));
            t.finish_batch(job, 0);
        }
        assert!(!t.claim_batch(ENDED_KEPT as u32, 0));
        assert!(
            t.claim_batch(0, 0),
            "the oldest is forgotten: memory stays bounded"
        );
    }

    #[test]
    fn a_suspend_while_the_script_starts_stops_its_group_once_known() {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        use std::os::unix::process::CommandExt;
        let t = JobTable::new();
        assert!(t.claim_batch(5, 0));
        // The controller's suspend arrives before the script's pid is known.
        assert!(t.signal(5, Target::All, Some(Signal::SIGSTOP)));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        t.add_group(5, Part::Batch, pid);
        let stopped = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WUNTRACED));
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            matches!(stopped, Ok(WaitStatus::Stopped(_, Signal::SIGSTOP))),
            "{stopped:?}"
        );
    }

    #[test]
    fn a_kill_before_the_script_started_is_remembered_until_the_next_launch() {
        let t = JobTable::new();
        assert!(t.claim_batch(4, 0));
        assert!(!t.killed(4));
        assert!(t.signal(4, Target::Step(0), Some(Signal::SIGTERM)));
        assert!(!t.killed(4), "a step's signal is not the job's");
        assert!(t.signal(4, Target::All, Some(Signal::SIGTERM)));
        assert!(t.killed(4));
        t.finish_batch(4, 0);
        assert!(t.claim_batch(4, 1));
        assert!(!t.killed(4), "a requeued launch starts afresh");
    }

    #[test]
    fn unknown_jobs_are_reported_as_such() {
        let t = JobTable::new();
        assert!(!t.signal(3, Target::All, Some(Signal::SIGTERM)));
        t.claim_batch(3, 0);
        assert!(t.signal(3, Target::Step(1), Some(Signal::SIGTERM)));
    }
}
