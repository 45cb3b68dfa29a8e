//! The `assoc_limits` table: the limits an association sets itself (NULL or an empty TRES
//! list: not set here), one row per association that sets any.

use std::collections::HashMap;

use diesel::prelude::*;
use sluice_vocab::assoc_limits::{AssocLimits, Tres};

use crate::db::schema::assoc_limits;
use crate::store::conn::AnyConnection;

/// One row of `assoc_limits`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = assoc_limits)]
#[diesel(treat_none_as_default_value = false)]
pub struct LimitsRow {
    pub assoc_id: i64,
    pub max_jobs: Option<i64>,
    pub max_submit_jobs: Option<i64>,
    pub max_wall_minutes: Option<i64>,
    pub max_tres_per_job: String,
    pub grp_jobs: Option<i64>,
    pub grp_submit_jobs: Option<i64>,
    pub grp_tres: String,
    pub mod_time: i64,
    pub grp_tres_mins: String,
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

impl LimitsRow {
    /// The row storing `limits` for association `assoc_id`.
    pub fn new(assoc_id: i64, limits: &AssocLimits, now: i64) -> Self {
        Self {
            assoc_id,
            max_jobs: limits.max_jobs.map(i64::from),
            max_submit_jobs: limits.max_submit_jobs.map(i64::from),
            max_wall_minutes: limits.max_wall_minutes.map(i64::from),
            max_tres_per_job: limits.max_tres_per_job.to_stored(),
            grp_jobs: limits.grp_jobs.map(i64::from),
            grp_submit_jobs: limits.grp_submit_jobs.map(i64::from),
            grp_tres: limits.grp_tres.to_stored(),
            mod_time: now,
            grp_tres_mins: limits.grp_tres_mins.to_stored(),
        }
    }

    /// The limits this row sets.
    pub fn limits(&self) -> AssocLimits {
        AssocLimits {
            max_jobs: count(self.max_jobs),
            max_submit_jobs: count(self.max_submit_jobs),
            max_wall_minutes: count(self.max_wall_minutes),
            max_tres_per_job: tres(&self.max_tres_per_job),
            grp_jobs: count(self.grp_jobs),
            grp_submit_jobs: count(self.grp_submit_jobs),
            grp_tres: tres(&self.grp_tres),
            grp_tres_mins: tres(&self.grp_tres_mins),
        }
    }
}

/// Every association's own limits, by association id.
pub fn all(conn: &mut AnyConnection) -> QueryResult<HashMap<i64, AssocLimits>> {
    Ok(assoc_limits::table
        .select(LimitsRow::as_select())
        .load(conn)?
        .into_iter()
        .map(|r| (r.assoc_id, r.limits()))
        .collect())
}

/// The limits association `assoc_id` sets itself (none set: the default).
pub fn get(conn: &mut AnyConnection, assoc_id: i64) -> QueryResult<AssocLimits> {
    Ok(assoc_limits::table
        .find(assoc_id)
        .select(LimitsRow::as_select())
        .get_result(conn)
        .optional()?
        .map(|r| r.limits())
        .unwrap_or_default())
}

/// Stores `limits` as association `assoc_id`'s own; setting none removes its row.
pub fn put(
    conn: &mut AnyConnection,
    assoc_id: i64,
    limits: &AssocLimits,
    now: i64,
) -> QueryResult<()> {
    diesel::delete(assoc_limits::table.find(assoc_id)).execute(conn)?;
    if *limits != AssocLimits::default() {
        diesel::insert_into(assoc_limits::table)
            .values(LimitsRow::new(assoc_id, limits, now))
            .execute(conn)?;
    }
    Ok(())
}
