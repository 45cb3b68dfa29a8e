//! The soak's verdict, a pure function of what the driver saw at the end: the ledger of
//! submissions, every accounting record (`sacct -D -X -P -n`), what is still queued, and the
//! run markers the jobs wrote.
//!
//! Legitimate outcomes of an accepted job: exactly one final record (any state but REQUEUED
//! and NODE_FAIL), COMPLETED with `0:0` when its script exits 0, FAILED with `K:0` when it
//! exits K. Before it, records of earlier runs are allowed only as NODE_FAIL or REQUEUED:
//! a node daemon that is killed and restarted at once keeps its jobs (their supervisor
//! outlives it), but one away past `SlurmdTimeout` gets its node declared DOWN, and its jobs
//! end that run NODE_FAIL and are requeued (batch jobs are requeueable), so a later run must
//! end with the true code. A final NODE_FAIL, a CANCELLED or a second final record is a
//! violation. A job's script may have started at most once per record (its marker lines).

use std::collections::BTreeMap;
use std::fmt;

use super::load::{Ledger, seq_of};

/// One accounting record: `JobIDRaw|JobName|State|ExitCode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The job id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its state (`CANCELLED by 0` is cut to its first word).
    pub state: String,
    /// `code:signal`.
    pub exit: String,
}

/// Parses `sacct -P -n -o JobIDRaw,JobName,State,ExitCode` lines (others are skipped).
pub fn parse_records(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.split('|');
            let id = f.next()?.trim().parse().ok()?;
            let name = f.next()?.to_string();
            let state = f.next()?.split_whitespace().next()?.to_string();
            let exit = f.next()?.trim().to_string();
            Some(Record {
                id,
                name,
                state,
                exit,
            })
        })
        .collect()
}

/// What the soak found.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    /// Accepted jobs.
    pub accepted: usize,
    /// Submissions refused (the client was told so).
    pub refused: usize,
    /// Submissions whose outcome was never known.
    pub unknown: usize,
    /// Records of earlier runs (NODE_FAIL, REQUEUED): the requeues the faults caused.
    pub requeues: usize,
    /// Accepted jobs with no final record (never ended, or ended only by a fault): `(id, what
    /// sacct and squeue show)`.
    pub lost: Vec<(u32, String)>,
    /// Accepted jobs with more than one final record.
    pub duplicated: Vec<(u32, Vec<String>)>,
    /// Accepted jobs whose final record is not their true outcome: `(id, wanted, got)`.
    pub wrong: Vec<(u32, String, String)>,
    /// Refused submissions that show up anyway (in sacct, squeue or as a run): by seq, with
    /// what their client was told.
    pub ghosts: Vec<(u32, String)>,
    /// Jobs whose script started more often than they have records.
    pub ran_twice: Vec<(u32, usize, usize)>,
    /// Daemons that died without being killed, with their log tail.
    pub died: Vec<(String, String)>,
}

impl Verdict {
    /// Whether every rule held.
    pub fn ok(&self) -> bool {
        self.lost.is_empty()
            && self.duplicated.is_empty()
            && self.wrong.is_empty()
            && self.ghosts.is_empty()
            && self.ran_twice.is_empty()
            && self.died.is_empty()
    }
}

/// Whether a record closes an earlier run rather than the job.
fn earlier_run(state: &str) -> bool {
    matches!(state, "NODE_FAIL" | "REQUEUED")
}

/// Whether a record is a job's final one: an end that is not an earlier run's (a PENDING or
/// RUNNING record is no end at all).
pub fn is_final(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "FAILED"
            | "CANCELLED"
            | "TIMEOUT"
            | "OUT_OF_MEMORY"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "PREEMPTED"
    )
}

/// The final record a job whose script exits `exit` must have: `State|ExitCode`.
pub fn expected(exit: i32) -> String {
    let state = if exit == 0 { "COMPLETED" } else { "FAILED" };
    format!("{state}|{exit}:0")
}

/// Judges the soak. `queued` holds `id|name|state|reason` lines of jobs still queued;
/// `runs` maps a seq to the job ids its marker file holds, one per run started.
pub fn judge(
    ledger: &Ledger,
    records: &[Record],
    queued: &[String],
    runs: &BTreeMap<u32, Vec<u32>>,
) -> Verdict {
    let mut by_id: BTreeMap<u32, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_id.entry(r.id).or_default().push(r);
    }
    let mut v = Verdict {
        accepted: ledger.accepted.len(),
        refused: ledger.refused.len(),
        unknown: ledger.unknown.len(),
        ..Verdict::default()
    };
    for (&id, &(seq, exit)) in &ledger.accepted {
        let rows = by_id.get(&id).cloned().unwrap_or_default();
        v.requeues += rows.iter().filter(|r| earlier_run(&r.state)).count();
        let finals: Vec<&Record> = rows
            .iter()
            .copied()
            .filter(|r| is_final(&r.state))
            .collect();
        match finals.as_slice() {
            [] => {
                let queue: Vec<&String> = queued
                    .iter()
                    .filter(|l| l.split('|').next() == Some(&id.to_string()))
                    .collect();
                let seen: Vec<String> = rows.iter().map(|r| r.state.clone()).collect();
                v.lost
                    .push((id, format!("sacct {seen:?}, squeue {queue:?}")));
            }
            [last] => {
                let got = format!("{}|{}", last.state, last.exit);
                if got != expected(exit) {
                    v.wrong.push((id, expected(exit), got));
                }
            }
            many => v.duplicated.push((
                id,
                many.iter()
                    .map(|r| format!("{}|{}", r.state, r.exit))
                    .collect(),
            )),
        }
        let started = runs
            .get(&seq)
            .map_or(0, |ids| ids.iter().filter(|&&i| i == id).count());
        if started > rows.len().max(1) {
            v.ran_twice.push((id, started, rows.len()));
        }
    }
    for (&seq, told) in &ledger.refused {
        let in_sacct = records.iter().any(|r| seq_of(&r.name) == Some(seq));
        let in_queue = queued
            .iter()
            .any(|l| l.split('|').nth(1).and_then(seq_of) == Some(seq));
        if in_sacct || in_queue || runs.contains_key(&seq) {
            v.ghosts.push((seq, told.clone()));
        }
    }
    v
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "jobs: {} accepted, {} refused, {} unknown; {} earlier runs ended by faults (NODE_FAIL/REQUEUED)",
            self.accepted, self.refused, self.unknown, self.requeues
        )?;
        writeln!(
            f,
            "lost: {}, duplicated: {}, wrong exit codes: {}, refused but ran: {}, ran twice: {}, daemons died: {}",
            self.lost.len(),
            self.duplicated.len(),
            self.wrong.len(),
            self.ghosts.len(),
            self.ran_twice.len(),
            self.died.len()
        )?;
        for (id, seen) in &self.lost {
            writeln!(f, "  lost: job {id}: {seen}")?;
        }
        for (id, rows) in &self.duplicated {
            writeln!(f, "  duplicated: job {id}: {rows:?}")?;
        }
        for (id, want, got) in &self.wrong {
            writeln!(f, "  wrong: job {id}: want {want}, got {got}")?;
        }
        for (seq, told) in &self.ghosts {
            writeln!(f, "  refused but ran: soak-{seq} (sbatch said: {told})")?;
        }
        for (id, started, records) in &self.ran_twice {
            writeln!(
                f,
                "  ran twice: job {id} started {started} times, {records} records"
            )?;
        }
        for (daemon, tail) in &self.died {
            writeln!(f, "  died: {daemon}:\n{tail}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
