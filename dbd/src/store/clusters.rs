//! Cluster rules (`as_mysql_cluster.c`): adding creates the root associations; a cluster is in
//! at most one federation; leaving resets fed id and state; features are a comma list.

use super::accounts::ROOT;
use super::conn::AnyConnection;
use super::error::{ObjectKind, StoreError};
use super::federations::{FedIds, check_settable, join};
use super::models::associations::{self as assoc_rows, Key};
use super::models::clusters::{self as cluster_rows, ClusterRow};
use super::models::federations as fed_rows;
use super::models::{cursors, to_i32};
use super::requests::{AddClusters, ClusterFilter, DeleteClusters, ModifyClusters, checked_names};
use super::types::{Cluster, ListEdit};

/// The first local job id a new cluster leases.
const FIRST_JOB_ID: i64 = 1;

/// Features trimmed, without empty items or repeats, in their given order.
fn clean_features(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in items.iter().map(|f| f.trim()).filter(|f| !f.is_empty()) {
        if !out.iter().any(|o| o == f) {
            out.push(f.to_string());
        }
    }
    out
}

fn edit_features(current: Vec<String>, edit: &ListEdit) -> Vec<String> {
    match edit {
        ListEdit::Set(items) => clean_features(items),
        ListEdit::Add(items) => {
            let mut all = current;
            all.extend(clean_features(items));
            clean_features(&all)
        }
        ListEdit::Remove(items) => {
            let gone = clean_features(items);
            current.into_iter().filter(|f| !gone.contains(f)).collect()
        }
    }
}

/// The federation named in a request: `None` for none or `""`, else it must be live.
fn target_federation(
    conn: &mut AnyConnection,
    name: Option<&str>,
) -> Result<Option<String>, StoreError> {
    match name {
        None | Some("") => Ok(None),
        Some(name) => match fed_rows::get_live(conn, name)? {
            Some(_) => Ok(Some(name.to_string())),
            None => Err(StoreError::UnknownFederation {
                name: name.to_string(),
            }),
        },
    }
}

pub(super) fn add(
    conn: &mut AnyConnection,
    req: &AddClusters,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let names = checked_names(ObjectKind::Cluster, &req.names)?;
    let fed_state = req.fed_state.map(check_settable).transpose()?;
    let federation = target_federation(conn, req.federation.as_deref())?;
    let mut ids = match &federation {
        Some(f) => Some(FedIds::load(conn, f, &[])?),
        None => None,
    };
    let features = clean_features(&req.features);
    for name in &names {
        let existing = cluster_rows::get(conn, name)?;
        if existing.as_ref().is_some_and(|r| !r.deleted) {
            return Err(StoreError::AlreadyExists {
                kind: ObjectKind::Cluster,
                name: name.clone(),
            });
        }
        let mut row = ClusterRow::new(name, now);
        row.set_features(&features);
        match (&federation, &mut ids) {
            (Some(f), Some(ids)) => join(&mut row, f, ids, fed_state)?,
            _ if fed_state.is_some() => {
                return Err(StoreError::NotInFederation {
                    cluster: name.clone(),
                });
            }
            _ => {}
        }
        if existing.is_some() {
            cluster_rows::update(conn, &row)?;
        } else {
            cluster_rows::insert(conn, &row)?;
        }
        // A revived cluster keeps its job-id cursor, so it never reissues an id.
        if cursors::get(conn, name)?.is_none() {
            cursors::insert(conn, name, FIRST_JOB_ID)?;
        }
        for user in ["", ROOT] {
            let key = Key {
                cluster: name,
                account: ROOT,
                user,
            };
            assoc_rows::ensure(conn, key, "", now)?;
        }
    }
    Ok(names)
}

/// The live clusters matching `names` (each must exist) and `federations` (ANDed).
fn select(
    conn: &mut AnyConnection,
    names: &[String],
    federations: &[String],
) -> Result<Vec<ClusterRow>, StoreError> {
    for name in names {
        if cluster_rows::get_live(conn, name)?.is_none() {
            return Err(StoreError::UnknownCluster { name: name.clone() });
        }
    }
    for fed in federations.iter().filter(|f| !f.is_empty()) {
        if fed_rows::get_live(conn, fed)?.is_none() {
            return Err(StoreError::UnknownFederation { name: fed.clone() });
        }
    }
    Ok(cluster_rows::all(conn, false)?
        .into_iter()
        .filter(|r| names.is_empty() || names.contains(&r.name))
        .filter(|r| federations.is_empty() || federations.contains(&r.federation))
        .collect())
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyClusters,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let fed_state = req.fed_state.map(check_settable).transpose()?;
    let targets = select(conn, &req.names, &req.where_federations)?;
    let federation = target_federation(conn, req.federation.as_deref())?;
    let mut ids = match &federation {
        Some(f) => Some(FedIds::load(conn, f, &[])?),
        None => None,
    };
    let mut changed = Vec::new();
    for old in targets {
        let mut row = old.clone();
        match (&req.federation, &federation, &mut ids) {
            (_, Some(f), Some(ids)) => join(&mut row, f, ids, None)?,
            (Some(_), _, _) => row.leave_federation(),
            _ => {}
        }
        if let Some(state) = fed_state {
            if row.federation.is_empty() {
                return Err(StoreError::NotInFederation { cluster: row.name });
            }
            row.fed_state = to_i32(state);
        }
        if let Some(edit) = &req.features {
            let list = edit_features(row.feature_list(), edit);
            row.set_features(&list);
        }
        if let Some(host) = &req.control_host {
            row.control_host.clone_from(host);
        }
        if let Some(port) = req.control_port {
            row.control_port = to_i32(port);
        }
        if let Some(version) = req.rpc_version {
            row.rpc_version = to_i32(version);
        }
        if row != old {
            row.mod_time = now;
            cluster_rows::update(conn, &row)?;
            changed.push(row.name);
        }
    }
    if changed.is_empty() {
        return Err(StoreError::NothingToChange);
    }
    Ok(changed)
}

pub(super) fn delete(
    conn: &mut AnyConnection,
    req: &DeleteClusters,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.names.is_empty() && req.where_federations.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut deleted = Vec::new();
    for mut row in select(conn, &req.names, &req.where_federations)? {
        row.leave_federation();
        row.deleted = true;
        row.mod_time = now;
        cluster_rows::update(conn, &row)?;
        assoc_rows::delete_of_cluster(conn, &row.name, now)?;
        deleted.push(row.name);
    }
    Ok(deleted)
}

pub(super) fn list(
    conn: &mut AnyConnection,
    filter: &ClusterFilter,
) -> Result<Vec<Cluster>, StoreError> {
    Ok(cluster_rows::all(conn, filter.with_deleted)?
        .into_iter()
        .filter(|r| filter.names.is_empty() || filter.names.contains(&r.name))
        .filter(|r| filter.federations.is_empty() || filter.federations.contains(&r.federation))
        .map(Cluster::from)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn feature_edits_follow_sacctmgr() {
        let cur = v(&["a", "b"]);
        assert_eq!(
            edit_features(cur.clone(), &ListEdit::Set(v(&["c", " c", ""]))),
            v(&["c"])
        );
        assert_eq!(
            edit_features(cur.clone(), &ListEdit::Set(vec![])),
            Vec::<String>::new()
        );
        assert_eq!(
            edit_features(cur.clone(), &ListEdit::Add(v(&["b", "d"]))),
            v(&["a", "b", "d"])
        );
        assert_eq!(
            edit_features(cur, &ListEdit::Remove(v(&["a", "zz"]))),
            v(&["b"])
        );
    }
}
