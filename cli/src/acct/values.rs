//! How sacct shows values: states with their canceller, exit codes, elapsed and CPU times,
//! memory with Slurm's unit reduction, and TRES strings. Pure functions of a printed line.

use sluice_vocab::JobState;
use sluice_wire::proto::{JobRow, StepRecord};

use super::Cx;
use super::jobsel::{BATCH_STEP, step_suffix};

/// One printed line: a job (allocation) or one of its steps.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    /// The job.
    Job(&'a JobRow),
    /// A step of the job.
    Step(&'a JobRow, &'a StepRecord),
}

impl<'a> Line<'a> {
    /// The job the line belongs to.
    pub fn job(&self) -> &'a JobRow {
        match self {
            Line::Job(j) | Line::Step(j, _) => j,
        }
    }

    /// The step, for a step line.
    pub fn step(&self) -> Option<&'a StepRecord> {
        match self {
            Line::Job(_) => None,
            Line::Step(_, s) => Some(s),
        }
    }
}

/// The job id as sacct prints it: `5`, `5_3` for an array task, `5+1` for a heterogeneous
/// job's component.
pub fn job_id(j: &JobRow) -> String {
    match j.array_task_id {
        Some(t) if j.array_job_id != 0 => format!("{}_{t}", j.array_job_id),
        _ if j.het_job_id != 0 => format!("{}+{}", j.het_job_id, j.het_offset),
        _ => j.job_id.to_string(),
    }
}

/// `JobID` / `JobIDRaw` of a line: the job's id (`raw`: the plain job id), plus `.step`.
pub fn line_id(l: &Line, raw: bool) -> String {
    let job = if raw {
        l.job().job_id.to_string()
    } else {
        job_id(l.job())
    };
    match l.step() {
        None => job,
        Some(s) => format!("{job}.{}", step_suffix(s.step_id)),
    }
}

/// A stored state as Slurm names it; `CANCELLED by <uid>` when the canceller is known.
pub fn state_text(state: u32, requester: Option<u32>) -> String {
    let name = JobState::from_stored(state).map_or("UNKNOWN", JobState::long_name);
    match requester {
        Some(uid) if state == JobState::Cancelled.stored() => format!("{name} by {uid}"),
        _ => name.to_string(),
    }
}

/// A step's end: its own, or the job's while the step has none (Slurm's `do_list`).
pub fn step_end(j: &JobRow, s: &StepRecord) -> i64 {
    if s.end == 0 { j.end } else { s.end }
}

/// Seconds from `start` to `end` (or `now` while running); 0 before it starts.
pub fn span(start: i64, end: i64, now: i64) -> i64 {
    if start <= 0 {
        0
    } else {
        ((if end > 0 { end } else { now }) - start).max(0)
    }
}

/// Run time of the line, suspended time excluded.
pub fn elapsed(l: &Line, now: i64) -> i64 {
    match l {
        Line::Job(j) => (span(j.start, j.end, now) - j.suspended_secs).max(0),
        Line::Step(j, s) => span(s.start, step_end(j, s), now),
    }
}

/// The CPUs allocated to the line.
pub fn cpus(l: &Line) -> u32 {
    match l {
        Line::Job(j) => j.cpus,
        Line::Step(_, s) => s.cpus,
    }
}

/// The job's derived exit code: the highest exit code (then signal) of its steps other than
/// the batch script, `0:0` without any.
pub fn derived_exit(j: &JobRow) -> String {
    let (code, signal) = derived_exit_pair(j);
    format!("{code}:{signal}")
}

/// [`derived_exit`] as (exit code, signal).
pub fn derived_exit_pair(j: &JobRow) -> (i32, i32) {
    j.steps
        .iter()
        .filter(|s| s.step_id != BATCH_STEP)
        .map(|s| (s.exit_code, s.signal))
        .max()
        .unwrap_or((0, 0))
}

/// `value` in `unit` (`'\0'`: bytes) as sacct shows it: reduced by [`convert_units`], or kept
/// in its unit with `--noconvert`.
pub fn units(cx: &Cx, value: u64, unit: char) -> String {
    match (cx.noconvert, unit) {
        (false, _) => convert_units(value, unit),
        (true, '\0') => value.to_string(),
        (true, unit) => format!("{value}{unit}"),
    }
}

