//! sacct's `--format` fields: Slurm's name, default width (negative = left-justified) and the
//! value for job and step lines, per Slurm's `print.c`. A field is matched as Slurm does: the
//! first name in Slurm's table that starts with what was typed (`-o jobn` is JobName); a name
//! of Slurm's that sluice does not account (ConsumedEnergy, ReqGRES, ...) is refused like an
//! unknown one, except in `-l`, which prints the long list's accounted fields. The usage fields
//! (MaxRSS, TotalCPU, ...) are in [`crate::acct::usage`].

use super::values::{self as v, Line};
use crate::cmdutil::user_name;
use crate::timefmt;

pub use crate::acct::{Cx, Field};

const fn f(name: &'static str, width: i32, value: fn(&Line, &Cx) -> String) -> Field {
    Field { name, width, value }
}

fn job_only(l: &Line, value: impl FnOnce(&sluice_wire::proto::JobRow) -> String) -> String {
    match l {
        Line::Job(j) => value(j),
        Line::Step(..) => String::new(),
    }
}

fn date(t: i64, cx: &Cx) -> String {
    timefmt::timestamp_or(t, cx.zone, "Unknown")
}

/// Every field sluice accounts, in Slurm's table order.
pub const FIELDS: &[Field] = &[
    f("Account", 10, |l, _| l.job().account.clone()),
    f("AllocCPUS", 10, |l, _| v::cpus(l).to_string()),
    f("AllocNodes", 10, |l, _| match l {
        Line::Job(j) => j.node_count.to_string(),
        Line::Step(_, s) => s.node_count.to_string(),
    }),
    f("AllocTRES", 10, v::alloc_tres),
    f("Cluster", 10, |l, _| l.job().cluster.clone()),
    f("Comment", 14, |l, _| job_only(l, |j| j.comment.clone())),
    f("CPUTime", 10, |l, cx| {
        timefmt::clock(v::elapsed(l, cx.now) * i64::from(v::cpus(l)))
    }),
    f("CPUTimeRAW", 10, |l, cx| {
        (v::elapsed(l, cx.now) * i64::from(v::cpus(l))).to_string()
    }),
    f("DerivedExitCode", 15, |l, _| job_only(l, v::derived_exit)),
    f("Elapsed", 10, |l, cx| timefmt::clock(v::elapsed(l, cx.now))),
    f("ElapsedRaw", 10, |l, cx| v::elapsed(l, cx.now).to_string()),
    f("Eligible", 19, |l, cx| match l {
        Line::Job(j) => date(j.eligible, cx),
        Line::Step(_, s) => date(s.start, cx),
    }),
    f("End", 19, |l, cx| match l {
        Line::Job(j) => date(j.end, cx),
        Line::Step(j, s) => date(v::step_end(j, s), cx),
    }),
    f("ExitCode", 8, |l, _| match l {
        Line::Job(j) => format!("{}:{}", j.exit_code, j.signal),
        Line::Step(_, s) => format!("{}:{}", s.exit_code, s.signal),
    }),
    f("GID", 6, |l, _| job_only(l, |j| j.gid.to_string())),
    f("Group", 9, |l, _| job_only(l, |j| v::group_name(j.gid))),
    f("JobID", -12, |l, _| v::line_id(l, false)),
    f("JobIDRaw", -12, |l, _| v::line_id(l, true)),
    f("JobName", 10, |l, _| match l {
        Line::Job(j) => j.name.clone(),
        Line::Step(_, s) if s.name.is_empty() => super::jobsel::step_suffix(s.step_id),
        Line::Step(_, s) => s.name.clone(),
    }),
    f("NCPUS", 10, |l, _| v::cpus(l).to_string()),
    f("NNodes", 8, |l, _| match l {
        Line::Job(j) => j.node_count.to_string(),
        Line::Step(_, s) => s.node_count.to_string(),
    }),
    f("NodeList", 15, |l, _| match l {
        Line::Job(j) if j.node_list.is_empty() => "None assigned".into(),
        Line::Job(j) => j.node_list.clone(),
        Line::Step(_, s) => s.node_list.clone(),
    }),
    f("NTasks", 8, |l, _| match l {
        Line::Job(_) => String::new(),
        Line::Step(_, s) => s.ntasks.to_string(),
    }),
    f("Partition", 10, |l, _| job_only(l, |j| j.partition.clone())),
    f("Planned", 10, |l, cx| {
        v::planned(l, cx.now)
            .map(timefmt::clock)
            .unwrap_or_default()
    }),
    f("PlannedCPU", 10, |l, cx| {
        v::planned(l, cx.now)
            .map(|p| timefmt::clock(p * i64::from(l.job().req_cpus)))
            .unwrap_or_default()
    }),
    f("PlannedCPURAW", 10, |l, cx| {
        v::planned(l, cx.now)
            .map(|p| (p * i64::from(l.job().req_cpus)).to_string())
            .unwrap_or_default()
    }),
    f("QOS", 10, |l, _| job_only(l, |j| j.qos.clone())),
    f("Reason", 22, |l, _| {
        job_only(l, |j| {
            if j.reason.is_empty() {
                "None".into()
            } else {
                j.reason.clone()
            }
        })
    }),
    f("ReqCPUS", 8, |l, _| match l {
        Line::Job(j) => j.req_cpus.to_string(),
        Line::Step(_, s) => s.cpus.to_string(),
    }),
    f("ReqMem", 10, |l, cx| {
        job_only(l, |j| v::units(cx, j.req_mem_mb, 'M'))
    }),
    f("Start", 19, |l, cx| match l {
        Line::Job(j) => date(j.start, cx),
        Line::Step(_, s) => date(s.start, cx),
    }),
    f("State", 10, |l, _| match l {
        Line::Job(j) => v::state_text(j.state, j.requester_uid),
        Line::Step(_, s) => v::state_text(s.state, None),
    }),
    f("Submit", 19, |l, cx| match l {
        Line::Job(j) => date(j.submit, cx),
        Line::Step(_, s) => date(s.start, cx),
    }),
    f("Suspended", 10, |l, _| match l {
        Line::Job(j) => timefmt::clock(j.suspended_secs),
        Line::Step(..) => timefmt::clock(0),
    }),
    f("Timelimit", 10, |l, _| {
        job_only(l, |j| match j.time_limit_min {
            0 => String::new(),
            m => timefmt::limit_clock(m),
        })
    }),
    f("TimelimitRaw", 10, |l, _| {
        job_only(l, |j| match j.time_limit_min {
            0 => String::new(),
            m if m < 0 => "UNLIMITED".into(),
            m => m.to_string(),
        })
    }),
    f("UID", 6, |l, _| job_only(l, |j| j.uid.to_string())),
    f("User", 9, |l, _| {
        job_only(l, |j| {
            if j.user.is_empty() {
                user_name(j.uid)
            } else {
                j.user.clone()
            }
        })
    }),
    // A step shows its job's wckey, as the account.
    f("WCKey", 10, |l, _| l.job().wckey.clone()),
    f("WorkDir", 20, |l, _| job_only(l, |j| j.workdir.clone())),
];

/// The `JobRow` text fields that the fields' lines (job and step) read, by field; every field
/// not named here reads none of them. sacct asks the dbd for these alone
/// (`JobQuery.fields`), so a field that starts reading one must be added here (a test renders
/// every field with the others blanked).
pub const TEXT_READS: &[(&str, &str)] = &[
    ("Account", "account"),
    ("Comment", "comment"),
    ("JobName", "name"),
    ("NodeList", "node_list"),
    ("Partition", "partition"),
    ("QOS", "qos"),
    ("Reason", "reason"),
    ("User", "user"),
    ("WCKey", "wckey"),
    ("WorkDir", "workdir"),
];

/// The `JobRow` text fields the lines of the fields `names` read.
pub fn text_reads<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut reads: Vec<String> = Vec::new();
    for name in names {
        for &(_, column) in TEXT_READS.iter().filter(|(f, _)| *f == name) {
            if !reads.iter().any(|r| r == column) {
                reads.push(column.to_string());
            }
        }
    }
    reads
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
