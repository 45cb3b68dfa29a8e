//! `PartitionName=` lines: named sets of nodes with limits and access rules.
//!
//! `PartitionName=DEFAULT` sets values for the lines after it. `Nodes=` is a hostlist of
//! configured nodes or `ALL`; an unknown node name is an error naming file, line and key.

use super::timefmt::{TimeLimit, parse_time_limit};
use super::{ConfWarning, NodeConf, PartPower, non_empty, warning};
use crate::conf::{ConfError, ConfFile, Pair};
use crate::hostlist::Hostlist;
use std::collections::HashSet;

/// A partition's `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartState {
    /// `UP` (default): jobs are accepted and scheduled.
    Up,
    /// `DOWN`: jobs are accepted but not started (reason `PartitionDown`).
    Down,
    /// `DRAIN`: no new jobs; queued jobs still run.
    Drain,
    /// `INACTIVE`: no new jobs and nothing is started.
    Inactive,
}

/// A partition's `OverSubscribe=` (Slurm's rules: `YES`/`FORCE` default to 4 jobs per resource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverSubscribe {
    /// `NO` (default): one job per allocated resource.
    No,
    /// `EXCLUSIVE`: whole nodes per job.
    Exclusive,
    /// `YES[:n]`: jobs may share when they ask to.
    Yes(u16),
    /// `FORCE[:n]`: jobs always share (gang scheduling timeslices them).
    Force(u16),
}

/// Who may use a partition besides `AllowGroups` (the job's account and QOS), and the QOS
/// whose limits every job in it is held to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartAccess {
    /// `AllowAccounts`; `None` for `ALL` (default). When set, `DenyAccounts` is not used.
    pub allow_accounts: Option<Vec<String>>,
    /// `DenyAccounts` (default none).
    pub deny_accounts: Vec<String>,
    /// `AllowQos`; `None` for `ALL` (default). When set, `DenyQos` is not used.
    pub allow_qos: Option<Vec<String>>,
    /// `DenyQos` (default none).
    pub deny_qos: Vec<String>,
    /// `RootOnly=YES`: only root and the SlurmUser may submit (default `NO`).
    pub root_only: bool,
    /// `QOS=`: the partition's QOS (lower case), whose limits hold every job in the partition
    /// besides its own QOS's, and come first (unless the job's QOS has `OverPartQOS`).
    pub qos: Option<String>,
}

impl PartAccess {
    /// Whether a job charged to `account` may use the partition (Slurm's rule: with
    /// `AllowAccounts` the account must be listed, an unknown one is refused; else it must not
    /// be in `DenyAccounts`, an unknown one passing).
    pub fn allows_account(&self, account: Option<&str>) -> bool {
        match (&self.allow_accounts, account) {
            (Some(allowed), Some(a)) => allowed.iter().any(|x| x == a),
            (Some(_), None) => false,
            (None, Some(a)) => !self.deny_accounts.iter().any(|x| x == a),
            (None, None) => true,
        }
    }

    /// Whether a job of QOS `qos` may use the partition (`AllowQos` lists it, or `DenyQos`
    /// does not).
    pub fn allows_qos(&self, qos: &str) -> bool {
        match &self.allow_qos {
            Some(allowed) => allowed.iter().any(|x| x.eq_ignore_ascii_case(qos)),
            None => !self.deny_qos.iter().any(|x| x.eq_ignore_ascii_case(qos)),
        }
    }
}

/// One partition as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionConf {
    /// The partition's name.
    pub name: String,
    /// Its node names, in configuration order.
    pub nodes: Vec<String>,
    /// Whether jobs without `-p` go here.
    pub default: bool,
    /// `MaxTime` (default `UNLIMITED`).
    pub max_time: TimeLimit,
    /// `MaxNodes` per job; `None` when unlimited (default).
    pub max_nodes: Option<u32>,
    /// `State` (default `UP`).
    pub state: PartState,
    /// `OverSubscribe` (default `NO`).
    pub oversubscribe: OverSubscribe,
    /// `AllowGroups` group names; `None` for `ALL` (default).
    pub allow_groups: Option<Vec<String>>,
    /// `AllowAccounts`, `DenyAccounts`, `AllowQos`, `DenyQos`.
    pub access: PartAccess,
    /// Power save settings (`SuspendTime`, `PowerDownOnIdle`, ...).
    pub power: PartPower,
    /// `PriorityJobFactor` (default 1): the partition factor of its jobs' priority.
    pub priority_job_factor: u16,
    /// `PriorityTier` (default 1): jobs of a higher tier are considered first.
    pub priority_tier: u16,
}

#[derive(Debug, Clone)]
struct Values {
    nodes: Option<(Pair, bool)>,
    default: bool,
    max_time: TimeLimit,
    max_nodes: Option<u32>,
    state: PartState,
    oversubscribe: OverSubscribe,
    allow_groups: Option<Vec<String>>,
    access: PartAccess,
    power: PartPower,
    priority_job_factor: u16,
    priority_tier: u16,
}

