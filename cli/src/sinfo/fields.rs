//! sinfo's `-o` fields and the node groups they are shown for. A group is a set of nodes of
//! one partition that look the same in every non-aggregate field of the format; aggregate
//! fields (`%N %D %C %F %A`) sum over its nodes.

use sluice_vocab::hostlist::compress;
use sluice_vocab::{NodeFlags, NodeState};
use sluice_wire::proto::{NodeInfo, PartitionInfo};

use crate::cmdutil::user_name;
use crate::timefmt::{self, Zone};

/// Nodes shown on one line, with their partition (none in the reasons list).
#[derive(Debug, Clone)]
pub struct Group<'a> {
    /// The partition, if the line is about one.
    pub part: Option<&'a PartitionInfo>,
    /// The nodes, the first one standing for the non-aggregate fields.
    pub nodes: Vec<&'a NodeInfo>,
    /// The cluster the line is about (`%V`; federated and `-M` views).
    pub cluster: &'a str,
}

impl Group<'_> {
    fn first(&self) -> Option<&NodeInfo> {
        self.nodes.first().copied()
    }
}

/// A node's displayed state, from the state table.
pub fn node_state(n: &NodeInfo) -> NodeState {
    let base = NodeState::parse(&n.state).unwrap_or(NodeState::Unknown);
    NodeState::combine(base, n.drain, n.completing, n.invalid)
}

/// A node's suffix flags.
pub fn node_flags(n: &NodeInfo) -> NodeFlags {
    NodeFlags {
        not_responding: n.not_responding,
        powered_down: n.powered_down,
        powering_up: n.powering_up,
        powering_down: n.powering_down,
        power_down_requested: n.power_down_requested,
        ..NodeFlags::default()
    }
}

/// The numeric state Slurm sorts by (base value plus DRAIN/COMPLETING/NO_RESPOND flags).
pub fn state_rank(n: &NodeInfo) -> u32 {
    let base = match NodeState::parse(&n.state) {
        Some(NodeState::Down) => 1,
        Some(NodeState::Idle) => 2,
        Some(NodeState::Allocated) => 3,
        Some(NodeState::Mixed) => 5,
        Some(NodeState::Future) => 6,
        _ => 0,
    };
    base + if n.drain { 0x200 } else { 0 }
        + if n.completing { 0x400 } else { 0 }
        + if n.not_responding { 0x800 } else { 0 }
}

fn is_alloc(n: &NodeInfo) -> bool {
    matches!(
        NodeState::parse(&n.state),
        Some(NodeState::Allocated | NodeState::Mixed)
    )
}

fn is_other(n: &NodeInfo) -> bool {
    n.drain
        || n.not_responding
        || matches!(
            NodeState::parse(&n.state),
            Some(NodeState::Down | NodeState::Future | NodeState::Unknown) | None
        )
}

/// `A/I/O/T` counts; `weight` gives each node's share (1 for nodes, CPUs for `%C`).
fn aiot(g: &Group, weight: impl Fn(&NodeInfo) -> (u64, u64)) -> String {
    let (mut a, mut i, mut o, mut t) = (0u64, 0u64, 0u64, 0u64);
    for n in &g.nodes {
        let (alloc, total) = weight(n);
        t += total;
        if is_other(n) {
            o += total;
        } else {
            a += alloc;
            i += total - alloc.min(total);
        }
    }
    format!("{a}/{i}/{o}/{t}")
}

/// How one field is shown.
pub struct Field {
    /// The `-o` letter.
    pub letter: char,
    /// The header.
    pub header: &'static str,
    /// Whether the value sums over the group (not part of what groups nodes).
    pub aggregate: bool,
    /// The value.
    pub value: fn(&Group, Zone) -> String,
}

const fn f(
    letter: char,
    header: &'static str,
    aggregate: bool,
    value: fn(&Group, Zone) -> String,
) -> Field {
    Field {
        letter,
        header,
        aggregate,
        value,
    }
}

fn node_str(g: &Group, pick: fn(&NodeInfo) -> String) -> String {
    g.first().map(pick).unwrap_or_default()
}

