//! Federation rules (`as_mysql_federation.c`): membership lives only in `clusters.federation`;
//! fed ids are the lowest free ids 1..=63; cluster lists are `c` (set exactly), `+c`, `-c`.

use std::collections::BTreeSet;

use sluice_vocab::FedState;
use sluice_vocab::ids::MAX_FED_CLUSTERS;

use super::conn::AnyConnection;
use super::error::{ObjectKind, StoreError};
use super::models::clusters::{self as cluster_rows, ClusterRow};
use super::models::federations::{self as fed_rows, FederationRow};
use super::models::to_u32;
use super::requests::{AddFederations, FederationFilter, ModifyFederations, checked_names};
use super::types::{Cluster, Federation};

/// Hands out the lowest free fed ids of one federation during one request, so several
/// clusters joining at once get distinct ids.
pub(super) struct FedIds {
    federation: String,
    taken: BTreeSet<u32>,
}

impl FedIds {
    /// The ids held by the live members of `federation`, except `leaving` ones.
    pub(super) fn load(
        conn: &mut AnyConnection,
        federation: &str,
        leaving: &[String],
    ) -> Result<Self, StoreError> {
        let taken = cluster_rows::members(conn, federation)?
            .into_iter()
            .filter(|r| !leaving.contains(&r.name))
            .map(|r| to_u32(r.fed_id))
            .collect();
        Ok(Self {
            federation: federation.to_string(),
            taken,
        })
    }

    /// The lowest free id, now taken; "Too many clusters in federation" past 63.
    pub(super) fn next(&mut self) -> Result<u32, StoreError> {
        let id = (1..=MAX_FED_CLUSTERS)
            .find(|id| !self.taken.contains(id))
            .ok_or_else(|| StoreError::TooManyClusters {
                federation: self.federation.clone(),
            })?;
        self.taken.insert(id);
        Ok(id)
    }
}

/// A cluster list edit, parsed.
struct ClusterEdits {
    /// Bare names: the federation gets exactly these.
    exact: bool,
    add: Vec<String>,
    remove: Vec<String>,
}

fn parse_edits(items: &[String]) -> Result<ClusterEdits, StoreError> {
    let mut edits = ClusterEdits {
        exact: false,
        add: Vec::new(),
        remove: Vec::new(),
    };
    let mut delta = false;
    for item in items {
        if let Some(name) = item.strip_prefix('+') {
            delta = true;
            edits.add.push(name.to_string());
        } else if let Some(name) = item.strip_prefix('-') {
            delta = true;
            edits.remove.push(name.to_string());
        } else {
            // A bare empty item is "clusters=" with nothing: set exactly to no clusters.
            edits.exact = true;
            if !item.is_empty() {
                edits.add.push(item.clone());
            }
        }
    }
    if delta && edits.exact {
        return Err(StoreError::MixedListModes);
    }
    Ok(edits)
}

/// Applies a cluster list edit to `federation`; returns whether any cluster changed.
fn assign_clusters(
    conn: &mut AnyConnection,
    federation: &str,
    items: &[String],
    now: i64,
) -> Result<bool, StoreError> {
    let edits = parse_edits(items)?;
    for name in edits.add.iter().chain(&edits.remove) {
        if cluster_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::UnknownCluster { name: name.clone() });
        }
    }
    let members = cluster_rows::members(conn, federation)?;
    let leaving: Vec<String> = members
        .iter()
        .map(|m| m.name.clone())
        .filter(|m| {
            if edits.exact {
                !edits.add.contains(m)
            } else {
                edits.remove.contains(m)
            }
        })
        .collect();
    let mut ids = FedIds::load(conn, federation, &leaving)?;
    let mut changed = false;
    for mut row in members.into_iter().filter(|m| leaving.contains(&m.name)) {
        row.leave_federation();
        row.mod_time = now;
        cluster_rows::update(conn, &row)?;
        changed = true;
    }
    for name in &edits.add {
        let Some(mut row) = cluster_rows::get_live(conn, name)? else {
            return Err(StoreError::UnknownCluster { name: name.clone() });
        };
        if row.federation == federation {
            continue; // already a member: keeps its id and state
        }
        join(&mut row, federation, &mut ids, None)?;
        row.mod_time = now;
        cluster_rows::update(conn, &row)?;
        changed = true;
    }
    Ok(changed)
}

