//! squeue's fields: the `-o` letter, the `-O` name, the header and how each value is shown.

use sluice_vocab::JobState;
use sluice_wire::proto::JobInfo;

use crate::cmdutil::{group_name, user_name};
use crate::timefmt::{self, Zone};

/// One output line: a job, or pending tasks of one array folded together.
#[derive(Debug, Clone)]
pub struct JobLine<'a> {
    /// The job (for a folded line, its first task).
    pub job: &'a JobInfo,
    /// Folded pending tasks, as `4-10%2`.
    pub tasks: Option<String>,
    /// The reason; for a folded line the tasks' distinct reasons joined by `,`.
    pub reason: String,
}

impl<'a> JobLine<'a> {
    /// A line for one job.
    pub fn single(job: &'a JobInfo) -> Self {
        Self {
            job,
            tasks: None,
            reason: job.reason.clone(),
        }
    }

    /// The job's state (unknown values read as PENDING, the table's first row).
    pub fn state(&self) -> JobState {
        JobState::from_stored(self.job.state).unwrap_or(JobState::Pending)
    }

    /// Seconds the job has run (Slurm's `job_time_used`), at the controller's clock.
    pub fn time_used(&self) -> i64 {
        let j = self.job;
        if j.start <= 0 || self.state() == JobState::Pending {
            return 0;
        }
        let end = if self.state().is_finished() && j.end > 0 {
            j.end
        } else {
            j.now
        };
        (end - j.start - j.suspended_secs).max(0)
    }

    /// The user's login name.
    pub fn user(&self) -> String {
        if self.job.user.is_empty() {
            user_name(self.job.uid)
        } else {
            self.job.user.clone()
        }
    }

    /// `%i`: `123`, `123_4`, `123_[4-10%2]` or, for a heterogeneous job's component, `123+1`.
    pub fn job_id(&self) -> String {
        let j = self.job;
        match (&self.tasks, j.array_task_id) {
            (Some(tasks), _) => format!("{}_[{tasks}]", j.array_job_id),
            (None, Some(task)) => format!("{}_{task}", j.array_job_id),
            (None, None) if j.het_job_id != 0 => format!("{}+{}", j.het_job_id, j.het_job_offset),
            (None, None) => j.job_id.to_string(),
        }
    }

    /// Whether the NODELIST(REASON) column shows the reason (pending and failed-ish jobs).
    pub fn shows_reason(&self) -> bool {
        use JobState::*;
        matches!(
            self.state(),
            Pending | StageOut | Timeout | OutOfMemory | Deadline | Failed
        )
    }
}

/// How one field is shown.
pub struct Field {
    /// The `-o` letter, if it has one.
    pub letter: Option<char>,
    /// The `-O` name (matched case-insensitively).
    pub name: &'static str,
    /// The header.
    pub header: &'static str,
    /// Whether a right-justified value may be cut to the width (not node lists and times).
    pub cut: bool,
    /// The value.
    pub value: fn(&JobLine, Zone) -> String,
}

const fn f(
    letter: Option<char>,
    name: &'static str,
    header: &'static str,
    cut: bool,
    value: fn(&JobLine, Zone) -> String,
) -> Field {
    Field {
        letter,
        name,
        header,
        cut,
        value,
    }
}

fn or_null(s: &str) -> String {
    if s.is_empty() {
        "(null)".to_string()
    } else {
        s.to_string()
    }
}

/// Bits above the local part of a federated job id hold the origin's federation id.
const FED_ID_SHIFT: u32 = 26;

/// A job's `OverSubscribe` (`YES`, `NO`, `OK`); a controller that does not say shows `OK`.
fn over_subscribe(s: &str) -> String {
    if s.is_empty() {
        "OK".to_string()
    } else {
        s.to_string()
    }
}

fn na(s: &str) -> String {
    if s.is_empty() {
        "NA".to_string()
    } else {
        s.to_string()
    }
}

/// A sibling bitmap as Slurm's `*raw` fields print it: the federation ids (bit + 1), or NA.
pub fn fed_ids(bits: u64) -> String {
    let ids: Vec<String> = (0..64u32)
        .filter(|b| bits & (1u64 << b) != 0)
        .map(|b| (b + 1).to_string())
        .collect();
    if ids.is_empty() {
        "NA".to_string()
    } else {
        ids.join(",")
    }
}

