//! The values of the power save exclusions `SuspendExcNodes`, `SuspendExcParts` and
//! `SuspendExcStates`, read and written outside a file too: `scontrol update
//! SuspendExcNodes=...` (Slurm 23.02+) sends them as text and `scontrol show config` prints
//! them back. Name checks against the configured nodes and partitions are the caller's.

use super::power::{ExcNodes, ExcState};
use crate::hostlist::{Hostlist, compress};

/// Every state `SuspendExcStates` may name, with Slurm's spelling.
const EXC_STATES: &[(&str, ExcState)] = &[
    ("CLOUD", ExcState::Cloud),
    ("DOWN", ExcState::Down),
    ("DRAIN", ExcState::Drain),
    ("DYNAMIC_FUTURE", ExcState::DynamicFuture),
    ("DYNAMIC_NORM", ExcState::DynamicNorm),
    ("FAIL", ExcState::Fail),
    ("INVALID_REG", ExcState::InvalidReg),
    ("MAINTENANCE", ExcState::Maintenance),
    ("NOT_RESPONDING", ExcState::NotResponding),
    ("PERFCTRS", ExcState::Perfctrs),
    ("PLANNED", ExcState::Planned),
    ("RESERVED", ExcState::Reserved),
];

impl ExcState {
    /// Slurm's name of the state (`DOWN`, `NOT_RESPONDING`, ...).
    pub fn name(self) -> &'static str {
        EXC_STATES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("UNKNOWN", |(name, _)| name)
    }
}

/// Why an exclusion value cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExcValueError {
    /// A `:count` that is not a number.
    #[error("bad node count in {piece}")]
    BadCount { piece: String },
    /// A hostlist that does not parse.
    #[error("{0}")]
    Hostlist(#[from] crate::hostlist::HostlistError),
    /// A state `SuspendExcStates` does not know.
    #[error("invalid SuspendExcStates state {state}")]
    BadState { state: String },
}

/// Reads `nid[10-20]:4,nid[80-90]:2,x1`: hostlists split at the commas outside brackets, each
/// with its optional count. An empty value is an empty list.
pub fn parse_exc_nodes(value: &str) -> Result<Vec<ExcNodes>, ExcValueError> {
    let v = value.trim();
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in v.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(&v[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&v[start..]);
    let mut out = Vec::new();
    for piece in pieces.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
        let (expr, count) = match piece.rsplit_once(':') {
            Some((expr, n)) => {
                let n: u32 = n.trim().parse().map_err(|_| ExcValueError::BadCount {
                    piece: piece.to_string(),
                })?;
                (expr, Some(n))
            }
            None => (piece, None),
        };
        let nodes: Vec<String> = Hostlist::parse(expr)?.iter().collect();
        out.push(ExcNodes { nodes, count });
    }
    Ok(out)
}

/// Reads a comma list of `SuspendExcStates` names (any case), without repeats.
pub fn parse_exc_states(value: &str) -> Result<Vec<ExcState>, ExcValueError> {
    let mut out = Vec::new();
    for word in comma_list(value) {
        let Some(&(_, s)) = EXC_STATES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(word))
        else {
            return Err(ExcValueError::BadState {
                state: word.to_string(),
            });
        };
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

/// The items of a comma list, trimmed, empty ones left out.
pub fn comma_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty())
}

/// `SuspendExcNodes` as Slurm prints it: each set as a ranged hostlist with its `:count`,
/// comma separated; `None` when empty (Slurm's `(null)`).
pub fn exc_nodes_text(sets: &[ExcNodes]) -> Option<String> {
    let items: Vec<String> = sets
        .iter()
        .filter(|s| !s.nodes.is_empty())
        .map(|s| match s.count {
            Some(c) => format!("{}:{c}", compress(&s.nodes)),
            None => compress(&s.nodes),
        })
        .collect();
    (!items.is_empty()).then(|| items.join(","))
}

/// `SuspendExcStates` as Slurm prints it; `None` when empty.
pub fn exc_states_text(states: &[ExcState]) -> Option<String> {
    let names: Vec<&str> = states.iter().map(|s| s.name()).collect();
    (!names.is_empty()).then(|| names.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_sets_read_and_print_back() {
        let sets = parse_exc_nodes("tux[0-4]:2, tux[8-9],ec1").unwrap();
        assert_eq!(sets.len(), 3);
        assert_eq!(sets[0].count, Some(2));
        assert_eq!(sets[1].nodes, ["tux8", "tux9"]);
        assert_eq!(
            exc_nodes_text(&sets).as_deref(),
            Some("tux[0-4]:2,tux[8-9],ec1")
        );
        assert_eq!(parse_exc_nodes("  ").unwrap(), []);
        assert_eq!(exc_nodes_text(&[]), None);
        assert!(matches!(
            parse_exc_nodes("tux[0-4]:x"),
            Err(ExcValueError::BadCount { .. })
        ));
        assert!(matches!(
            parse_exc_nodes("tux[0-4"),
            Err(ExcValueError::Hostlist(_))
        ));
    }

    #[test]
    fn states_read_in_any_case_and_print_in_slurms() {
        let states = parse_exc_states("down,Drain,DOWN,not_responding").unwrap();
        assert_eq!(
            states,
            [ExcState::Down, ExcState::Drain, ExcState::NotResponding]
        );
        assert_eq!(
            exc_states_text(&states).as_deref(),
            Some("DOWN,DRAIN,NOT_RESPONDING")
        );
        assert_eq!(
            parse_exc_states("IDLE").unwrap_err().to_string(),
            "invalid SuspendExcStates state IDLE"
        );
        assert_eq!(exc_states_text(&[]), None);
    }
}
