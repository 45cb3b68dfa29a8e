//! The controller's own programs around a job, with the `SLURM_*` variables Slurm gives them:
//! `PrologSlurmctld`, run when a job is allocated, and `EpilogSlurmctld`, run after every run
//! of a job ends (completed, failed, cancelled, timed out, node failure, requeued), with its
//! exit code.
//!
//! The core only decides that a program runs and with what; the runtime runs it (killed after
//! `PrologEpilogTimeout`) once the change is durable, and reports the prolog's end back
//! ([`on_prolog_slurmctld_done`]). While `PrologSlurmctld` runs the job is CONFIGURING and
//! its launch is held; if it fails, a batch job that may be requeued is requeued (to run
//! wherever it fits next), any other job is cancelled, as in Slurm. A failing
//! `EpilogSlurmctld` is only logged.

use std::path::PathBuf;

use super::completion::{end_run, leave_running, release_nodes};
use super::jobs::JobReason;
use super::outbox::{NodeCommand, Outbox};
use super::power::Configuring;
use super::{Core, SimTime, kill};
use sluice_vocab::{FedJobId, JobState};

/// Which controller program runs, as `SLURM_SCRIPT_CONTEXT` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptContext {
    /// `PrologSlurmctld`.
    PrologSlurmctld,
    /// `EpilogSlurmctld`.
    EpilogSlurmctld,
    /// `MailProg`, for `--mail-type` (see [`super::mail`]).
    MailProg,
}

impl ScriptContext {
    /// Slurm's `SLURM_SCRIPT_CONTEXT` value.
    pub fn name(self) -> &'static str {
        match self {
            ScriptContext::PrologSlurmctld => "prolog_slurmctld",
            ScriptContext::EpilogSlurmctld => "epilog_slurmctld",
            ScriptContext::MailProg => "mail",
        }
    }
}

/// One run of a controller program, for the runtime to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptRun {
    /// Which program.
    pub context: ScriptContext,
    /// The job it runs for.
    pub job: FedJobId,
    /// The job's run (its requeue count) it runs for.
    pub run: u32,
    /// The program.
    pub program: PathBuf,
    /// Its arguments (`MailProg`'s `-s <subject> <recipient>`; none for the others).
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(String, String)>,
    /// Seconds it may run (`PrologEpilogTimeout`); `None` for ever.
    pub timeout_secs: Option<u32>,
}

/// `id` was just allocated its nodes: with `PrologSlurmctld` configured, its launch waits for
/// the program (call before the launch is sent or held).
pub(crate) fn hold_for_prolog(core: &mut Core, id: FedJobId) {
    if core.conf().prolog.prolog_slurmctld.is_none() {
        return;
    }
    let Some(run) = core.jobs.map.get(&id).map(|j| j.restarts) else {
        return;
    };
    core.power
        .configuring
        .entry(id)
        .or_insert(Configuring {
            run,
            launch: None,
            prolog_running: false,
            node_prologs: Default::default(),
            prologs_asked: false,
            launched: false,
            cloud_boot: false,
        })
        .prolog_running = true;
}

/// Asks for `PrologSlurmctld` for `id` when [`hold_for_prolog`] held its launch.
pub(crate) fn start_prolog(core: &Core, out: &mut impl Outbox, id: FedJobId) {
    let held = core
        .power
        .configuring
        .get(&id)
        .is_some_and(|c| c.prolog_running);
    let program = core.conf().prolog.prolog_slurmctld.clone();
    if let (true, Some(program)) = (held, program) {
        emit(core, out, id, ScriptContext::PrologSlurmctld, program);
    }
}

/// Runs again the `PrologSlurmctld` of jobs whose program was running when the controller
/// stopped (its end was never reported); called by the tick.
pub(crate) fn restart_prologs(core: &mut Core, out: &mut impl Outbox) {
    for id in std::mem::take(&mut core.power.prolog_restart) {
        start_prolog(core, out, id);
    }
}

