//! The node state table: Slurm's long names (`scontrol show node`, `sinfo -N -l`), compact
//! names (`sinfo`'s `%t`) and the flag suffixes sinfo appends (`*` not responding, `~` powered
//! down, `#` powering up, `%` powering down, `!` power down requested, `@` reboot pending).

/// A node's displayed state: a base state combined with the DRAIN and COMPLETING flags, as
/// Slurm names the combinations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeState {
    Unknown,
    Down,
    Idle,
    Allocated,
    Mixed,
    Future,
    Completing,
    Drained,
    Draining,
    Inval,
    Fail,
    Failing,
    Planned,
}

struct Row {
    state: NodeState,
    long: &'static str,
    short: &'static str,
}

const NODE_STATES: &[Row] = &[
    Row {
        state: NodeState::Unknown,
        long: "UNKNOWN",
        short: "unk",
    },
    Row {
        state: NodeState::Down,
        long: "DOWN",
        short: "down",
    },
    Row {
        state: NodeState::Idle,
        long: "IDLE",
        short: "idle",
    },
    Row {
        state: NodeState::Allocated,
        long: "ALLOCATED",
        short: "alloc",
    },
    Row {
        state: NodeState::Mixed,
        long: "MIXED",
        short: "mix",
    },
    Row {
        state: NodeState::Future,
        long: "FUTURE",
        short: "futr",
    },
    Row {
        state: NodeState::Completing,
        long: "COMPLETING",
        short: "comp",
    },
    Row {
        state: NodeState::Drained,
        long: "DRAINED",
        short: "drain",
    },
    Row {
        state: NodeState::Draining,
        long: "DRAINING",
        short: "drng",
    },
    Row {
        state: NodeState::Inval,
        long: "INVAL",
        short: "inval",
    },
    Row {
        state: NodeState::Fail,
        long: "FAIL",
        short: "fail",
    },
    Row {
        state: NodeState::Failing,
        long: "FAILING",
        short: "failg",
    },
    Row {
        state: NodeState::Planned,
        long: "PLANNED",
        short: "plnd",
    },
];

impl NodeState {
    fn row(self) -> &'static Row {
        NODE_STATES
            .iter()
            .find(|r| r.state == self)
            .unwrap_or(&NODE_STATES[0])
    }

    /// Slurm's long name, e.g. `DRAINED`.
    pub fn long_name(self) -> &'static str {
        self.row().long
    }

    /// sinfo's compact name, e.g. `drain`.
    pub fn short_name(self) -> &'static str {
        self.row().short
    }

    /// Parses a long or compact name, case-insensitively (`sinfo -t`, `scontrol update state=`).
    pub fn parse(name: &str) -> Option<Self> {
        NODE_STATES
            .iter()
            .find(|r| r.long.eq_ignore_ascii_case(name) || r.short.eq_ignore_ascii_case(name))
            .map(|r| r.state)
    }

    /// The displayed state of a node with base state `base` (one of the base names: `UNKNOWN`,
    /// `DOWN`, `IDLE`, `ALLOCATED`, `MIXED`, `FUTURE`) and the DRAIN / COMPLETING / invalid
    /// registration flags, combined as Slurm combines them.
    pub fn combine(base: NodeState, drain: bool, completing: bool, invalid: bool) -> Self {
        let busy = matches!(base, Self::Allocated | Self::Mixed);
        match (base, drain || invalid, busy || completing) {
            (Self::Down | Self::Future | Self::Unknown, _, _) => base,
            (_, true, true) => Self::Draining,
            (_, true, false) if invalid => Self::Inval,
            (_, true, false) => Self::Drained,
            (_, false, _) if completing => Self::Completing,
            _ => base,
        }
    }
}

/// Flags shown as a one-character suffix after the compact name in sinfo and squeue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeFlags {
    pub not_responding: bool,
    pub powered_down: bool,
    pub powering_up: bool,
    pub powering_down: bool,
    pub power_down_requested: bool,
    pub reboot_requested: bool,
}

impl NodeFlags {
    /// The suffix sinfo appends: the first that applies in Slurm's order `@ # % ~ ! *`
    /// (reboot requested, powering up, powering down, powered down, power down requested,
    /// not responding), so a powered-down node that does not answer shows `~`.
    pub fn suffix(self) -> &'static str {
        if self.reboot_requested {
            "@"
        } else if self.powering_up {
            "#"
        } else if self.powering_down {
            "%"
        } else if self.powered_down {
            "~"
        } else if self.power_down_requested {
            "!"
        } else if self.not_responding {
            "*"
        } else {
            ""
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in NODE_STATES {
            assert_eq!(NodeState::parse(r.long), Some(r.state));
            assert_eq!(NodeState::parse(r.short), Some(r.state));
        }
        assert_eq!(NodeState::Drained.short_name(), "drain");
        assert_eq!(NodeState::parse("bogus"), None);
    }

    #[test]
    fn flags_combine_as_slurm_shows_them() {
        use NodeState::*;
        assert_eq!(NodeState::combine(Idle, true, false, false), Drained);
        assert_eq!(NodeState::combine(Allocated, true, false, false), Draining);
        assert_eq!(NodeState::combine(Idle, false, true, false), Completing);
        assert_eq!(NodeState::combine(Idle, true, false, true), Inval);
        assert_eq!(NodeState::combine(Down, true, false, false), Down);
        assert_eq!(NodeState::combine(Mixed, false, false, false), Mixed);
        let f = NodeFlags {
            not_responding: true,
            powered_down: true,
            ..NodeFlags::default()
        };
        assert_eq!(f.suffix(), "~", "powered down wins over not responding");
        let f = NodeFlags {
            powering_up: true,
            not_responding: true,
            ..NodeFlags::default()
        };
        assert_eq!(f.suffix(), "#");
        let f = NodeFlags {
            not_responding: true,
            ..NodeFlags::default()
        };
        assert_eq!(f.suffix(), "*");
        assert_eq!(
            NodeFlags {
                powered_down: true,
                ..NodeFlags::default()
            }
            .suffix(),
            "~"
        );
        assert_eq!(NodeFlags::default().suffix(), "");
    }
}
