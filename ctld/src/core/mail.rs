//! Mail about jobs (`--mail-type`, `--mail-user`): the controller runs `MailProg` as Slurm
//! does, `MailProg -s "<subject>" <recipient>`, with the job's `SLURM_*` variables, when the
//! job begins, ends, fails, is requeued, reaches a share of its time limit, or is cancelled for
//! a dependency that can never be met. The recipient is `--mail-user`, else the job's owner
//! (with `MailDomain` added to a name without `@`).
//!
//! An array mails as a whole (`Slurm Array Summary`: when its first task begins and when its
//! last task ends) unless `ARRAY_TASKS` asks for each task. The time-limit shares already
//! mailed are not saved: after a controller restart one may be mailed again.

use super::ctld_scripts::{ScriptContext, ScriptRun};
use super::jobs::Job;
use super::outbox::Outbox;
use super::{Core, SimTime};
use sluice_vocab::mail_type::MailTypes;
use sluice_vocab::{FedJobId, JobState};

/// `id` started running.
pub(crate) fn job_started(core: &Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = wanted(core, id, MailTypes::BEGIN) else {
        return;
    };
    if !per_task(job) && array_tasks(core, job).any(|t| t.id != id && t.start_time.is_some()) {
        return;
    }
    let since = job.submit_time.max(
        job.req
            .place
            .begin
            .map_or(job.submit_time, SimTime::from_secs),
    );
    let text = format!("Began, Queued time {}", duration(now.since(since)));
    send(core, out, job, "Began", &text);
}

/// `id`'s run ended in `state` (called after the job took it).
pub(crate) fn job_ended(core: &Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let types = MailTypes(job.req.place.mail_type);
    let failed = failed_state(job.state);
    let (bit, kind) = if failed && types.has(MailTypes::FAIL) {
        (MailTypes::FAIL, "Failed")
    } else if types.has(MailTypes::END) {
        (MailTypes::END, "Ended")
    } else {
        return;
    };
    if wanted(core, id, bit).is_none() {
        return;
    }
    if per_task(job) {
        let text = format!(
            "{kind}, Run time {}, {}, ExitCode {}",
            duration(run_time(job, now)),
            job.state.long_name(),
            job.exit_code
        );
        send(core, out, job, kind, &text);
        return;
    }
    let tasks: Vec<&Job> = array_tasks(core, job).collect();
    if tasks.iter().any(|t| t.id != id && !t.state.is_finished()) {
        return;
    }
    let state = if tasks.iter().all(|t| t.state == job.state) {
        job.state.long_name()
    } else {
        "Mixed"
    };
    let max_code = tasks.iter().map(|t| t.exit_code).max().unwrap_or(0);
    let text = format!("{kind}, {state}, ExitCode {max_code}");
    send(core, out, job, kind, &text);
}

/// `id`'s run was requeued.
pub(crate) fn job_requeued(core: &Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = wanted(core, id, MailTypes::REQUEUE) else {
        return;
    };
    let text = format!("Requeued, Run time {}", duration(run_time(job, now)));
    send(core, out, job, "Requeued", &text);
}

/// `id` was cancelled because a dependency can never be met.
pub(crate) fn invalid_depend(core: &Core, out: &mut impl Outbox, id: FedJobId) {
    let Some(job) = wanted(core, id, MailTypes::INVALID_DEPEND) else {
        return;
    };
    send(core, out, job, "Invalid dependency", "Invalid dependency");
}

/// The time-limit shares Slurm mails about, largest first, with their text.
const SHARES: [(u16, u64, &str); 4] = [
    (MailTypes::TIME_LIMIT, 100, "Reached time limit"),
    (MailTypes::TIME_LIMIT_90, 90, "Reached 90% of time limit"),
    (MailTypes::TIME_LIMIT_80, 80, "Reached 80% of time limit"),
    (MailTypes::TIME_LIMIT_50, 50, "Reached 50% of time limit"),
];

/// Mails the time-limit shares running job `id` has reached since the last look (each once
/// per run); called by the tick before time limits are enforced.
pub(crate) fn time_shares(core: &mut Core, out: &mut impl Outbox, now: SimTime, id: FedJobId) {
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    let types = MailTypes(job.req.place.mail_type);
    let Some(limit_secs) = job.req.time_limit.as_secs() else {
        return;
    };
    let (Some(_), false) = (job.start_time, job.completing) else {
        return;
    };
    let ran = run_time(job, now);
    let due: Vec<(u16, &str)> = SHARES
        .iter()
        .filter(|(bit, pct, _)| {
            types.has(*bit) && job.mail_sent & *bit == 0 && ran * 100 >= limit_secs * pct
        })
        .map(|(bit, _, text)| (*bit, *text))
        .collect();
    // Only the largest share reached is mailed; the smaller ones count as sent.
    let Some(&(_, kind)) = due.first() else {
        return;
    };
    let text = format!("{kind}, Run time {}", duration(ran));
    send(core, out, job, kind, &text);
    let mut sent = 0;
    for (bit, _) in &due {
        sent |= bit;
    }
    if let Some(job) = core.jobs.map.get_mut(&id) {
        job.mail_sent |= sent;
    }
}

