//! What a new `slurm.conf` changes that the running controller cannot take: the node and
//! partition tables are indexed (bitmaps, allocations, gang rows and queued node commands hold
//! table indexes), so nodes and partitions added, removed, renamed, reordered or resized need
//! a restart, as do the daemon's addresses, its state directory, its identity and the
//! selection rules its allocations were made under.

use crate::conf::{CtldConf, NodeConf, NodeConfState};
use sluice_vocab::hostlist::compress;
use std::collections::{HashMap, HashSet};

/// Each change of `next` against `cur` that needs a controller restart, in words; empty when
/// `next` can be applied live. `order` is the node table's order (by `Weight`, then file
/// order), which `next`'s weights must keep.
pub(crate) fn restart_needed(cur: &CtldConf, next: &CtldConf, order: &[&str]) -> Vec<String> {
    let mut out = keys(cur, next);
    nodes(cur, next, order, &mut out);
    partitions(cur, next, &mut out);
    out
}

/// The controller keys read once at start.
fn keys(cur: &CtldConf, next: &CtldConf) -> Vec<String> {
    let opt = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or_else(|| "(null)".to_string(), |p| p.display().to_string())
    };
    let hosts = |c: &CtldConf| {
        c.ctld_hosts
            .iter()
            .map(|h| match &h.addr {
                Some(a) => format!("{}({a})", h.name),
                None => h.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let values = |c: &CtldConf| -> Vec<(&'static str, String)> {
        vec![
            ("ClusterName", c.cluster_name.clone()),
            ("SlurmctldHost", hosts(c)),
            ("SlurmctldPort", c.ctld_port.to_string()),
            ("SlurmdPort", c.slurmd_port.to_string()),
            (
                "StateSaveLocation",
                c.state_save_location.display().to_string(),
            ),
            (
                "AccountingStorageHost",
                c.accounting_storage_host
                    .clone()
                    .unwrap_or_else(|| "(null)".into()),
            ),
            (
                "AccountingStoragePort",
                c.accounting_storage_port.to_string(),
            ),
            ("SlurmUser", c.slurm_user.clone()),
            ("SlurmctldLogFile", opt(&c.slurmctld_log_file)),
            ("SlurmctldPidFile", opt(&c.slurmctld_pid_file)),
            // Node daemons take their heartbeat interval from it when they register.
            ("SlurmdTimeout", c.slurmd_timeout.to_string()),
            ("SelectType", c.select.select_type_name().to_string()),
            ("SelectTypeParameters", c.select.params_name()),
            ("PreemptMode", c.select.preempt_mode.display()),
            // The state store is opened with it.
            ("SluiceStateSync", c.state_sync.name().to_string()),
        ]
    };
    values(cur)
        .into_iter()
        .zip(values(next))
        .filter(|(a, b)| a.1 != b.1)
        .map(|((key, old), (_, new))| format!("{key} changed ({old} -> {new})"))
        .collect()
}

/// Whether a configured state makes a different kind of node: `CLOUD` nodes are power
/// managed from the start, `FUTURE` nodes are never used.
fn kind(s: NodeConfState) -> u8 {
    match s {
        NodeConfState::Cloud => 1,
        NodeConfState::Future => 2,
        _ => 0,
    }
}

fn nodes(cur: &CtldConf, next: &CtldConf, order: &[&str], out: &mut Vec<String>) {
    let old: HashMap<&str, &NodeConf> = cur.nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let new: HashSet<&str> = next.nodes.iter().map(|n| n.name.as_str()).collect();
    let added: Vec<&str> = next
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .filter(|n| !old.contains_key(n))
        .collect();
    let removed: Vec<&str> = cur
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .filter(|n| !new.contains(n))
        .collect();
    if !added.is_empty() {
        out.push(format!("nodes {} added", compress(&added)));
    }
    if !removed.is_empty() {
        out.push(format!("nodes {} removed", compress(&removed)));
    }
    type Field = (&'static str, fn(&NodeConf) -> String);
    let fields: [Field; 9] = [
        ("CPUs", |n| n.cpus.to_string()),
        ("Sockets", |n| n.sockets.to_string()),
        ("CoresPerSocket", |n| n.cores_per_socket.to_string()),
        ("ThreadsPerCore", |n| n.threads_per_core.to_string()),
        ("RealMemory", |n| n.real_memory_mb.to_string()),
        ("TmpDisk", |n| n.tmp_disk_mb.to_string()),
        ("NodeAddr", |n| n.addr.clone()),
        ("Port", |n| n.port.to_string()),
        ("State=CLOUD/FUTURE", |n| kind(n.state).to_string()),
    ];
    for (key, value) in fields {
        let changed: Vec<&str> = next
            .nodes
            .iter()
            .filter(|n| {
                old.get(n.name.as_str())
                    .is_some_and(|o| value(o) != value(n))
            })
            .map(|n| n.name.as_str())
            .collect();
        if !changed.is_empty() {
            out.push(format!("{key} changed on {}", compress(&changed)));
        }
    }
    if added.is_empty() && removed.is_empty() {
        // The table's order is the allocation order: lowest Weight first, then file order.
        let mut sorted: Vec<&NodeConf> = next.nodes.iter().collect();
        sorted.sort_by_key(|n| n.weight);
        if !sorted
            .iter()
            .map(|n| n.name.as_str())
            .eq(order.iter().copied())
        {
            out.push("Weight changes reorder the nodes (they are allocated by Weight)".into());
        }
    }
}

fn partitions(cur: &CtldConf, next: &CtldConf, out: &mut Vec<String>) {
    let old: Vec<&str> = cur.partitions.iter().map(|p| p.name.as_str()).collect();
    let new: Vec<&str> = next.partitions.iter().map(|p| p.name.as_str()).collect();
    let added: Vec<&str> = new.iter().copied().filter(|n| !old.contains(n)).collect();
    let removed: Vec<&str> = old.iter().copied().filter(|n| !new.contains(n)).collect();
    if !added.is_empty() {
        out.push(format!("partitions {} added", added.join(",")));
    }
    if !removed.is_empty() {
        out.push(format!("partitions {} removed", removed.join(",")));
    }
    if added.is_empty() && removed.is_empty() && old != new {
        out.push("partitions reordered".into());
    }
    for p in &next.partitions {
        let Some(o) = cur.partitions.iter().find(|o| o.name == p.name) else {
            continue;
        };
        let members = |names: &[String]| {
            let mut v = names.to_vec();
            v.sort();
            v
        };
        if members(&o.nodes) != members(&p.nodes) {
            out.push(format!("Nodes of partition {} changed", p.name));
        }
    }
}