/// Releases every member of `federation` (fed id 0, NA).
fn release_all(conn: &mut AnyConnection, federation: &str, now: i64) -> Result<(), StoreError> {
    for mut row in cluster_rows::members(conn, federation)? {
        row.leave_federation();
        row.mod_time = now;
        cluster_rows::update(conn, &row)?;
    }
    Ok(())
}

pub(super) fn add(
    conn: &mut AnyConnection,
    req: &AddFederations,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let names = checked_names(ObjectKind::Federation, &req.names)?;
    if names.len() > 1 && !req.clusters.is_empty() {
        return Err(StoreError::MultipleAssignment);
    }
    for name in &names {
        match fed_rows::get(conn, name)? {
            Some(row) if !row.deleted => {
                return Err(StoreError::AlreadyExists {
                    kind: ObjectKind::Federation,
                    name: name.clone(),
                });
            }
            Some(_) => fed_rows::update(conn, &FederationRow::new(name, now))?,
            None => fed_rows::insert(conn, &FederationRow::new(name, now))?,
        }
        if !req.clusters.is_empty() {
            assign_clusters(conn, name, &req.clusters, now)?;
        }
    }
    Ok(names)
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyFederations,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let mut targets = Vec::new();
    if req.names.is_empty() {
        targets = fed_rows::all(conn, false)?;
    } else {
        for name in &req.names {
            let row = fed_rows::get_live(conn, name)?
                .ok_or_else(|| StoreError::UnknownFederation { name: name.clone() })?;
            if !targets.contains(&row) {
                targets.push(row);
            }
        }
    }
    if req.clusters.is_empty() || targets.is_empty() {
        return Err(StoreError::NothingToChange);
    }
    if targets.len() > 1 {
        return Err(StoreError::MultipleAssignment);
    }
    let mut changed = Vec::new();
    for mut fed in targets {
        if assign_clusters(conn, &fed.name, &req.clusters, now)? {
            fed.mod_time = now;
            fed_rows::update(conn, &fed)?;
            changed.push(fed.name);
        }
    }
    if changed.is_empty() {
        return Err(StoreError::NothingToChange);
    }
    Ok(changed)
}

pub(super) fn delete(
    conn: &mut AnyConnection,
    names: &[String],
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if names.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut deleted = Vec::new();
    for name in names {
        let Some(mut row) = fed_rows::get_live(conn, name)? else {
            return Err(StoreError::UnknownFederation { name: name.clone() });
        };
        release_all(conn, name, now)?;
        row.deleted = true;
        row.mod_time = now;
        fed_rows::update(conn, &row)?;
        if !deleted.contains(name) {
            deleted.push(name.clone());
        }
    }
    Ok(deleted)
}

pub(super) fn list(
    conn: &mut AnyConnection,
    filter: &FederationFilter,
) -> Result<Vec<Federation>, StoreError> {
    let mut out = Vec::new();
    for row in fed_rows::all(conn, filter.with_deleted)? {
        if !filter.names.is_empty() && !filter.names.contains(&row.name) {
            continue;
        }
        let members: Vec<Cluster> = cluster_rows::members(conn, &row.name)?
            .into_iter()
            .map(Cluster::from)
            .collect();
        if !filter.clusters.is_empty() && !members.iter().any(|m| filter.clusters.contains(&m.name))
        {
            continue;
        }
        out.push(row.into_record(members));
    }
    Ok(out)
}

/// Puts `row` into `federation` unless it is already there (then id and state are kept);
/// a joining cluster gets the next id from `ids` and `fed_state` or ACTIVE.
pub(super) fn join(
    row: &mut ClusterRow,
    federation: &str,
    ids: &mut FedIds,
    fed_state: Option<u32>,
) -> Result<(), StoreError> {
    if row.federation != federation {
        row.federation = federation.to_string();
        row.set_fed_id(ids.next()?);
        row.fed_state = super::models::to_i32(FedState::Active.stored());
    }
    if let Some(state) = fed_state {
        row.fed_state = super::models::to_i32(state);
    }
    Ok(())
}

/// Checks a fed state a client asks for: ACTIVE, INACTIVE, DRAIN or DRAIN+REMOVE.
pub(super) fn check_settable(value: u32) -> Result<u32, StoreError> {
    match FedState::from_stored(value) {
        Some(FedState::Active | FedState::Inactive | FedState::Drain | FedState::DrainRemove) => {
            Ok(value)
        }
        _ => Err(StoreError::InvalidFedState { value }),
    }
}
