//! The federation event log: `fed_events` (each cluster's events by seq), `fed_event_heads`
//! (each cluster's newest and acknowledged seq) and `fed_controllers` (registrations).

use crate::db::schema::{fed_controllers, fed_event_heads, fed_events};
use diesel::prelude::*;

use super::cached;
use crate::store::conn::{AnyConnection, native};

/// One row of `fed_events`.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = fed_events, primary_key(cluster, seq))]
pub struct FedEventRow {
    pub cluster: String,
    pub seq: i64,
    pub kind: i32,
    pub federation: String,
    pub job_id: i64,
    pub other_cluster: String,
    pub state: i64,
    pub exit_code: i32,
    pub flags: i32,
    pub viable: String,
    pub job_desc: Vec<u8>,
    pub time_created: i64,
}

/// Takes the next seq of `cluster`'s log. The head row's update holds its lock until commit,
/// so a cluster's events commit in seq order. A missing head is created (a racing creation
/// fails with a unique violation, which the caller retries).
pub fn next_seq(conn: &mut AnyConnection, cluster: &str) -> QueryResult<i64> {
    let bump = cached::update(
        fed_event_heads::table,
        fed_event_heads::cluster.eq(cluster),
        fed_event_heads::last_seq.eq(fed_event_heads::last_seq + 1),
    );
    let n = native!(conn, c => bump.execute(c))?;
    if n == 0 {
        diesel::insert_into(fed_event_heads::table)
            .values((
                fed_event_heads::cluster.eq(cluster),
                fed_event_heads::last_seq.eq(1_i64),
                fed_event_heads::acked_seq.eq(0_i64),
            ))
            .execute(conn)?;
        return Ok(1);
    }
    fed_event_heads::table
        .find(cluster)
        .select(fed_event_heads::last_seq)
        .get_result(conn)
}

/// Appends an event (its seq from [`next_seq`]).
pub fn insert(conn: &mut AnyConnection, row: &FedEventRow) -> QueryResult<()> {
    native!(conn, c => diesel::insert_into(fed_events::table)
        .values(row)
        .execute(c)
        .map(|_| ()))
}

/// `(last_seq, acked_seq)` of `cluster`'s log; `(0, 0)` before its first event.
pub fn head(conn: &mut AnyConnection, cluster: &str) -> QueryResult<(i64, i64)> {
    Ok(fed_event_heads::table
        .find(cluster)
        .select((fed_event_heads::last_seq, fed_event_heads::acked_seq))
        .get_result(conn)
        .optional()?
        .unwrap_or((0, 0)))
}

/// `cluster`'s events after `after`, in seq order, at most `limit`.
pub fn after(
    conn: &mut AnyConnection,
    cluster: &str,
    after: i64,
    limit: i64,
) -> QueryResult<Vec<FedEventRow>> {
    // A macro, not a value: the selection is typed for one backend.
    macro_rules! page {
        () => {
            fed_events::table
                .filter(fed_events::cluster.eq(cluster))
                .filter(fed_events::seq.gt(after))
                .order(fed_events::seq)
                .select(FedEventRow::as_select())
        };
    }
    match conn {
        // SQLite steps the rows as they are read, so stopping after `limit` reads no more;
        // a `LIMIT ?` would make it prepare the statement again at every page (see
        // `super`'s doc).
        AnyConnection::Sqlite(c) => {
            let limit = usize::try_from(limit).unwrap_or(0);
            page!().load_iter(c)?.take(limit).collect()
        }
        AnyConnection::Mysql(c) => page!().limit(limit).load(c),
        AnyConnection::Postgresql(c) => page!().limit(limit).load(c),
    }
}

/// Moves `cluster`'s acknowledged cursor forward to `seq` and drops the events it covers.
pub fn ack(conn: &mut AnyConnection, cluster: &str, seq: i64) -> QueryResult<()> {
    cached::update(
        fed_event_heads::table,
        fed_event_heads::cluster
            .eq(cluster)
            .and(fed_event_heads::acked_seq.lt(seq)),
        fed_event_heads::acked_seq.eq(seq),
    )
    .execute(conn)?;
    diesel::delete(
        fed_events::table
            .filter(fed_events::cluster.eq(cluster))
            .filter(fed_events::seq.le(seq)),
    )
    .execute(conn)
    .map(|_| ())
}

/// The recorded start time of `cluster`'s controller.
pub fn controller_start(conn: &mut AnyConnection, cluster: &str) -> QueryResult<Option<i64>> {
    fed_controllers::table
        .find(cluster)
        .select(fed_controllers::start_time)
        .get_result(conn)
        .optional()
}

/// Records a registration of `cluster`'s controller.
pub fn set_controller(
    conn: &mut AnyConnection,
    cluster: &str,
    start_time: i64,
    now: i64,
) -> QueryResult<()> {
    let n = cached::update(
        fed_controllers::table,
        fed_controllers::cluster.eq(cluster),
        (
            fed_controllers::start_time.eq(start_time),
            fed_controllers::registered_at.eq(now),
        ),
    )
    .execute(conn)?;
    if n == 0 {
        diesel::insert_into(fed_controllers::table)
            .values((
                fed_controllers::cluster.eq(cluster),
                fed_controllers::start_time.eq(start_time),
                fed_controllers::registered_at.eq(now),
            ))
            .execute(conn)?;
    }
    Ok(())
}
