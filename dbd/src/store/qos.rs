//! Quality of service (Slurm's `as_mysql_qos.c` rules): adding, changing, deleting and listing
//! QOS, and the QOS list and default QOS of associations.
//!
//! Names are lower-cased as Slurm stores them. `normal` (id 1) exists from the first
//! migration. A deleted QOS keeps its row and id; adding it again revives it. Deleting a QOS
//! takes it out of every association's list and default, as Slurm does, and is refused while
//! jobs of it are unfinished.
//!
//! An association's QOS list and default QOS are inherited down the account tree when it sets
//! none itself; the root's list is `normal` (Slurm gives a new cluster's root association the
//! default QOS list `normal`). `QOS+=`/`QOS-=` on an association with a list of its own edit
//! that list; on one that inherits, they store a delta on the inherited list (Slurm's
//! `delta_qos`), so its list follows later changes of its parent's, plus or minus the delta.

use std::collections::{BTreeSet, HashMap};

use diesel::prelude::*;
use sluice_vocab::qos::{DEFAULT_QOS, Qos, QosEdit, valid_name};

use super::error::{ObjectKind, StoreError};
use super::models::associations::{self as assoc_rows, AssociationRow};
use super::models::qos::{self as rows, OwnQos, QosRow};
use super::types::Association;
use crate::db::schema::{job_qos, job_runs};
use crate::store::conn::AnyConnection;

/// One listed QOS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QosEntry {
    /// Its id (`normal` is 1).
    pub id: u32,
    /// The QOS.
    pub qos: Qos,
    /// Whether it was deleted (listed only on request).
    pub deleted: bool,
}

/// `sacctmgr add qos`.
#[derive(Debug, Clone, Default)]
pub struct AddQos {
    pub names: Vec<String>,
    pub set: QosEdit,
}

/// `sacctmgr modify qos where name=... set ...`.
#[derive(Debug, Clone, Default)]
pub struct ModifyQos {
    pub names: Vec<String>,
    pub set: QosEdit,
}

/// `sacctmgr delete qos`.
#[derive(Debug, Clone, Default)]
pub struct DeleteQos {
    pub names: Vec<String>,
}

/// `sacctmgr modify user|account ... set QOS=... DefaultQOS=...`.
#[derive(Debug, Clone, Default)]
pub struct ModifyAssocQos {
    /// true: user associations (of `users`, every user when empty) limited to `accounts`;
    /// false: the accounts' own associations.
    pub user_associations: bool,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    /// Default: every cluster.
    pub clusters: Vec<String>,
    /// `QOS=`: the new list (empty: inherited again).
    pub set_list: Option<Vec<String>>,
    /// `QOS+=`.
    pub add: Vec<String>,
    /// `QOS-=`.
    pub remove: Vec<String>,
    /// `DefaultQOS=` (`""` clears).
    pub default_qos: Option<String>,
}

/// The lower-cased, checked names of a request.
fn names(raw: &[String]) -> Result<Vec<String>, StoreError> {
    if raw.is_empty() {
        return Err(StoreError::NoNames {
            kind: ObjectKind::Qos,
        });
    }
    raw.iter()
        .map(|n| {
            let n = n.trim().to_ascii_lowercase();
            match valid_name(&n) {
                true => Ok(n),
                false => Err(StoreError::InvalidName {
                    kind: ObjectKind::Qos,
                    name: n,
                }),
            }
        })
        .collect()
}

pub(super) fn add(
    conn: &mut AnyConnection,
    req: &AddQos,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    let mut added = Vec::new();
    for name in names(&req.names)? {
        let base = Qos {
            name: name.clone(),
            // Slurm describes a QOS by its name unless told otherwise.
            description: name.clone(),
            ..Qos::default()
        };
        let q = req.set.applied(&base);
        match rows::by_name(conn, &name)? {
            Some(old) if !old.deleted => continue,
            Some(old) => rows::update(conn, &QosRow::new(old.id, &q, now))?,
            None => {
                let id = rows::next_id(conn)?;
                rows::insert(conn, &QosRow::new(id, &q, now))?;
            }
        }
        added.push(name);
    }
    // Every name exists already: an empty list, which sacctmgr reports as "Nothing new added".
    Ok(added)
}

