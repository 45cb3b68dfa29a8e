//! The viable siblings of a federated job (Slurm's `_get_viable_sibs`): the federation's
//! members, narrowed by the `-M/--clusters` list and by `--cluster-constraint`, minus every
//! cluster that is draining or inactive. Pure: the caller passes the members in.

use std::collections::BTreeSet;

/// The DRAIN flag of a stored fed state.
const FED_STATE_DRAIN: u32 = 0x10;
/// The base-state bits of a stored fed state.
const FED_STATE_BASE: u32 = 0x0f;
/// The INACTIVE base state.
const FED_STATE_INACTIVE: u32 = 2;

/// A federation member as the viable-set rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    /// The stored fed state (`sluice_vocab::FedState::stored`).
    pub fed_state: u32,
    pub features: Vec<String>,
}

/// Why no viable set could be computed; the texts are Slurm's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViableError {
    /// A `-M` name that is not a member of the federation.
    #[error("Invalid cluster name")]
    UnknownCluster { name: String },
    /// A constraint feature no member has.
    #[error("Invalid cluster feature specification")]
    UnknownFeature { feature: String },
    /// A negated constraint that leaves no member.
    #[error("Invalid cluster feature specification")]
    EliminatedAll { constraint: String },
    /// Nothing is left once drained and inactive clusters are removed.
    #[error("No eligible clusters for federated job")]
    NoEligible,
}

/// Whether a cluster in `fed_state` takes new federated jobs (no DRAIN flag, not INACTIVE).
pub fn takes_new_jobs(fed_state: u32) -> bool {
    fed_state & FED_STATE_DRAIN == 0 && fed_state & FED_STATE_BASE != FED_STATE_INACTIVE
}

