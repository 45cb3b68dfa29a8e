//! The `qos` table (one row per QOS, soft-deleted) and `assoc_qos` (the QOS list and default
//! QOS an association sets itself).

use std::collections::HashMap;

use diesel::prelude::*;
use sluice_vocab::assoc_limits::Tres;
use sluice_vocab::qos::{Qos, QosFlags, QosLimits, UsageFactor};

use crate::db::schema::{assoc_qos, qos};
use crate::store::conn::AnyConnection;

/// One row of `qos`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = qos)]
#[diesel(treat_none_as_null = true)]
#[diesel(treat_none_as_default_value = false)]
pub struct QosRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub priority: i64,
    pub flags: String,
    pub max_wall_minutes: Option<i64>,
    pub max_tres_per_job: String,
    pub max_tres_per_user: String,
    pub max_jobs_per_user: Option<i64>,
    pub max_submit_jobs_per_user: Option<i64>,
    pub grp_tres: String,
    pub grp_jobs: Option<i64>,
    pub grp_submit_jobs: Option<i64>,
    pub deleted: bool,
    pub mod_time: i64,
    pub max_tres_mins_per_job: String,
    pub max_tres_per_account: String,
    pub max_jobs_per_account: Option<i64>,
    pub max_submit_jobs_per_account: Option<i64>,
    pub min_tres_per_job: String,
    pub max_tres_per_node: String,
    pub grp_tres_mins: String,
    /// `UsageFactor` in millionths.
    pub usage_factor: i64,
}

fn count(v: Option<i64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

/// A stored TRES list; an unreadable one (never written by us) limits nothing.
fn tres(s: &str) -> Tres {
    if s.is_empty() {
        return Tres::default();
    }
    Tres::from_stored(s).unwrap_or_default()
}

impl QosRow {
    /// The row storing `q` under `id`.
    pub fn new(id: i64, q: &Qos, now: i64) -> Self {
        let l = &q.limits;
        Self {
            id,
            name: q.name.clone(),
            description: q.description.clone(),
            priority: i64::from(q.priority),
            flags: q.flags.to_string(),
            max_wall_minutes: l.max_wall_minutes.map(i64::from),
            max_tres_per_job: l.max_tres_per_job.to_stored(),
            max_tres_per_user: l.max_tres_per_user.to_stored(),
            max_jobs_per_user: l.max_jobs_per_user.map(i64::from),
            max_submit_jobs_per_user: l.max_submit_jobs_per_user.map(i64::from),
            grp_tres: l.grp_tres.to_stored(),
            grp_jobs: l.grp_jobs.map(i64::from),
            grp_submit_jobs: l.grp_submit_jobs.map(i64::from),
            deleted: false,
            mod_time: now,
            max_tres_mins_per_job: l.max_tres_mins_per_job.to_stored(),
            max_tres_per_account: l.max_tres_per_account.to_stored(),
            max_jobs_per_account: l.max_jobs_per_account.map(i64::from),
            max_submit_jobs_per_account: l.max_submit_jobs_per_account.map(i64::from),
            min_tres_per_job: l.min_tres_per_job.to_stored(),
            max_tres_per_node: l.max_tres_per_node.to_stored(),
            grp_tres_mins: l.grp_tres_mins.to_stored(),
            usage_factor: i64::from(q.usage_factor.millionths()),
        }
    }

    /// The QOS this row holds.
    pub fn qos(&self) -> Qos {
        Qos {
            name: self.name.clone(),
            description: self.description.clone(),
            priority: u32::try_from(self.priority).unwrap_or(0),
            flags: QosFlags::parse(&self.flags).unwrap_or_default(),
            limits: QosLimits {
                max_wall_minutes: count(self.max_wall_minutes),
                max_tres_per_job: tres(&self.max_tres_per_job),
                max_tres_per_user: tres(&self.max_tres_per_user),
                max_jobs_per_user: count(self.max_jobs_per_user),
                max_submit_jobs_per_user: count(self.max_submit_jobs_per_user),
                grp_tres: tres(&self.grp_tres),
                grp_jobs: count(self.grp_jobs),
                grp_submit_jobs: count(self.grp_submit_jobs),
                max_tres_mins_per_job: tres(&self.max_tres_mins_per_job),
                max_tres_per_account: tres(&self.max_tres_per_account),
                max_jobs_per_account: count(self.max_jobs_per_account),
                max_submit_jobs_per_account: count(self.max_submit_jobs_per_account),
                min_tres_per_job: tres(&self.min_tres_per_job),
                max_tres_per_node: tres(&self.max_tres_per_node),
                grp_tres_mins: tres(&self.grp_tres_mins),
            },
            // One out of range (never written by us) counts as Slurm's default.
            usage_factor: UsageFactor::from_millionths(self.usage_factor).unwrap_or_default(),
        }
    }
}

/// Every QOS row, deleted ones too, by id.
pub fn all(conn: &mut AnyConnection) -> QueryResult<Vec<QosRow>> {
    qos::table
        .order(qos::id)
        .select(QosRow::as_select())
        .load(conn)
}

/// The row named `name`, deleted or not.
pub fn by_name(conn: &mut AnyConnection, name: &str) -> QueryResult<Option<QosRow>> {
    qos::table
        .filter(qos::name.eq(name))
        .select(QosRow::as_select())
        .get_result(conn)
        .optional()
}

/// The next free id (the largest plus one).
pub fn next_id(conn: &mut AnyConnection) -> QueryResult<i64> {
    let max: Option<i64> = qos::table.select(diesel::dsl::max(qos::id)).first(conn)?;
    Ok(max.unwrap_or(0) + 1)
}

/// Inserts a new row.
pub fn insert(conn: &mut AnyConnection, row: &QosRow) -> QueryResult<()> {
    diesel::insert_into(qos::table).values(row).execute(conn)?;
    Ok(())
}

/// Replaces the row with `row`'s id.
pub fn update(conn: &mut AnyConnection, row: &QosRow) -> QueryResult<()> {
    diesel::update(qos::table.find(row.id))
        .set(row)
        .execute(conn)?;
    Ok(())
}

/// One row of `assoc_qos`: what an association sets itself (NULL: inherited).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = assoc_qos)]
#[diesel(treat_none_as_default_value = false)]
pub struct AssocQosRow {
    pub assoc_id: i64,
    pub qos_ids: Option<String>,
    pub default_qos_id: Option<i64>,
    pub mod_time: i64,
}

/// What an association sets itself: its QOS list and its default QOS (`None`: inherited).
/// Without a list of its own it may keep a delta on the inherited one (`QOS+=`/`QOS-=`, as
/// Slurm's `delta_qos`): the list in force is then the parent's, whatever it becomes, plus
/// `add` minus `remove`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnQos {
    /// The QOS ids it may use.
    pub list: Option<Vec<i64>>,
    /// Its default QOS id.
    pub default: Option<i64>,
    /// Without a list: ids added to the inherited list.
    pub add: Vec<i64>,
    /// Without a list: ids taken out of the inherited list.
    pub remove: Vec<i64>,
}

