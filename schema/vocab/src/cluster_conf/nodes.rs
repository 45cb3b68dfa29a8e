//! `NodeName=` lines: hostlists of nodes with their configured (minimum) resources.
//!
//! `NodeName=DEFAULT` sets values for the lines after it. `CPUs` defaults to
//! `Boards*Sockets*CoresPerSocket*ThreadsPerCore` when not given. `NodeAddr`, when given, must
//! expand to as many addresses as there are names.

use super::{ConfWarning, non_empty, positive, warning};
use crate::conf::{ConfError, ConfFile, Pair};
use crate::hostlist::Hostlist;
use std::collections::HashSet;

/// The `State=` a node is configured with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeConfState {
    /// `UNKNOWN` (default): usable once it registers.
    Unknown,
    /// `IDLE`: treated like UNKNOWN until it registers.
    Idle,
    /// `DOWN`: not usable until an admin resumes it.
    Down,
    /// `DRAIN`: registers but takes no work.
    Drain,
    /// `FUTURE`: defined but not yet present.
    Future,
    /// `CLOUD`: powered down until needed (power save).
    Cloud,
}

/// One node as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConf {
    /// The node's name.
    pub name: String,
    /// Where its node daemon listens (defaults to the name).
    pub addr: String,
    /// Its node daemon's port (`Port=`, default `SlurmdPort`).
    pub port: u16,
    /// CPUs it must have.
    pub cpus: u32,
    /// Sockets (`Boards` x `Sockets`; with only `CPUs` given, one per CPU, as Slurm infers).
    pub sockets: u32,
    /// `CoresPerSocket` (1 unless given).
    pub cores_per_socket: u32,
    /// `ThreadsPerCore` (1 unless given).
    pub threads_per_core: u32,
    /// Memory in MB it must have (`RealMemory`, default 1).
    pub real_memory_mb: u64,
    /// Temporary disk in MB it must have (`TmpDisk`, default 0).
    pub tmp_disk_mb: u64,
    /// Lower weights are allocated first (`Weight`, default 1).
    pub weight: u32,
    /// Its features (`Feature`/`Features`, comma separated).
    pub features: Vec<String>,
    /// Its configured state.
    pub state: NodeConfState,
    /// `Reason=` for a node configured DOWN or DRAIN.
    pub reason: Option<String>,
}

/// Values a line may set; `NodeName=DEFAULT` lines update the running defaults.
#[derive(Debug, Clone)]
struct Values {
    cpus: Option<u32>,
    boards: u32,
    sockets: u32,
    cores: u32,
    threads: u32,
    /// Whether any of `Boards`, `Sockets`, `CoresPerSocket`, `ThreadsPerCore` was given.
    topology: bool,
    real_memory_mb: u64,
    tmp_disk_mb: u64,
    weight: u32,
    features: Vec<String>,
    state: NodeConfState,
    reason: Option<String>,
    port: Option<u16>,
}

impl Default for Values {
    fn default() -> Self {
        Self {
            cpus: None,
            boards: 1,
            sockets: 1,
            cores: 1,
            threads: 1,
            topology: false,
            real_memory_mb: 1,
            tmp_disk_mb: 0,
            weight: 1,
            features: Vec::new(),
            state: NodeConfState::Unknown,
            reason: None,
            port: None,
        }
    }
}

