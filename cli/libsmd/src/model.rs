//! A job's allocation and node events as the failure management sees them, converted once from
//! the wire's messages.

use sluice_wire::proto::{
    NonstopAllocation, NonstopEvent, NonstopEventKind, NonstopNode, NonstopNodeState,
};

/// How a node of a job's allocation stands (`SMD_NODE_*` in `smd.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum NodeState {
    /// In service.
    Ok = 0,
    /// Out of service: down or not responding.
    Failed = 1,
    /// Still up but drained or set to fail while the job holds it.
    Failing = 2,
}

impl NodeState {
    /// The word smd prints: `OK`, `FAILED`, `FAILING`.
    pub fn word(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::Failed => "FAILED",
            Self::Failing => "FAILING",
        }
    }
}

/// One node of the allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The node's name.
    pub name: String,
    /// The job's CPUs on it.
    pub cpus: u32,
    /// How it stands.
    pub state: NodeState,
}

/// A job's allocation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    /// The job.
    pub job_id: u32,
    /// The compressed host list (`dario,prometeo`).
    pub node_list: String,
    /// The nodes in node-list order.
    pub nodes: Vec<Node>,
    /// `SLURM_JOB_CPUS_PER_NODE`'s form (`2(x2)`).
    pub cpus_per_node: String,
    /// The time limit in minutes; 0 is unlimited.
    pub time_limit_minutes: u32,
    /// Minutes of extension the job may still ask for.
    pub extend_available_minutes: u32,
    /// Replacements so far.
    pub spares_used: u32,
    /// Hot spares free in the job's partition now.
    pub spares_free: u32,
}

impl Allocation {
    /// The nodes in `state`.
    pub fn in_state(&self, state: NodeState) -> Vec<&Node> {
        self.nodes.iter().filter(|n| n.state == state).collect()
    }
}

/// What happened to the job's nodes (`SMD_EVENT_*` in `smd.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum EventKind {
    /// A kind this library does not know (a newer controller).
    Unknown = 0,
    /// `node` failed.
    Failed = 1,
    /// `node` is failing.
    Failing = 2,
    /// `node` was replaced by `replacement`.
    Replaced = 3,
    /// `node` left the allocation.
    Dropped = 4,
    /// `node` is back in service.
    Recovered = 5,
    /// The time limit was extended.
    TimeExtended = 6,
    /// The job ended; the last event.
    JobEnded = 7,
}

impl EventKind {
    /// The word smd prints for it.
    pub fn word(self) -> &'static str {
        match self {
            Self::Unknown => "UNKNOWN",
            Self::Failed => "FAILED",
            Self::Failing => "FAILING",
            Self::Replaced => "REPLACED",
            Self::Dropped => "DROPPED",
            Self::Recovered => "RECOVERED",
            Self::TimeExtended => "TIME_EXTENDED",
            Self::JobEnded => "JOB_ENDED",
        }
    }
}

/// One event of a job's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The node it happened to (empty for time and end events).
    pub node: String,
    /// The node that took its place (replacements only).
    pub replacement: String,
    /// When, in unix seconds.
    pub time: i64,
    /// The allocation after the change.
    pub allocation: Allocation,
}

impl From<NonstopNode> for Node {
    fn from(n: NonstopNode) -> Self {
        let state = match NonstopNodeState::try_from(n.state) {
            Ok(NonstopNodeState::Failed) => NodeState::Failed,
            Ok(NonstopNodeState::Failing) => NodeState::Failing,
            _ => NodeState::Ok,
        };
        Self {
            name: n.name,
            cpus: n.cpus,
            state,
        }
    }
}

impl From<NonstopAllocation> for Allocation {
    fn from(a: NonstopAllocation) -> Self {
        Self {
            job_id: a.job_id,
            node_list: a.node_list,
            nodes: a.nodes.into_iter().map(Node::from).collect(),
            cpus_per_node: a.cpus_per_node,
            time_limit_minutes: a.time_limit_minutes,
            extend_available_minutes: a.extend_available_minutes,
            spares_used: a.spares_used,
            spares_free: a.spares_free,
        }
    }
}

impl From<NonstopEvent> for Event {
    fn from(e: NonstopEvent) -> Self {
        let kind = match NonstopEventKind::try_from(e.kind) {
            Ok(NonstopEventKind::Failed) => EventKind::Failed,
            Ok(NonstopEventKind::Failing) => EventKind::Failing,
            Ok(NonstopEventKind::Replaced) => EventKind::Replaced,
            Ok(NonstopEventKind::Dropped) => EventKind::Dropped,
            Ok(NonstopEventKind::Recovered) => EventKind::Recovered,
            Ok(NonstopEventKind::TimeExtended) => EventKind::TimeExtended,
            Ok(NonstopEventKind::JobEnded) => EventKind::JobEnded,
            _ => EventKind::Unknown,
        };
        Self {
            kind,
            node: e.node,
            replacement: e.replacement,
            time: e.time,
            allocation: e.allocation.map(Allocation::from).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_messages_convert_with_unknown_values_tolerated() {
        let a = Allocation::from(NonstopAllocation {
            job_id: 7,
            node_list: "a,b".into(),
            nodes: vec![
                NonstopNode {
                    name: "a".into(),
                    cpus: 2,
                    state: NonstopNodeState::Failed as i32,
                },
                NonstopNode {
                    name: "b".into(),
                    cpus: 1,
                    state: 99,
                },
            ],
            cpus_per_node: "2,1".into(),
            ..Default::default()
        });
        assert_eq!(a.in_state(NodeState::Failed)[0].name, "a");
        assert_eq!(a.nodes[1].state, NodeState::Ok);
        let e = Event::from(NonstopEvent {
            kind: 42,
            ..Default::default()
        });
        assert_eq!((e.kind, e.allocation.job_id), (EventKind::Unknown, 0));
        let e = Event::from(NonstopEvent {
            kind: NonstopEventKind::Replaced as i32,
            node: "a".into(),
            replacement: "c".into(),
            ..Default::default()
        });
        assert_eq!(e.kind.word(), "REPLACED");
    }
}