/// The items of a comma list, trimmed, without empty ones.
pub fn split_list(spec: &str) -> Vec<String> {
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The members `--cluster-constraint=spec` allows (`_validate_cluster_features`): an OR of
/// features; a leading `!` negates the whole list; `""` allows every member.
pub fn feature_matches(members: &[Candidate], spec: &str) -> Result<BTreeSet<String>, ViableError> {
    let items = split_list(spec);
    let all: BTreeSet<String> = members.iter().map(|m| m.name.clone()).collect();
    let Some(first) = items.first() else {
        return Ok(all);
    };
    let negate = first.starts_with('!');
    let mut matched = BTreeSet::new();
    for item in &items {
        let feature = item.strip_prefix('!').unwrap_or(item);
        let having: Vec<&Candidate> = members
            .iter()
            .filter(|m| m.features.iter().any(|f| f == feature))
            .collect();
        if having.is_empty() {
            return Err(ViableError::UnknownFeature {
                feature: feature.to_string(),
            });
        }
        matched.extend(having.into_iter().map(|m| m.name.clone()));
    }
    if !negate {
        return Ok(matched);
    }
    let left: BTreeSet<String> = all.difference(&matched).cloned().collect();
    if left.is_empty() {
        return Err(ViableError::EliminatedAll {
            constraint: spec.to_string(),
        });
    }
    Ok(left)
}

/// The members `-M/--clusters=spec` names; `""` or `all` names every member.
pub fn cluster_matches(members: &[Candidate], spec: &str) -> Result<BTreeSet<String>, ViableError> {
    let items = split_list(spec);
    if items.is_empty() || items.iter().any(|i| i.eq_ignore_ascii_case("all")) {
        return Ok(members.iter().map(|m| m.name.clone()).collect());
    }
    let mut out = BTreeSet::new();
    for name in items {
        if !members.iter().any(|m| m.name == name) {
            return Err(ViableError::UnknownCluster { name });
        }
        out.insert(name);
    }
    Ok(out)
}

/// The viable siblings of a job submitted at `origin`: members ∩ `clusters` ∩
/// `features`, minus draining and inactive members; an array job may only run at `origin`.
/// The feature constraint is checked first, as Slurm does.
pub fn viable_siblings(
    members: &[Candidate],
    origin: &str,
    clusters: &str,
    features: &str,
    is_array: bool,
) -> Result<BTreeSet<String>, ViableError> {
    let by_feature = feature_matches(members, features)?;
    let by_name = cluster_matches(members, clusters)?;
    let viable: BTreeSet<String> = members
        .iter()
        .filter(|m| by_feature.contains(&m.name) && by_name.contains(&m.name))
        .filter(|m| takes_new_jobs(m.fed_state))
        .filter(|m| !is_array || m.name == origin)
        .map(|m| m.name.clone())
        .collect();
    if viable.is_empty() {
        return Err(ViableError::NoEligible);
    }
    Ok(viable)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACTIVE: u32 = 1;
    const INACTIVE: u32 = 2;
    const DRAIN: u32 = 17;
    const DRAIN_REMOVE: u32 = 49;
    const DRAINED: u32 = 18;

    fn member(name: &str, fed_state: u32, features: &[&str]) -> Candidate {
        Candidate {
            name: name.to_string(),
            fed_state,
            features: features.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn fed() -> Vec<Candidate> {
        vec![
            member("a", ACTIVE, &["gpu", "fast"]),
            member("b", ACTIVE, &["fast"]),
            member("c", ACTIVE, &["big"]),
        ]
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn viable(
        members: &[Candidate],
        clusters: &str,
        features: &str,
    ) -> Result<BTreeSet<String>, ViableError> {
        viable_siblings(members, "a", clusters, features, false)
    }

    #[test]
    fn every_member_is_viable_without_restrictions() {
        assert_eq!(viable(&fed(), "", ""), Ok(set(&["a", "b", "c"])));
        assert_eq!(viable(&fed(), "all", " "), Ok(set(&["a", "b", "c"])));
    }

    #[test]
    fn features_are_ored_and_a_leading_bang_negates_the_list() {
        assert_eq!(viable(&fed(), "", "gpu"), Ok(set(&["a"])));
        assert_eq!(viable(&fed(), "", "gpu,big"), Ok(set(&["a", "c"])));
        assert_eq!(viable(&fed(), "", "fast"), Ok(set(&["a", "b"])));
        assert_eq!(viable(&fed(), "", "!gpu"), Ok(set(&["b", "c"])));
        // The `!` of the first item negates all; a `!` on later items is just stripped.
        assert_eq!(viable(&fed(), "", "!gpu,big"), Ok(set(&["b"])));
        assert_eq!(viable(&fed(), "", "!gpu,!big"), Ok(set(&["b"])));
        // Without a leading `!` the list is positive even if a later item has one.
        assert_eq!(viable(&fed(), "", "big,!gpu"), Ok(set(&["a", "c"])));
    }

    #[test]
    fn an_unknown_feature_or_an_empty_negation_is_invalid() {
        let e = viable(&fed(), "", "gpu,nosuch").unwrap_err();
        assert_eq!(
            e,
            ViableError::UnknownFeature {
                feature: "nosuch".into()
            }
        );
        assert_eq!(e.to_string(), "Invalid cluster feature specification");
        let e = viable(&fed(), "", "!nosuch").unwrap_err();
        assert_eq!(e.to_string(), "Invalid cluster feature specification");
        let e = viable(&fed(), "", "!fast,big").unwrap_err();
        assert!(matches!(e, ViableError::EliminatedAll { .. }), "{e:?}");
        assert_eq!(e.to_string(), "Invalid cluster feature specification");
        // Features match case-sensitively, as in Slurm.
        assert!(viable(&fed(), "", "GPU").is_err());
    }

    #[test]
    fn the_cluster_list_narrows_and_must_name_members() {
        assert_eq!(viable(&fed(), "b,c", ""), Ok(set(&["b", "c"])));
        assert_eq!(viable(&fed(), "b,c", "fast"), Ok(set(&["b"])));
        let e = viable(&fed(), "b,zz", "").unwrap_err();
        assert_eq!(e, ViableError::UnknownCluster { name: "zz".into() });
        assert_eq!(e.to_string(), "Invalid cluster name");
        // Nothing in common between the list and the constraint: no eligible cluster.
        let e = viable(&fed(), "c", "gpu").unwrap_err();
        assert_eq!(e, ViableError::NoEligible);
        assert_eq!(e.to_string(), "No eligible clusters for federated job");
    }

    #[test]
    fn the_feature_check_comes_before_the_cluster_list() {
        let e = viable(&fed(), "zz", "nosuch").unwrap_err();
        assert!(matches!(e, ViableError::UnknownFeature { .. }), "{e:?}");
    }

    #[test]
    fn draining_and_inactive_members_are_not_viable() {
        let members = vec![
            member("a", DRAIN, &["f"]),
            member("b", INACTIVE, &["f"]),
            member("c", DRAINED, &["f"]),
            member("d", DRAIN_REMOVE, &["f"]),
            member("e", ACTIVE, &["f"]),
        ];
        assert_eq!(viable(&members, "", ""), Ok(set(&["e"])));
        assert_eq!(viable(&members, "", "f"), Ok(set(&["e"])));
        let e = viable(&members, "a,b,c,d", "").unwrap_err();
        assert_eq!(e.to_string(), "No eligible clusters for federated job");
        // Features of drained members still count as known features.
        let members = vec![member("a", DRAIN, &["only"]), member("b", ACTIVE, &[])];
        assert_eq!(viable(&members, "", "only"), Err(ViableError::NoEligible));
        assert!(takes_new_jobs(ACTIVE));
        assert!(!takes_new_jobs(DRAIN));
        assert!(!takes_new_jobs(INACTIVE));
    }

    #[test]
    fn array_jobs_stay_on_the_origin() {
        assert_eq!(viable_siblings(&fed(), "a", "", "", true), Ok(set(&["a"])));
        assert_eq!(
            viable_siblings(&fed(), "a", "b,c", "", true),
            Err(ViableError::NoEligible)
        );
    }
}