/// Reads every `NodeName=` line, in order.
pub(crate) fn read(
    file: &ConfFile,
    lines: &[&[Pair]],
    default_port: u16,
    warnings: &mut Vec<ConfWarning>,
) -> Result<Vec<NodeConf>, ConfError> {
    let mut defaults = Values::default();
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    for line in lines {
        let Some((head, rest)) = line.split_first() else {
            continue;
        };
        let mut values = defaults.clone();
        let mut addr_pair = None;
        for p in rest {
            if p.is("NodeAddr") {
                addr_pair = Some(p);
            } else if !apply(file, p, &mut values)? {
                warnings.push(warning(file, p));
            }
        }
        if head.value.eq_ignore_ascii_case("DEFAULT") {
            defaults = values;
            continue;
        }
        let names: Vec<String> = Hostlist::parse(non_empty(file, head)?)
            .map_err(|e| file.bad_value(head, e))?
            .iter()
            .collect();
        let addrs = match addr_pair {
            None => names.clone(),
            Some(p) => {
                let addrs: Vec<String> = Hostlist::parse(non_empty(file, p)?)
                    .map_err(|e| file.bad_value(p, e))?
                    .iter()
                    .collect();
                if addrs.len() != names.len() {
                    let why = format!("{} addresses for {} nodes", addrs.len(), names.len());
                    return Err(file.bad_value(p, why));
                }
                addrs
            }
        };
        let cpus = values.cpus.unwrap_or_else(|| {
            values
                .boards
                .saturating_mul(values.sockets)
                .saturating_mul(values.cores)
                .saturating_mul(values.threads)
        });
        // Only CPUs given: each CPU is a socket of one core of one thread (Slurm's inference).
        let (sockets, cores_per_socket, threads_per_core) = match (values.cpus, values.topology) {
            (Some(cpus), false) => (cpus, 1, 1),
            _ => (
                values.boards.saturating_mul(values.sockets),
                values.cores,
                values.threads,
            ),
        };
        for (name, addr) in names.into_iter().zip(addrs) {
            if !seen.insert(name.clone()) {
                return Err(file.bad_value(head, format!("duplicate node name {name}")));
            }
            nodes.push(NodeConf {
                name,
                addr,
                port: values.port.unwrap_or(default_port),
                cpus,
                sockets,
                cores_per_socket,
                threads_per_core,
                real_memory_mb: values.real_memory_mb,
                tmp_disk_mb: values.tmp_disk_mb,
                weight: values.weight,
                features: values.features.clone(),
                state: values.state,
                reason: values.reason.clone(),
            });
        }
    }
    Ok(nodes)
}

/// Applies one key of a node line; `false` when the key is unknown.
fn apply(file: &ConfFile, p: &Pair, v: &mut Values) -> Result<bool, ConfError> {
    match p.key.to_ascii_lowercase().as_str() {
        "cpus" | "procs" => v.cpus = Some(positive(file, p)?),
        "boards" => (v.boards, v.topology) = (positive(file, p)?, true),
        "sockets" => (v.sockets, v.topology) = (positive(file, p)?, true),
        "corespersocket" => (v.cores, v.topology) = (positive(file, p)?, true),
        "threadspercore" => (v.threads, v.topology) = (positive(file, p)?, true),
        "realmemory" => v.real_memory_mb = file.number(p)?,
        "tmpdisk" => v.tmp_disk_mb = file.number(p)?,
        "weight" => v.weight = file.number(p)?,
        "port" => v.port = Some(file.number(p)?),
        "reason" => v.reason = Some(p.value.clone()),
        "feature" | "features" => v.features = features(file, p)?,
        "state" => v.state = state(file, p)?,
        "nodehostname" => {}
        _ => return Ok(false),
    }
    Ok(true)
}

fn features(file: &ConfFile, p: &Pair) -> Result<Vec<String>, ConfError> {
    let mut out = Vec::new();
    for f in p.value.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        if !f
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
        {
            return Err(file.bad_value(p, format!("invalid feature name \"{f}\"")));
        }
        if !out.iter().any(|o| o == f) {
            out.push(f.to_string());
        }
    }
    Ok(out)
}

fn state(file: &ConfFile, p: &Pair) -> Result<NodeConfState, ConfError> {
    Ok(match p.value.to_ascii_uppercase().as_str() {
        "UNKNOWN" => NodeConfState::Unknown,
        "IDLE" => NodeConfState::Idle,
        "DOWN" => NodeConfState::Down,
        "DRAIN" => NodeConfState::Drain,
        "FUTURE" => NodeConfState::Future,
        "CLOUD" => NodeConfState::Cloud,
        _ => return Err(file.bad_value(p, "expected UNKNOWN, IDLE, DOWN, DRAIN, FUTURE or CLOUD")),
    })
}
