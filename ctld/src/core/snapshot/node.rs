//! A node as the controller store saves it: what admins and events changed, by node name.

use serde::{Deserialize, Serialize};

use crate::core::SimTime;
use crate::core::nodes::{Node, NodeBase};

/// A node's base state, as saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseSnap {
    /// [`NodeBase::Unknown`].
    Unknown,
    /// [`NodeBase::Up`].
    Up,
    /// [`NodeBase::Down`].
    Down,
    /// [`NodeBase::Future`].
    Future,
}

/// A node's state as saved: what admins and events changed, not what the configuration says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSnap {
    pub name: String,
    pub base: BaseSnap,
    #[serde(default)]
    pub drain: bool,
    #[serde(default)]
    pub invalid: bool,
    #[serde(default)]
    pub not_responding: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot_time: Option<u64>,
    /// Power save state (absent in saves older than power save).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::core::power::PowerSnap>,
}

impl NodeSnap {
    /// The saved form of `node`.
    pub fn of(node: &Node) -> Self {
        Self {
            name: node.name.clone(),
            base: match node.base {
                NodeBase::Unknown => BaseSnap::Unknown,
                NodeBase::Up => BaseSnap::Up,
                NodeBase::Down => BaseSnap::Down,
                NodeBase::Future => BaseSnap::Future,
            },
            drain: node.drain,
            invalid: node.invalid,
            not_responding: node.not_responding,
            reason: node.reason.clone(),
            boot_time: node.boot_time.map(SimTime::secs),
            power: Some(crate::core::power::PowerSnap::of(node)),
        }
    }

    /// The core's form of the base state.
    pub fn node_base(&self) -> NodeBase {
        match self.base {
            BaseSnap::Unknown => NodeBase::Unknown,
            BaseSnap::Up => NodeBase::Up,
            BaseSnap::Down => NodeBase::Down,
            BaseSnap::Future => NodeBase::Future,
        }
    }
}