impl OwnQos {
    /// The stored form of the list or the delta (`qos_ids`): `1,2` for a list, `+3,-4` for
    /// a delta, NULL for neither.
    fn stored_ids(&self) -> Option<String> {
        let join = |items: Vec<String>| items.join(",");
        match &self.list {
            Some(l) => Some(join(l.iter().map(i64::to_string).collect())),
            None if self.add.is_empty() && self.remove.is_empty() => None,
            None => Some(join(
                self.add
                    .iter()
                    .map(|id| format!("+{id}"))
                    .chain(self.remove.iter().map(|id| format!("-{id}")))
                    .collect(),
            )),
        }
    }
}

impl AssocQosRow {
    fn own(&self) -> OwnQos {
        let mut own = OwnQos {
            default: self.default_qos_id,
            ..OwnQos::default()
        };
        let Some(ids) = self.qos_ids.as_deref() else {
            return own;
        };
        let items: Vec<&str> = ids
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect();
        if items.iter().any(|i| i.starts_with(['+', '-'])) {
            for item in items {
                match item.strip_prefix('-') {
                    Some(id) => own.remove.extend(id.parse::<i64>().ok()),
                    None => own
                        .add
                        .extend(item.trim_start_matches('+').parse::<i64>().ok()),
                }
            }
        } else {
            own.list = Some(items.iter().filter_map(|id| id.parse().ok()).collect());
        }
        own
    }
}

/// Every association's own QOS settings, by association id.
pub fn all_assoc(conn: &mut AnyConnection) -> QueryResult<HashMap<i64, OwnQos>> {
    Ok(assoc_qos::table
        .select(AssocQosRow::as_select())
        .load(conn)?
        .into_iter()
        .map(|r| (r.assoc_id, r.own()))
        .collect())
}

/// Stores `own` as association `assoc_id`'s settings; setting nothing removes its row.
pub fn put_assoc(
    conn: &mut AnyConnection,
    assoc_id: i64,
    own: &OwnQos,
    now: i64,
) -> QueryResult<()> {
    diesel::delete(assoc_qos::table.find(assoc_id)).execute(conn)?;
    if *own != OwnQos::default() {
        let row = AssocQosRow {
            assoc_id,
            qos_ids: own.stored_ids(),
            default_qos_id: own.default,
            mod_time: now,
        };
        diesel::insert_into(assoc_qos::table)
            .values(row)
            .execute(conn)?;
    }
    Ok(())
}