/// Every field sinfo knows.
pub const FIELDS: &[Field] = &[
    // Slurm abbreviates INACTIVE to `inact` (the column is 5 wide).
    f('a', "AVAIL", false, |g, _| {
        g.part.map_or("n/a".into(), |p| match p.state.as_str() {
            "INACTIVE" => "inact".into(),
            s => s.to_ascii_lowercase(),
        })
    }),
    f('A', "NODES(A/I)", true, |g, _| {
        let a = g
            .nodes
            .iter()
            .filter(|n| is_alloc(n) && !is_other(n))
            .count();
        let i = g
            .nodes
            .iter()
            .filter(|n| !is_alloc(n) && !is_other(n))
            .count();
        format!("{a}/{i}")
    }),
    f('c', "CPUS", false, |g, _| {
        node_str(g, |n| n.cpus.to_string())
    }),
    f('C', "CPUS(A/I/O/T)", true, |g, _| {
        aiot(g, |n| (u64::from(n.alloc_cpus), u64::from(n.cpus)))
    }),
    f('d', "TMP_DISK", false, |g, _| {
        node_str(g, |n| n.tmp_disk_mb.to_string())
    }),
    f('D', "NODES", true, |g, _| g.nodes.len().to_string()),
    f('E', "REASON", false, |g, _| {
        node_str(g, |n| {
            if n.reason.is_empty() {
                "none".into()
            } else {
                n.reason.clone()
            }
        })
    }),
    f('f', "AVAIL_FEATURES", false, |g, _| {
        node_str(g, |n| {
            if n.features.is_empty() {
                "(null)".into()
            } else {
                n.features.join(",")
            }
        })
    }),
    f('F', "NODES(A/I/O/T)", true, |g, _| {
        aiot(g, |n| (u64::from(is_alloc(n)), 1))
    }),
    f('g', "GROUPS", false, |g, _| {
        g.part.map_or("n/a".into(), |p| {
            if p.allow_groups.is_empty() {
                "all".into()
            } else {
                p.allow_groups.join(",")
            }
        })
    }),
    f('h', "OVERSUBSCRIBE", false, |g, _| {
        g.part.map_or("n/a".into(), |p| {
            if p.over_subscribe.is_empty() {
                "NO".into()
            } else {
                p.over_subscribe.to_ascii_uppercase()
            }
        })
    }),
    f('H', "TIMESTAMP", false, |g, z| {
        g.first().map_or_else(String::new, |n| {
            timefmt::timestamp_or(n.reason_time, z, "Unknown")
        })
    }),
    f('l', "TIMELIMIT", false, |g, _| {
        g.part
            .map_or("n/a".into(), |p| timefmt::limit_sinfo(p.max_time_min))
    }),
    f('m', "MEMORY", false, |g, _| {
        node_str(g, |n| n.real_memory_mb.to_string())
    }),
    f('n', "HOSTNAMES", true, |g, _| {
        compress(&g.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>())
    }),
    f('N', "NODELIST", true, |g, _| {
        compress(&g.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>())
    }),
    f('o', "NODE_ADDR", true, |g, _| {
        compress(&g.nodes.iter().map(|n| n.addr.as_str()).collect::<Vec<_>>())
    }),
    f('O', "CPU_LOAD", false, |_, _| "N/A".into()),
    f('P', "PARTITION", false, |g, _| {
        g.part.map_or("n/a".into(), |p| {
            if p.is_default {
                format!("{}*", p.name)
            } else {
                p.name.clone()
            }
        })
    }),
    f('r', "ROOT", false, |g, _| {
        g.part.map_or("n/a".into(), |_| "no".into())
    }),
    f('R', "PARTITION", false, |g, _| {
        g.part.map_or("n/a".into(), |p| p.name.clone())
    }),
    f('s', "JOB_SIZE", false, |g, _| {
        g.part.map_or("n/a".into(), |p| {
            if p.max_nodes < 0 {
                "1-infinite".into()
            } else {
                format!("1-{}", p.max_nodes)
            }
        })
    }),
    f('t', "STATE", false, |g, _| {
        node_str(g, |n| {
            format!("{}{}", node_state(n).short_name(), node_flags(n).suffix())
        })
    }),
    f('T', "STATE", false, |g, _| {
        node_str(g, |n| {
            format!(
                "{}{}",
                node_state(n).long_name().to_ascii_lowercase(),
                node_flags(n).suffix()
            )
        })
    }),
    f('u', "USER", false, |g, _| {
        node_str(g, |n| {
            if n.reason_time > 0 {
                user_name(n.reason_uid)
            } else {
                "Unknown".into()
            }
        })
    }),
    f('U', "USER", false, |g, _| {
        node_str(g, |n| {
            if n.reason_time > 0 {
                format!("{}({})", user_name(n.reason_uid), n.reason_uid)
            } else {
                "Unknown".into()
            }
        })
    }),
    f('V', "CLUSTER", false, |g, _| g.cluster.to_string()),
    f('w', "WEIGHT", false, |g, _| {
        node_str(g, |n| n.weight.to_string())
    }),
    f('z', "S:C:T", false, |g, _| {
        node_str(g, |n| {
            // A controller that does not say: one socket per CPU (Slurm's for CPUs alone).
            match n.sockets {
                0 => format!("{}:1:1", n.cpus),
                s => format!(
                    "{s}:{}:{}",
                    n.cores_per_socket.max(1),
                    n.threads_per_core.max(1)
                ),
            }
        })
    }),
];

/// The field for a letter.
pub fn by_letter(name: &str) -> Option<&'static Field> {
    let mut chars = name.chars();
    let (c, rest) = (chars.next()?, chars.next());
    if rest.is_some() {
        return None;
    }
    FIELDS.iter().find(|f| f.letter == c)
}