/// The job when it asked for mail of `bit`.
fn wanted(core: &Core, id: FedJobId, bit: u16) -> Option<&Job> {
    core.jobs
        .map
        .get(&id)
        .filter(|j| MailTypes(j.req.place.mail_type).has(bit))
}

/// Whether `job` mails on its own: not an array task, or `ARRAY_TASKS`.
fn per_task(job: &Job) -> bool {
    job.array.is_none() || MailTypes(job.req.place.mail_type).has(MailTypes::ARRAY_TASKS)
}

/// The tasks of `job`'s array (none for a job outside an array).
fn array_tasks<'a>(core: &'a Core, job: &Job) -> impl Iterator<Item = &'a Job> {
    job.array
        .and_then(|a| core.jobs.arrays.get(&a.job))
        .into_iter()
        .flat_map(|meta| meta.tasks.iter())
        .filter_map(|(_, id)| core.jobs.map.get(id))
}

/// Slurm's failed states: mailed as `Failed` under `FAIL` (a cancel is an end).
fn failed_state(state: JobState) -> bool {
    state.is_finished() && !matches!(state, JobState::Completed | JobState::Cancelled)
}

/// Seconds the current run has run by `now`, suspensions excluded.
fn run_time(job: &Job, now: SimTime) -> u64 {
    let end = job.end_time.unwrap_or(now);
    job.start_time
        .map_or(0, |s| end.since(s).saturating_sub(job.suspended_secs))
}

/// Slurm's `[D-]HH:MM:SS`.
pub fn duration(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// Asks the runtime to run `MailProg` for `job`: `kind` is `SLURM_JOB_MAIL_TYPE`, `text` the
/// subject after the job's name.
fn send(core: &Core, out: &mut impl Outbox, job: &Job, kind: &str, text: &str) {
    let name = &job.name;
    let subject = match job.array {
        Some(a) if per_task(job) => {
            format!(
                "Slurm Array Task Job_id={}_{} ({}) Name={name} {text}",
                a.job, a.task, job.id
            )
        }
        Some(a) => format!(
            "Slurm Array Summary Job_id={}_* ({}) Name={name} {text}",
            a.job, a.job
        ),
        None => format!("Slurm Job_id={} Name={name} {text}", job.id),
    };
    let conf = &core.conf().mail;
    let recipient = conf.recipient(
        job.req
            .place
            .mail_user
            .as_deref()
            .unwrap_or(&job.launch.user),
    );
    let mut env = vec![
        ("SLURM_JOB_ID", job.id.to_string()),
        ("SLURM_JOB_NAME", name.clone()),
        ("SLURM_JOB_USER", job.launch.user.clone()),
        ("SLURM_JOB_UID", job.uid.to_string()),
        ("SLURM_JOB_MAIL_TYPE", kind.to_string()),
        ("SLURM_JOB_STATE", job.state.long_name().to_string()),
        (
            "SLURM_JOB_PARTITION",
            core.parts[job.partition.get()].name.clone(),
        ),
        ("SLURM_JOB_WORK_DIR", job.launch.workdir.clone()),
        ("SLURM_CLUSTER_NAME", core.cfg.cluster_name.clone()),
        ("PATH", "/usr/bin:/bin".to_string()),
    ];
    if let Some(a) = job.array {
        env.push(("SLURM_ARRAY_JOB_ID", a.job.to_string()));
        env.push(("SLURM_ARRAY_TASK_ID", a.task.to_string()));
    }
    out.script(ScriptRun {
        context: ScriptContext::MailProg,
        job: job.id,
        run: job.restarts,
        program: conf.mail_prog.clone(),
        args: vec!["-s".to_string(), subject, recipient],
        env: env.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        timeout_secs: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_slurm_prints_them() {
        assert_eq!(duration(5), "00:00:05");
        assert_eq!(duration(3723), "01:02:03");
        assert_eq!(duration(90_061), "1-01:01:01");
    }

    #[test]
    fn failed_states_are_not_ends() {
        assert!(failed_state(JobState::Failed));
        assert!(failed_state(JobState::Timeout));
        assert!(failed_state(JobState::Deadline));
        assert!(!failed_state(JobState::Completed));
        assert!(!failed_state(JobState::Cancelled));
        assert!(!failed_state(JobState::Running));
    }
}
