//! What `sshare` shows (`ListShares`): every association's fair-share numbers, computed from
//! the same associations and usage as the jobs' fair-share factors (so sshare and sprio
//! agree), with the CPU-minutes the association's running jobs have left.
//!
//! `PrivateData=usage`: a user who is not an operator sees only their own associations and
//! those of the accounts they coordinate (and below), as Slurm's controller answers sshare.

use std::collections::HashMap;

use super::super::{Caller, Core, SimTime};
use sluice_vocab::fairshare::{self, ShareRow};
use sluice_vocab::private_data::Private;
use sluice_vocab::states::JobState;

/// One association's line.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareLine {
    /// The fair-share numbers.
    pub row: ShareRow,
    /// The association's id in the accounting database (0 when not told).
    pub id: u64,
    /// CPU-minutes its running jobs (an account's: its subtree's) have left of their limits.
    pub run_cpu_mins: u64,
}

/// Every association `caller` (named `name`) may see, in sshare's tree order, at `now`.
pub fn lines(core: &Core, caller: Caller, name: Option<&str>, now: SimTime) -> Vec<ShareLine> {
    let algorithm = core.conf.priority.fairshare_algorithm;
    let rows = fairshare::compute_with(algorithm, &core.prio.assocs);
    let run = run_cpu_mins(core, now);
    let hidden = !caller.operator && core.conf.private_data.has(Private::Usage);
    let realm = core.coordinators.get(&caller.uid);
    rows.into_iter()
        .filter(|r| {
            !hidden
                || (!r.user.is_empty() && Some(r.user.as_str()) == name)
                || realm.is_some_and(|accounts| accounts.contains(&r.account))
        })
        .map(|row| {
            let key = (row.account.clone(), row.user.clone());
            ShareLine {
                id: core.prio.assoc_ids.get(&key).copied().unwrap_or(0),
                run_cpu_mins: run.get(&key).copied().unwrap_or(0),
                row,
            }
        })
        .collect()
}

/// CPU-minutes left of each association's running jobs, summed up the account tree.
fn run_cpu_mins(core: &Core, now: SimTime) -> HashMap<(String, String), u64> {
    let parents: HashMap<&str, &str> = core
        .prio
        .assocs
        .iter()
        .filter(|a| a.user.is_empty())
        .map(|a| (a.account.as_str(), a.parent.as_str()))
        .collect();
    let mut out: HashMap<(String, String), u64> = HashMap::new();
    for job in core.jobs().filter(|j| j.state == JobState::Running) {
        let deadline = job.deadline();
        if deadline == SimTime::NEVER {
            continue;
        }
        let cpus: u64 = core
            .cpus_held(job.id, &job.nodes)
            .into_iter()
            .map(u64::from)
            .sum();
        let mins =
            crate::core::qos::charged_secs(core, &job.launch.qos, deadline.since(now)) / 60 * cpus;
        let account = job.launch.account.as_str();
        *out.entry((account.to_string(), job.launch.user.clone()))
            .or_default() += mins;
        // Up the account chain (bounded, in case of a loop in bad data).
        let mut a = account;
        for _ in 0..64 {
            *out.entry((a.to_string(), String::new())).or_default() += mins;
            match parents.get(a) {
                Some(p) if !p.is_empty() => a = p,
                _ => break,
            }
        }
    }
    out
}
