//! Helpers of the cluster and federation suites: short forms of common store calls.

use sluice_dbd::store::*;

use super::{T1, s};

pub fn add_clusters(store: &Store, names: &[&str], federation: Option<&str>) -> Change {
    let req = AddClusters {
        names: s(names),
        federation: federation.map(str::to_string),
        ..Default::default()
    };
    store.add_clusters(&req, Apply::Commit, T1).unwrap()
}

pub fn add_federation(store: &Store, name: &str, clusters: &[&str]) {
    let req = AddFederations {
        names: s(&[name]),
        clusters: s(clusters),
    };
    store.add_federations(&req, Apply::Commit, T1).unwrap();
}

pub fn cluster(store: &Store, name: &str) -> Cluster {
    let filter = ClusterFilter {
        names: s(&[name]),
        with_deleted: true,
        ..Default::default()
    };
    let mut list = store.list_clusters(&filter).unwrap();
    assert_eq!(list.len(), 1, "cluster {name}");
    list.remove(0)
}

/// (name, fed_id) of the members of `fed`, by fed id.
pub fn members(store: &Store, fed: &str) -> Vec<(String, u32)> {
    let filter = FederationFilter {
        names: s(&[fed]),
        ..Default::default()
    };
    let feds = store.list_federations(&filter).unwrap();
    assert_eq!(feds.len(), 1, "federation {fed}");
    feds[0]
        .clusters
        .iter()
        .map(|c| (c.name.clone(), c.fed_id))
        .collect()
}

pub fn set_federation(
    store: &Store,
    names: &[&str],
    fed: &str,
    state: Option<u32>,
) -> Result<Change, StoreError> {
    let req = ModifyClusters {
        names: s(names),
        federation: Some(fed.to_string()),
        fed_state: state,
        ..Default::default()
    };
    store.modify_clusters(&req, Apply::Commit, T1)
}

pub fn pairs(items: &[(&str, u32)]) -> Vec<(String, u32)> {
    items.iter().map(|(n, i)| (n.to_string(), *i)).collect()
}

pub fn add_clusters_err(store: &Store, names: &[&str], fed: &str) -> StoreError {
    let req = AddClusters {
        names: s(names),
        federation: Some(fed.into()),
        ..Default::default()
    };
    store.add_clusters(&req, Apply::Commit, T1).unwrap_err()
}

pub fn modify_fed(store: &Store, fed: &str, clusters: &[&str]) -> Result<Change, StoreError> {
    let req = ModifyFederations {
        names: s(&[fed]),
        clusters: s(clusters),
    };
    store.modify_federations(&req, Apply::Commit, T1)
}