/// The runtime's report that `PrologSlurmctld` of `id`'s run `run` ended (`ok`: exit 0). A
/// report about a run that is over (cancelled meanwhile, requeued) changes nothing.
pub fn on_prolog_slurmctld_done(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    run: u32,
    ok: bool,
) {
    let current = core
        .jobs
        .map
        .get(&id)
        .is_some_and(|j| j.restarts == run && j.state == JobState::Running && !j.completing);
    let Some(c) = core.power.configuring.get_mut(&id) else {
        return;
    };
    if !current || c.run != run || !c.prolog_running {
        return;
    }
    if ok {
        c.prolog_running = false;
        super::power::boot::release_ready(core, out, now);
        return;
    }
    tracing::error!(job = %id, "PrologSlurmctld failed, job killed");
    core.power.configuring.remove(&id);
    prolog_failed(core, out, now, id);
}

/// Ends `id`'s run whose `PrologSlurmctld` failed: nothing ran, so its nodes are free at once.
fn prolog_failed(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let requeue = job.may_requeue();
    out.node(NodeCommand::Terminate {
        job: id,
        nodes: job.nodes.clone(),
    });
    release_nodes(core, id);
    leave_running(&mut core.jobs, id);
    super::gang::job_stopped(core, out, now, id);
    if requeue {
        kill::requeue_run(core, out, now, id, JobState::Requeued);
    } else {
        end_run(core, out, now, id, JobState::Cancelled, JobReason::None);
        core.jobs.finished.insert((now, id));
    }
}

/// The run of `id` ended: asks for `EpilogSlurmctld`, when configured and the run had started.
pub(crate) fn run_ended(core: &Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(program) = core.conf().prolog.epilog_slurmctld.clone() else {
        return;
    };
    if core
        .jobs
        .map
        .get(&id)
        .is_none_or(|j| j.start_time.is_none())
    {
        return;
    }
    emit(core, out, id, ScriptContext::EpilogSlurmctld, program);
}

/// Asks the runtime to run `program` for `id` in `context`, with Slurm's variables.
fn emit(
    core: &Core,
    out: &mut impl Outbox,
    id: FedJobId,
    context: ScriptContext,
    program: PathBuf,
) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let mut env = vec![
        ("SLURM_JOB_ID", id.to_string()),
        ("SLURM_JOBID", id.to_string()),
        ("SLURM_JOB_NAME", job.name.clone()),
        ("SLURM_JOB_USER", job.launch.user.clone()),
        ("SLURM_JOB_UID", job.uid.to_string()),
        ("SLURM_JOB_GID", job.gid.to_string()),
        ("SLURM_JOB_ACCOUNT", job.launch.account.clone()),
        (
            "SLURM_JOB_PARTITION",
            core.parts[job.partition.get()].name.clone(),
        ),
        ("SLURM_JOB_NODELIST", core.nodes.hostlist(&job.nodes)),
        ("SLURM_CLUSTER_NAME", core.cfg.cluster_name.clone()),
        ("SLURM_SCRIPT_CONTEXT", context.name().to_string()),
    ];
    if context == ScriptContext::EpilogSlurmctld {
        let (code, signal) = (job.exit_code, job.exit_signal);
        // The wait(2) status and its `code:signal` form, as Slurm gives them.
        let status = (code & 0xff) << 8 | (signal & 0x7f);
        env.push(("SLURM_JOB_EXIT_CODE", status.to_string()));
        env.push(("SLURM_JOB_EXIT_CODE2", format!("{code}:{signal}")));
    }
    if let Some(a) = job.array {
        env.push(("SLURM_ARRAY_JOB_ID", a.job.to_string()));
        env.push(("SLURM_ARRAY_TASK_ID", a.task.to_string()));
    }
    out.script(ScriptRun {
        context,
        job: id,
        run: job.restarts,
        program,
        args: Vec::new(),
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        timeout_secs: core.conf().prolog.timeout_secs,
    });
}