/// Reads every `PartitionName=` line, in order, resolving `Nodes=` against `nodes`.
pub(crate) fn read(
    file: &ConfFile,
    lines: &[&[Pair]],
    nodes: &[NodeConf],
    warnings: &mut Vec<ConfWarning>,
) -> Result<Vec<PartitionConf>, ConfError> {
    let known: HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let mut defaults = Values {
        nodes: None,
        default: false,
        max_time: TimeLimit::Unlimited,
        max_nodes: None,
        state: PartState::Up,
        oversubscribe: OverSubscribe::No,
        allow_groups: None,
        access: PartAccess::default(),
        power: PartPower::default(),
        priority_job_factor: 1,
        priority_tier: 1,
    };
    let mut parts: Vec<PartitionConf> = Vec::new();
    for line in lines {
        let Some((head, rest)) = line.split_first() else {
            continue;
        };
        let mut v = defaults.clone();
        for p in rest {
            if !apply(file, p, &mut v)? {
                warnings.push(warning(file, p));
            }
        }
        let name = non_empty(file, head)?;
        if name.eq_ignore_ascii_case("DEFAULT") {
            defaults = v;
            continue;
        }
        if parts.iter().any(|q| q.name == name) {
            return Err(file.bad_value(head, format!("duplicate partition name {name}")));
        }
        let node_names = match &v.nodes {
            None => Vec::new(),
            Some((_, true)) => nodes.iter().map(|n| n.name.clone()).collect(),
            Some((pair, false)) => {
                let list = Hostlist::parse(&pair.value).map_err(|e| file.bad_value(pair, e))?;
                let mut names = Vec::new();
                for n in list.uniq().iter() {
                    if !known.contains(n.as_str()) {
                        return Err(file.bad_value(pair, format!("unknown node {n}")));
                    }
                    names.push(n);
                }
                names
            }
        };
        parts.push(PartitionConf {
            name: name.to_string(),
            nodes: node_names,
            default: v.default,
            max_time: v.max_time,
            max_nodes: v.max_nodes,
            state: v.state,
            oversubscribe: v.oversubscribe,
            allow_groups: v.allow_groups,
            access: v.access,
            power: v.power,
            priority_job_factor: v.priority_job_factor,
            priority_tier: v.priority_tier,
        });
    }
    Ok(parts)
}

fn apply(file: &ConfFile, p: &Pair, v: &mut Values) -> Result<bool, ConfError> {
    let upper = p.value.trim().to_ascii_uppercase();
    match p.key.to_ascii_lowercase().as_str() {
        "nodes" => v.nodes = Some((p.clone(), upper == "ALL")),
        "default" => v.default = yes_no(file, p)?,
        "maxtime" => v.max_time = parse_time_limit(&p.value).map_err(|e| file.bad_value(p, e))?,
        "maxnodes" => {
            v.max_nodes = match upper.as_str() {
                "UNLIMITED" | "INFINITE" => None,
                _ => Some(file.number(p)?),
            }
        }
        "state" => {
            v.state = match upper.as_str() {
                "UP" => PartState::Up,
                "DOWN" => PartState::Down,
                "DRAIN" => PartState::Drain,
                "INACTIVE" => PartState::Inactive,
                _ => return Err(file.bad_value(p, "expected UP, DOWN, DRAIN or INACTIVE")),
            }
        }
        "oversubscribe" | "shared" => v.oversubscribe = oversubscribe(file, p, &upper)?,
        "allowgroups" => v.allow_groups = name_list(file, p, "group")?,
        "allowaccounts" => v.access.allow_accounts = name_list(file, p, "account")?,
        "denyaccounts" => v.access.deny_accounts = names(file, p, "account")?,
        "allowqos" => v.access.allow_qos = name_list(file, p, "QOS")?,
        "denyqos" => v.access.deny_qos = names(file, p, "QOS")?,
        "rootonly" => v.access.root_only = yes_no(file, p)?,
        "qos" => v.access.qos = Some(non_empty(file, p)?.to_ascii_lowercase()),
        "priorityjobfactor" => v.priority_job_factor = file.number(p)?,
        "prioritytier" => v.priority_tier = file.number(p)?,
        // Slurm's older single key sets both.
        "priority" => {
            v.priority_job_factor = file.number(p)?;
            v.priority_tier = v.priority_job_factor;
        }
        _ => return v.power.apply(file, p),
    }
    Ok(true)
}

/// `ALL` (`None`) or a comma-separated list of names.
fn name_list(file: &ConfFile, p: &Pair, what: &str) -> Result<Option<Vec<String>>, ConfError> {
    if p.value.trim().eq_ignore_ascii_case("ALL") {
        return Ok(None);
    }
    names(file, p, what).map(Some)
}

/// A comma-separated list of at least one name.
fn names(file: &ConfFile, p: &Pair, what: &str) -> Result<Vec<String>, ConfError> {
    let list: Vec<String> = p
        .value
        .split(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_string)
        .collect();
    if list.is_empty() {
        return Err(file.bad_value(p, format!("expected ALL or {what} names")));
    }
    Ok(list)
}

fn yes_no(file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
    match p.value.trim().to_ascii_uppercase().as_str() {
        "YES" => Ok(true),
        "NO" => Ok(false),
        _ => Err(file.bad_value(p, "expected YES or NO")),
    }
}

fn oversubscribe(file: &ConfFile, p: &Pair, upper: &str) -> Result<OverSubscribe, ConfError> {
    let (word, count) = match upper.split_once(':') {
        Some((w, n)) => {
            let n: u16 = n.parse().map_err(|e| file.bad_value(p, e))?;
            (w, Some(n))
        }
        None => (upper, None),
    };
    // Slurm: `YES:n`/`FORCE:n` with n below 2 (FORCE: below 1) mean NO.
    Ok(match (word, count) {
        ("NO", None) => OverSubscribe::No,
        ("EXCLUSIVE", None) => OverSubscribe::Exclusive,
        ("YES", None) => OverSubscribe::Yes(4),
        ("YES", Some(n)) if n <= 1 => OverSubscribe::No,
        ("YES", Some(n)) => OverSubscribe::Yes(n),
        ("FORCE", None) => OverSubscribe::Force(4),
        ("FORCE", Some(0)) => OverSubscribe::No,
        ("FORCE", Some(n)) => OverSubscribe::Force(n),
        _ => return Err(file.bad_value(p, "expected NO, EXCLUSIVE, YES[:n] or FORCE[:n]")),
    })
}
