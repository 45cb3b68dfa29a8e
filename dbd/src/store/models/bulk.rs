//! Writing many rows at once, the way each backend takes them fastest (the ingest path's
//! inserts: a 1,000-record batch writes hundreds of job runs).
//!
//! * PostgreSQL: one `COPY ... FROM STDIN (FORMAT binary)` for all the rows: a single statement
//!   whatever their number, with no SQL text to parse and no parameters to bind (a 200-row
//!   INSERT of `job_runs` carries 6,400 of them, and PostgreSQL parses and plans it anew each
//!   time).
//! * SQLite and MariaDB/MySQL: multi-row INSERTs of [`INSERT_CHUNK`] rows whose statements are
//!   prepared once and then reused (diesel caches a statement only when its shape is known at
//!   compile time, as for a `&[T; N]`). SQLite, in process, writes the remainder through
//!   cached statements of 50, 10 and 1 rows, as a fresh statement costs more to compile than
//!   a few more calls; MySQL sends it in one more INSERT, as each statement is a round trip.
//!
//! The rows' `Insertable` derive needs `#[diesel(treat_none_as_default_value = false)]`, which
//! `COPY` requires (it has no DEFAULT): a `None` is written as NULL, which is also the default
//! of every nullable column written here (the step usage columns), so nothing else changes.

/// Rows per multi-row INSERT: well below every backend's bind-parameter limit (32 columns ×
/// 200 rows = 6,400; MySQL allows 65,535, SQLite 32,766).
pub const INSERT_CHUNK: usize = 200;
/// Ids per `IN (...)` list.
pub const IN_CHUNK: usize = 500;

/// A multi-row INSERT of `rows` into `table`, run on the concrete connection: diesel's
/// `MultiConnection` has no batch insert, and one statement per row would cost a round trip each
/// on MariaDB and PostgreSQL.
macro_rules! insert_rows {
    ($conn:expr, $table:expr, $rows:expr) => {
        match $conn {
            AnyConnection::Sqlite(c) => diesel::insert_into($table).values($rows).execute(c),
            AnyConnection::Mysql(c) => diesel::insert_into($table).values($rows).execute(c),
            AnyConnection::Postgresql(c) => diesel::insert_into($table).values($rows).execute(c),
        }
    };
}
pub(crate) use insert_rows;

/// Inserts every row of the slice `$rows` into `$table` (see the module doc); evaluates to a
/// `QueryResult<()>`.
macro_rules! insert_all {
    ($conn:expr, $table:expr, $rows:expr) => {{
        let rows = $rows;
        let result: diesel::QueryResult<()> = if rows.is_empty() {
            Ok(())
        } else {
            match $conn {
                AnyConnection::Postgresql(c) => diesel::copy_from($table)
                    .from_insertable(rows)
                    .execute(c)
                    .map(|_| ()),
                AnyConnection::Sqlite(c) => $crate::store::models::bulk::in_chunks!(
                    c,
                    rows,
                    [$crate::store::models::bulk::INSERT_CHUNK, 50, 10, 1],
                    |chunk| diesel::insert_into($table).values(chunk)
                ),
                AnyConnection::Mysql(c) => $crate::store::models::bulk::in_chunks!(
                    c,
                    rows,
                    [$crate::store::models::bulk::INSERT_CHUNK],
                    |chunk| diesel::insert_into($table).values(chunk)
                ),
            }
        };
        result
    }};
}
pub(crate) use insert_all;

/// Runs the statement `$stmt` (built from `$chunk`, a `&[T; N]` or the rest `&[T]`) over
/// `$rows` in chunks of the sizes listed, largest first: as many of the first size as fit,
/// then of the next, and so on, each size a statement prepared once and cached; rows left
/// after the last size go in one uncached statement (none when the last size is 1).
macro_rules! in_chunks {
    ($c:expr, $rows:expr, [$($n:expr),+], |$chunk:ident| $stmt:expr) => {{
        let mut rest = $rows;
        let mut result: diesel::QueryResult<()> = Ok(());
        $(
            if result.is_ok() {
                let (full, tail) = rest.as_chunks::<{ $n }>();
                for $chunk in full {
                    if let Err(e) = $stmt.execute($c) {
                        result = Err(e);
                        break;
                    }
                }
                rest = tail;
            }
        )+
        if result.is_ok() && !rest.is_empty() {
            let $chunk = rest;
            result = $stmt.execute($c).map(|_| ());
        }
        result
    }};
}
pub(crate) use in_chunks;