/// Every field squeue knows, `-o` letters and `-O` names.
pub const FIELDS: &[Field] = &[
    f(Some('a'), "Account", "ACCOUNT", true, |l, _| {
        or_null(&l.job.account)
    }),
    f(Some('F'), "ArrayJobId", "ARRAY_JOB_ID", true, |l, _| {
        if l.job.array_job_id > 0 {
            l.job.array_job_id.to_string()
        } else {
            l.job.job_id.to_string()
        }
    }),
    f(
        Some('K'),
        "ArrayTaskId",
        "ARRAY_TASK_ID",
        true,
        |l, _| match (&l.tasks, l.job.array_task_id) {
            (Some(t), _) => t.clone(),
            (None, Some(t)) => t.to_string(),
            (None, None) => "N/A".to_string(),
        },
    ),
    f(None, "BatchFlag", "BATCH_FLAG", true, |l, _| {
        u8::from(l.job.batch).to_string()
    }),
    f(Some('B'), "BatchHost", "EXEC_HOST", true, |l, _| {
        if l.job.batch_host.is_empty() {
            "n/a".to_string()
        } else {
            l.job.batch_host.clone()
        }
    }),
    f(None, "Cluster", "CLUSTER", true, |l, _| {
        l.job.cluster.clone()
    }),
    f(Some('o'), "Command", "COMMAND", true, |l, _| {
        or_null(&l.job.command)
    }),
    f(None, "CPUsPerTask", "CPUS_PER_TASK", true, |l, _| {
        l.job.cpus_per_task.to_string()
    }),
    f(Some('E'), "Dependency", "DEPENDENCY", true, |l, _| {
        or_null(&l.job.dependency)
    }),
    f(None, "EligibleTime", "ELIGIBLE_TIME", true, |l, z| {
        timefmt::timestamp(l.job.eligible, z)
    }),
    f(Some('e'), "EndTime", "END_TIME", true, |l, z| {
        if l.job.time_limit_min < 0 && l.job.end > l.job.now {
            "NONE".to_string()
        } else {
            timefmt::timestamp(l.job.end, z)
        }
    }),
    f(None, "exit_code", "EXIT_CODE", true, |l, _| {
        format!("{}:{}", l.job.exit_code, l.job.signal)
    }),
    f(Some('f'), "Feature", "FEATURES", true, |l, _| {
        or_null(&l.job.constraint)
    }),
    f(Some('G'), "GroupId", "GROUP", true, |l, _| {
        l.job.gid.to_string()
    }),
    f(Some('g'), "GroupName", "GROUP", true, |l, _| {
        group_name(l.job.gid)
    }),
    f(Some('i'), "JobArrayId", "JOBID", true, |l, _| l.job_id()),
    f(Some('A'), "JobId", "JOBID", true, |l, _| {
        l.job.job_id.to_string()
    }),
    f(Some('m'), "MinMemory", "MIN_MEMORY", true, |l, _| {
        format!("{}M", l.job.mem_mb)
    }),
    f(Some('j'), "Name", "NAME", true, |l, _| l.job.name.clone()),
    f(Some('y'), "Nice", "NICE", true, |l, _| {
        l.job.nice.to_string()
    }),
    f(Some('N'), "NodeList", "NODELIST", false, |l, _| {
        l.job.node_list.clone()
    }),
    f(Some('C'), "NumCPUs", "CPUS", true, |l, _| {
        l.job.cpus.to_string()
    }),
    f(Some('D'), "NumNodes", "NODES", true, |l, _| {
        l.job.node_count.to_string()
    }),
    f(None, "NumTasks", "TASKS", true, |l, _| {
        l.job.ntasks.to_string()
    }),
    f(None, "Origin", "ORIGIN", true, |l, _| na(&l.job.fed_origin)),
    f(None, "OriginRaw", "ORIGIN_RAW", true, |l, _| {
        match l.job.job_id >> FED_ID_SHIFT {
            0 => "NA".to_string(),
            id => id.to_string(),
        }
    }),
    f(
        Some('h'),
        "OverSubscribe",
        "OVER_SUBSCRIBE",
        true,
        |l, _| over_subscribe(&l.job.oversubscribe),
    ),
    f(Some('P'), "Partition", "PARTITION", true, |l, _| {
        l.job.partition.clone()
    }),
    f(Some('p'), "Priority", "PRIORITY", true, |l, _| {
        format!("{:16.14}", l.job.priority as f64 / f64::from(u32::MAX))
    }),
    f(Some('Q'), "PriorityLong", "PRIORITY", true, |l, _| {
        l.job.priority.to_string()
    }),
    f(Some('q'), "QOS", "QOS", true, |l, _| {
        or_null_qos(&l.job.qos)
    }),
    f(Some('r'), "Reason", "REASON", true, |l, _| l.reason.clone()),
    f(
        Some('R'),
        "ReasonList",
        "NODELIST(REASON)",
        false,
        |l, _| {
            if l.shows_reason() {
                format!("({})", l.reason)
            } else {
                l.job.node_list.clone()
            }
        },
    ),
    f(None, "Requeue", "REQUEUE", true, |l, _| {
        u8::from(l.job.requeue).to_string()
    }),
    f(None, "RestartCnt", "RESTARTCNT", true, |l, _| {
        l.job.restarts.to_string()
    }),
    f(None, "SiblingsActive", "ACTIVE_SIBLINGS", true, |l, _| {
        // Only the origin tracks where copies live; a sibling's copy shows NA, as in Slurm.
        if l.job.cluster != l.job.fed_origin {
            "NA".to_string()
        } else {
            na(&l.job.fed_active.join(","))
        }
    }),
    f(
        None,
        "SiblingsActiveRaw",
        "ACTIVE_SIBLINGS_RAW",
        true,
        |l, _| fed_ids(l.job.fed_active_raw),
    ),
    f(None, "SiblingsViable", "VIABLE_SIBLINGS", true, |l, _| {
        na(&l.job.fed_viable.join(","))
    }),
    // Slurm's header carries this spelling; scripts match it.
    f(
        None,
        "SiblingsViableRaw",
        "VIALBLE_SIBLINGS_RAW",
        true,
        |l, _| fed_ids(l.job.fed_viable_raw),
    ),
    f(Some('S'), "StartTime", "START_TIME", true, |l, z| {
        timefmt::timestamp(l.job.start, z)
    }),
    f(Some('T'), "State", "STATE", true, |l, _| {
        l.state().long_name().to_string()
    }),
    f(Some('t'), "StateCompact", "ST", true, |l, _| {
        l.state().short_name().to_string()
    }),
    f(None, "StdErr", "STDERR", true, |l, _| l.job.stderr.clone()),
    f(None, "StdOut", "STDOUT", true, |l, _| l.job.stdout.clone()),
    f(Some('V'), "SubmitTime", "SUBMIT_TIME", true, |l, z| {
        timefmt::timestamp(l.job.submit, z)
    }),
    f(Some('L'), "TimeLeft", "TIME_LEFT", false, |l, _| {
        if l.job.time_limit_min < 0 {
            "UNLIMITED".to_string()
        } else {
            timefmt::elapsed(l.job.time_limit_min * 60 - l.time_used())
        }
    }),
    f(Some('l'), "TimeLimit", "TIME_LIMIT", false, |l, _| {
        timefmt::limit_compact(l.job.time_limit_min)
    }),
    f(Some('M'), "TimeUsed", "TIME", false, |l, _| {
        timefmt::elapsed(l.time_used())
    }),
    f(Some('U'), "UserId", "UID", true, |l, _| {
        l.job.uid.to_string()
    }),
    f(Some('u'), "UserName", "USER", true, |l, _| l.user()),
    f(Some('Z'), "WorkDir", "WORK_DIR", true, |l, _| {
        l.job.workdir.clone()
    }),
];

/// The field for an `-o` letter.
pub fn by_letter(c: &str) -> Option<&'static Field> {
    let mut chars = c.chars();
    let (first, rest) = (chars.next()?, chars.next());
    if rest.is_some() {
        return None;
    }
    FIELDS.iter().find(|f| f.letter == Some(first))
}

/// The field for an `-O` name (case-insensitive; `JobID` is `JobId`).
pub fn by_name(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

/// A job's QOS as squeue shows it: `(null)` for a job without one (saved before QOS existed).
fn or_null_qos(qos: &str) -> String {
    match qos {
        "" => "(null)".to_string(),
        q => q.to_string(),
    }
}