fn live(conn: &mut AnyConnection, name: &str) -> Result<QosRow, StoreError> {
    rows::by_name(conn, &name.to_ascii_lowercase())?
        .filter(|r| !r.deleted)
        .ok_or_else(|| StoreError::UnknownQos {
            name: name.to_string(),
        })
}

pub(super) fn modify(
    conn: &mut AnyConnection,
    req: &ModifyQos,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.set.is_empty() {
        return Err(StoreError::NothingToChange);
    }
    if req.names.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut changed = Vec::new();
    for name in &req.names {
        let row = live(conn, name)?;
        let old = row.qos();
        let new = req.set.applied(&old);
        if new != old {
            rows::update(conn, &QosRow::new(row.id, &new, now))?;
            changed.push(row.name.clone());
        }
    }
    Ok(changed)
}

pub(super) fn delete(
    conn: &mut AnyConnection,
    names_: &[String],
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if names_.is_empty() {
        return Err(StoreError::NoConditions);
    }
    let mut deleted = Vec::new();
    for name in names_ {
        let Some(row) = rows::by_name(conn, &name.to_ascii_lowercase())?.filter(|r| !r.deleted)
        else {
            continue;
        };
        let active: i64 = job_qos::table
            .inner_join(
                job_runs::table.on(job_runs::cluster
                    .eq(job_qos::cluster)
                    .and(job_runs::job_id.eq(job_qos::job_id))),
            )
            .filter(job_qos::qos.eq(&row.name))
            .filter(job_runs::latest.eq(true))
            .filter(job_runs::time_end.eq(0))
            .count()
            .get_result(conn)?;
        if active > 0 {
            return Err(StoreError::ActiveJobs);
        }
        let mut gone = row.clone();
        gone.deleted = true;
        gone.mod_time = now;
        rows::update(conn, &gone)?;
        for (assoc, o) in &rows::all_assoc(conn)? {
            let mut new = o.clone();
            if let Some(list) = &mut new.list {
                list.retain(|id| *id != row.id);
            }
            new.add.retain(|id| *id != row.id);
            new.remove.retain(|id| *id != row.id);
            if new.default == Some(row.id) {
                new.default = None;
            }
            if new != *o {
                rows::put_assoc(conn, *assoc, &new, now)?;
            }
        }
        deleted.push(row.name);
    }
    Ok(deleted)
}

/// Every live QOS (and deleted ones with `with_deleted`), limited to `names` when given.
pub(super) fn list(
    conn: &mut AnyConnection,
    names_: &[String],
    with_deleted: bool,
) -> Result<Vec<QosEntry>, StoreError> {
    let wanted: BTreeSet<String> = names_.iter().map(|n| n.to_ascii_lowercase()).collect();
    Ok(rows::all(conn)?
        .into_iter()
        .filter(|r| with_deleted || !r.deleted)
        .filter(|r| wanted.is_empty() || wanted.contains(&r.name))
        .map(|r| QosEntry {
            id: u32::try_from(r.id).unwrap_or(0),
            qos: r.qos(),
            deleted: r.deleted,
        })
        .collect())
}

/// The QOS list and default in force on an association, as ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct InForce {
    list: Vec<i64>,
    default: Option<i64>,
}

/// The settings in force on every association of `tree`'s clusters, keyed by association id.
struct Resolver<'a> {
    own: &'a HashMap<i64, OwnQos>,
    /// Account associations by (cluster, account).
    accounts: HashMap<(String, String), AssociationRow>,
    memo: HashMap<(String, String), InForce>,
    root_list: Vec<i64>,
}

