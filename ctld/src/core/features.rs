//! `--constraint` expressions: features joined by `&` (AND, also `,`) and `|` (OR), with AND
//! binding tighter, so `a&b|c` is `(a AND b) OR c`. Slurm's brackets, counts (`a*2`) and
//! parentheses are not supported and are rejected as invalid.

use super::nodes::NodeTable;
use fixedbitset::FixedBitSet;

/// A parsed constraint: an OR of AND-terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    terms: Vec<Vec<String>>,
}

impl Constraint {
    /// Parses `spec`; `None` when it is malformed.
    pub fn parse(spec: &str) -> Option<Self> {
        let mut terms = Vec::new();
        for term in spec.split('|') {
            let mut feats = Vec::new();
            for f in term.split(['&', ',']) {
                let f = f.trim();
                if f.is_empty()
                    || !f
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c))
                {
                    return None;
                }
                feats.push(f.to_string());
            }
            terms.push(feats);
        }
        Some(Self { terms })
    }

    /// Whether a node with `features` satisfies it.
    pub fn matches(&self, features: &[String]) -> bool {
        self.terms
            .iter()
            .any(|t| t.iter().all(|f| features.contains(f)))
    }

    /// Every feature it names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().flatten().map(String::as_str)
    }

    /// The nodes that satisfy it.
    pub(crate) fn bitmap(&self, nodes: &NodeTable) -> FixedBitSet {
        let mut bits = FixedBitSet::with_capacity(nodes.nodes.len());
        for (i, n) in nodes.nodes.iter().enumerate() {
            if self.matches(&n.features) {
                bits.insert(i);
            }
        }
        bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feats(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn and_binds_tighter_than_or() {
        let c = Constraint::parse("a&b|c").unwrap();
        assert!(c.matches(&feats(&["a", "b"])));
        assert!(c.matches(&feats(&["c"])));
        assert!(!c.matches(&feats(&["a"])));
        let comma = Constraint::parse("a,b").unwrap();
        assert!(!comma.matches(&feats(&["a"])));
        assert!(comma.matches(&feats(&["b", "a"])));
    }

    #[test]
    fn malformed_specs_are_rejected() {
        for bad in ["", "a&", "|b", "a&&b", "[a|b]", "a*2", "(a)", "a b"] {
            assert!(Constraint::parse(bad).is_none(), "{bad}");
        }
    }
}