/// A count in `unit` (`M` for megabytes, `""` for plain counts) reduced as Slurm's
/// `convert_num_unit` with exact conversion does: divided by 1024 while it is at least 1024
/// and a multiple of 512, shown with two decimals when not whole.
pub fn convert_units(value: u64, unit: char) -> String {
    const UNITS: &[char] = &['\0', 'K', 'M', 'G', 'T', 'P', 'E'];
    let mut idx = UNITS.iter().position(|&u| u == unit).unwrap_or(0);
    let mut num = value as f64;
    while num >= 1024.0 && idx + 1 < UNITS.len() && (num as u64).is_multiple_of(512) {
        num /= 1024.0;
        idx += 1;
    }
    let suffix = if UNITS[idx] == '\0' {
        String::new()
    } else {
        UNITS[idx].to_string()
    };
    if num.fract() == 0.0 {
        format!("{}{suffix}", num as u64)
    } else {
        format!("{num:.2}{suffix}")
    }
}

/// `AllocTRES`: `billing=2,cpu=2,mem=4000M,node=1` for a started job (billing = CPUs, the
/// default weights), `cpu=2,node=1` for a step (step memory is not accounted); empty before
/// anything was allocated.
pub fn alloc_tres(l: &Line, cx: &Cx) -> String {
    match l {
        Line::Job(j) if j.cpus == 0 => String::new(),
        Line::Job(j) => {
            let mut parts = vec![format!("billing={}", j.cpus), format!("cpu={}", j.cpus)];
            if j.mem_mb > 0 {
                parts.push(format!("mem={}", units(cx, j.mem_mb, 'M')));
            }
            parts.push(format!("node={}", j.node_count));
            parts.join(",")
        }
        Line::Step(_, s) if s.cpus == 0 => String::new(),
        Line::Step(_, s) => format!("cpu={},node={}", s.cpus, s.node_count),
    }
}

/// Seconds a job waited while eligible (`Planned`): to its start, or to now while pending;
/// `None` for steps.
pub fn planned(l: &Line, now: i64) -> Option<i64> {
    let j = match l {
        Line::Job(j) => j,
        Line::Step(..) => return None,
    };
    Some(if j.eligible <= 0 {
        0
    } else if j.start > 0 {
        (j.start - j.eligible).max(0)
    } else {
        (now - j.eligible).max(0)
    })
}

/// The name of group `gid`; empty when the system does not know it (as Slurm prints it).
pub fn group_name(gid: u32) -> String {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map(|g| g.name)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reduces_only_on_exact_multiples() {
        assert_eq!(convert_units(4000, 'M'), "4000M");
        assert_eq!(convert_units(16_384, 'M'), "16G");
        assert_eq!(convert_units(1536, 'M'), "1.50G");
        assert_eq!(convert_units(0, 'M'), "0M");
        assert_eq!(convert_units(3, '\0'), "3");
        let cx = |noconvert| Cx {
            zone: crate::timefmt::Zone::Utc,
            now: 0,
            noconvert,
        };
        assert_eq!(units(&cx(false), 16_384, 'M'), "16G");
        assert_eq!(
            units(&cx(true), 16_384, 'M'),
            "16384M",
            "--noconvert keeps the unit"
        );
        assert_eq!(units(&cx(true), 67_612_672, '\0'), "67612672");
    }

    #[test]
    fn cancelled_states_name_the_canceller() {
        let c = JobState::Cancelled.stored();
        assert_eq!(state_text(c, Some(1000)), "CANCELLED by 1000");
        assert_eq!(state_text(c, None), "CANCELLED");
        assert_eq!(
            state_text(JobState::Completed.stored(), Some(1000)),
            "COMPLETED"
        );
        assert_eq!(state_text(77, None), "UNKNOWN");
    }

    #[test]
    fn derived_exit_codes_skip_the_batch_script() {
        let step = |id, code, signal| StepRecord {
            step_id: id,
            exit_code: code,
            signal,
            ..Default::default()
        };
        let mut j = JobRow::default();
        assert_eq!(derived_exit(&j), "0:0");
        j.steps = vec![step(BATCH_STEP, 9, 0), step(0, 2, 0), step(1, 2, 15)];
        assert_eq!(derived_exit(&j), "2:15");
    }
}