impl Resolver<'_> {
    /// What `account`'s own association on `cluster` has in force.
    fn account(&mut self, cluster: &str, account: &str) -> InForce {
        let key = (cluster.to_string(), account.to_string());
        if let Some(done) = self.memo.get(&key) {
            return done.clone();
        }
        // Walk up to the root (or a level already worked out), then inherit on the way down.
        let mut chain: Vec<AssociationRow> = Vec::new();
        let mut cur = account.to_string();
        let mut base = InForce {
            list: self.root_list.clone(),
            default: None,
        };
        // The tree is acyclic by construction; the bound guards against a corrupted database.
        for _ in 0..10_000 {
            let k = (cluster.to_string(), cur.clone());
            if let Some(done) = self.memo.get(&k) {
                base = done.clone();
                break;
            }
            let Some(row) = self.accounts.get(&k) else {
                break;
            };
            chain.push(row.clone());
            if row.parent_account.is_empty() {
                break;
            }
            cur.clone_from(&row.parent_account);
        }
        let mut result = base;
        for row in chain.into_iter().rev() {
            result = self.inherit(row.id, &result);
            self.memo
                .insert((cluster.to_string(), row.account.clone()), result.clone());
        }
        result
    }

    fn inherit(&self, assoc_id: i64, above: &InForce) -> InForce {
        let own = self.own.get(&assoc_id).cloned().unwrap_or_default();
        let list = own.list.unwrap_or_else(|| {
            let mut list = above.list.clone();
            for id in &own.add {
                if !list.contains(id) {
                    list.push(*id);
                }
            }
            list.retain(|id| !own.remove.contains(id));
            list
        });
        InForce {
            list,
            default: own.default.or(above.default),
        }
    }

    fn of(&mut self, row: &AssociationRow) -> InForce {
        if row.user_name.is_empty() {
            self.account(&row.cluster, &row.account)
        } else {
            let above = self.account(&row.cluster, &row.account);
            self.inherit(row.id, &above)
        }
    }
}

fn resolver<'a>(
    conn: &mut AnyConnection,
    own: &'a HashMap<i64, OwnQos>,
    rows_: &[AssociationRow],
) -> Result<Resolver<'a>, StoreError> {
    let mut clusters: Vec<String> = rows_.iter().map(|r| r.cluster.clone()).collect();
    clusters.sort();
    clusters.dedup();
    let accounts = assoc_rows::live(conn, &clusters, &[], &[String::new()])?
        .into_iter()
        .map(|r| ((r.cluster.clone(), r.account.clone()), r))
        .collect();
    let root_list = rows::by_name(conn, DEFAULT_QOS)?
        .filter(|r| !r.deleted)
        .map(|r| vec![r.id])
        .unwrap_or_default();
    Ok(Resolver {
        own,
        accounts,
        memo: HashMap::new(),
        root_list,
    })
}

/// Fills in the QOS list and default QOS in force on each of `assocs` (rows of `rows_`).
pub(super) fn with_qos(
    conn: &mut AnyConnection,
    rows_: &[AssociationRow],
    assocs: &mut [Association],
) -> Result<(), StoreError> {
    let own = rows::all_assoc(conn)?;
    let mut r = resolver(conn, &own, rows_)?;
    let by_id: HashMap<i64, String> = rows::all(conn)?
        .into_iter()
        .filter(|q| !q.deleted)
        .map(|q| (q.id, q.name))
        .collect();
    for (row, a) in rows_.iter().zip(assocs.iter_mut()) {
        let f = r.of(row);
        let mut list: Vec<String> = f
            .list
            .iter()
            .filter_map(|id| by_id.get(id).cloned())
            .collect();
        list.sort();
        a.qos = list;
        a.default_qos = f
            .default
            .and_then(|id| by_id.get(&id).cloned())
            .unwrap_or_default();
    }
    Ok(())
}

