//! Account sub-tree totals: in `sreport cluster AccountUtilizationByUser` an account's row is
//! the usage of its whole sub-tree (its users and every account below it), as in Slurm.

use std::collections::BTreeMap;

/// `account` and its ancestors, nearest first, following `parent_of` (account → parent) until
/// an account without a parent; a loop in the map ends the walk.
pub fn lineage<'a>(account: &'a str, parent_of: &'a BTreeMap<String, String>) -> Vec<&'a str> {
    let mut out = vec![account];
    let mut at = account;
    while let Some(parent) = parent_of.get(at) {
        if parent.is_empty() || out.contains(&parent.as_str()) {
            break;
        }
        out.push(parent);
        at = parent;
    }
    out
}

/// Each account's sub-tree total: `own` usage (by account) added to the account and every
/// ancestor of it. Accounts with no usage below them do not appear.
pub fn subtree_totals(
    parent_of: &BTreeMap<String, String>,
    own: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for (account, &secs) in own {
        for a in lineage(account, parent_of) {
            let slot = totals.entry(a.to_string()).or_default();
            *slot = slot.saturating_add(secs);
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, p)| (a.to_string(), p.to_string()))
            .collect()
    }

    #[test]
    fn usage_rises_to_every_ancestor() {
        let parents = map(&[
            ("root", ""),
            ("phys", "root"),
            ("hep", "phys"),
            ("chem", "root"),
        ]);
        let own: BTreeMap<String, u64> = [
            ("hep".to_string(), 10),
            ("phys".to_string(), 5),
            ("chem".to_string(), 7),
        ]
        .into();
        let totals = subtree_totals(&parents, &own);
        let expect: BTreeMap<String, u64> = [
            ("root".to_string(), 22),
            ("phys".to_string(), 15),
            ("hep".to_string(), 10),
            ("chem".to_string(), 7),
        ]
        .into();
        assert_eq!(totals, expect);
        assert_eq!(lineage("hep", &parents), vec!["hep", "phys", "root"]);
    }

    #[test]
    fn a_loop_ends_the_walk() {
        let parents = map(&[("a", "b"), ("b", "a")]);
        assert_eq!(lineage("a", &parents), vec!["a", "b"]);
        assert_eq!(lineage("orphan", &parents), vec!["orphan"]);
    }
}