/// The name of a changed association in a change reply (as the limits changes name them).
fn assoc_name(r: &AssociationRow) -> String {
    format!("{}\t{}\t{}", r.cluster, r.account, r.user_name)
}

pub(super) fn modify_assoc(
    conn: &mut AnyConnection,
    req: &ModifyAssocQos,
    now: i64,
) -> Result<Vec<String>, StoreError> {
    if req.set_list.is_none()
        && req.add.is_empty()
        && req.remove.is_empty()
        && req.default_qos.is_none()
    {
        return Err(StoreError::NothingToChange);
    }
    let id_of = |conn: &mut AnyConnection, n: &str| live(conn, n).map(|r| r.id);
    let set_list = match &req.set_list {
        Some(l) => Some(
            l.iter()
                .map(|n| id_of(conn, n))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    let add = req
        .add
        .iter()
        .map(|n| id_of(conn, n))
        .collect::<Result<Vec<_>, _>>()?;
    let remove = req
        .remove
        .iter()
        .map(|n| id_of(conn, n))
        .collect::<Result<Vec<_>, _>>()?;
    let default = match req.default_qos.as_deref() {
        None => None,
        Some("") => Some(None),
        Some(n) => Some(Some(id_of(conn, n)?)),
    };
    let targets = super::limits::modify_targets(
        conn,
        &req.clusters,
        &req.accounts,
        &req.users,
        req.user_associations,
    )?;
    let mut own = rows::all_assoc(conn)?;
    let mut changed = Vec::new();
    for row in targets {
        let mine = own.get(&row.id).cloned().unwrap_or_default();
        let mut new = mine.clone();
        if let Some(l) = &set_list {
            new.list = (!l.is_empty()).then(|| l.clone());
            new.add.clear();
            new.remove.clear();
        }
        edit_list(&mut new, &add, &remove);
        if let Some(d) = default {
            new.default = d;
        }
        // The list and default that would be in force after the change must agree.
        let mut trial = own.clone();
        trial.insert(row.id, new.clone());
        let after = resolver(conn, &trial, std::slice::from_ref(&row))?.of(&row);
        if after.default.is_some_and(|d| !after.list.contains(&d)) {
            return Err(StoreError::DefaultQosNotInList);
        }
        if new != mine {
            rows::put_assoc(conn, row.id, &new, now)?;
            own.insert(row.id, new);
            changed.push(assoc_name(&row));
        }
    }
    Ok(changed)
}

/// Applies `QOS+=add QOS-=remove` to an association's own settings: to its own list when it
/// has one, else to its delta on the inherited list (a later `+=` undoes an earlier `-=` of
/// the same QOS and the other way round).
fn edit_list(own: &mut OwnQos, add: &[i64], remove: &[i64]) {
    if let Some(list) = &mut own.list {
        for id in add {
            if !list.contains(id) {
                list.push(*id);
            }
        }
        list.retain(|id| !remove.contains(id));
        return;
    }
    for id in add {
        own.remove.retain(|r| r != id);
        if !own.add.contains(id) {
            own.add.push(*id);
        }
    }
    for id in remove {
        own.add.retain(|a| a != id);
        if !own.remove.contains(id) {
            own.remove.push(*id);
        }
    }
}

/// Records the QOS of a submitted job (sacct `QOS`); a job's QOS does not change.
pub(crate) fn record_job(
    conn: &mut AnyConnection,
    cluster: &str,
    job_id: i64,
    qos: &str,
) -> Result<(), StoreError> {
    if qos.is_empty() {
        return Ok(());
    }
    diesel::delete(
        job_qos::table
            .filter(job_qos::cluster.eq(cluster))
            .filter(job_qos::job_id.eq(job_id)),
    )
    .execute(conn)?;
    diesel::insert_into(job_qos::table)
        .values((
            job_qos::cluster.eq(cluster),
            job_qos::job_id.eq(job_id),
            job_qos::qos.eq(qos),
        ))
        .execute(conn)?;
    Ok(())
}
