//! `UPDATE` statements that stay prepared.
//!
//! diesel never caches an `UPDATE` (its `walk_ast` marks every one unsafe to cache, since a
//! changeset's `Option` fields make the SQL text vary with the values), so SQLite parsed and
//! planned each one again at every run: the updates of the federation and ingest paths (a
//! job's row, the event heads, the record cursor) were nine tenths of the dbd's statement
//! preparing, about 7% of its CPU per federated job. [`update`] writes the same statement
//! without that mark and without a static query id, so diesel's statement cache keeps it
//! under its SQL text and bind types, which is right whatever the text turns out to be.
//!
//! Only for filters of a bounded number of shapes (key columns, compare-and-set columns): an
//! `IN (...)` list of any length would add a cached statement per length, and diesel's cache
//! is never trimmed.

use diesel::backend::Backend;
use diesel::expression::{AppearsOnTable, Expression};
use diesel::query_builder::{AsChangeset, AstPass, QueryFragment, QueryId};
use diesel::query_source::{QuerySource, Table};
use diesel::sql_types::Bool;
use diesel::{QueryResult, RunQueryDsl};

/// `UPDATE table SET values WHERE filter`, cached by its SQL text (see the module doc).
#[derive(Debug, Clone)]
pub struct Update<F, W, V> {
    /// The table's name, as it renders.
    from: F,
    filter: W,
    values: V,
}

/// `UPDATE table SET values WHERE filter`, prepared once per connection and SQL text.
pub fn update<T, W, V>(
    table: T,
    filter: W,
    values: V,
) -> Update<<T as QuerySource>::FromClause, W, V::Changeset>
where
    T: Table,
    W: Expression<SqlType = Bool> + AppearsOnTable<T>,
    V: AsChangeset<Target = T>,
{
    Update {
        from: table.from_clause(),
        filter,
        values: values.as_changeset(),
    }
}

impl<F, W, V> QueryId for Update<F, W, V> {
    type QueryId = ();
    // No static id: the cache keys the statement by its SQL text and bind types.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<F, W, V, DB> QueryFragment<DB> for Update<F, W, V>
where
    DB: Backend,
    F: QueryFragment<DB>,
    W: QueryFragment<DB>,
    V: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE ");
        self.from.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.values.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.filter.walk_ast(out.reborrow())
    }
}

impl<F, W, V, Conn> RunQueryDsl<Conn> for Update<F, W, V> {}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use diesel::connection::InstrumentationEvent;
    use diesel::prelude::*;

    use super::update;
    use crate::store::conn::{AnyConnection, open};

    diesel::table! {
        counters (name) {
            name -> Text,
            value -> BigInt,
        }
    }

    /// The SQL of every statement the connection added to its cache.
    fn record_caching(conn: &mut AnyConnection) -> Arc<Mutex<Vec<String>>> {
        let cached = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&cached);
        conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event {
                seen.lock().unwrap().push(sql.to_string());
            }
        });
        cached
    }

    fn bump(conn: &mut AnyConnection, name: &str, value: i64, cached: bool) -> usize {
        if cached {
            update(
                counters::table,
                counters::name.eq(name),
                counters::value.eq(value),
            )
            .execute(conn)
            .unwrap()
        } else {
            diesel::update(counters::table.find(name))
                .set(counters::value.eq(value))
                .execute(conn)
                .unwrap()
        }
    }

    #[test]
    fn an_update_is_prepared_once_and_still_applies_its_values() {
        let mut conn = open("sqlite://:memory:").unwrap();
        diesel::sql_query("CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)")
            .execute(&mut conn)
            .unwrap();
        diesel::sql_query("INSERT INTO counters VALUES ('a', 0), ('b', 0)")
            .execute(&mut conn)
            .unwrap();
        let cached = record_caching(&mut conn);
        // diesel alone caches no update.
        assert_eq!(bump(&mut conn, "a", 1, false), 1);
        assert_eq!(bump(&mut conn, "a", 2, false), 1);
        assert!(cached.lock().unwrap().is_empty(), "{cached:?}");
        // Cached by its text: prepared at the first run only, whatever the values.
        assert_eq!(bump(&mut conn, "a", 3, true), 1);
        assert_eq!(bump(&mut conn, "b", 4, true), 1);
        assert_eq!(bump(&mut conn, "zz", 5, true), 0, "no such row");
        let texts = cached.lock().unwrap().clone();
        assert_eq!(texts.len(), 1, "{texts:?}");
        assert!(texts[0].starts_with("UPDATE"), "{texts:?}");
        let rows: Vec<(String, i64)> = counters::table
            .order(counters::name)
            .load(&mut conn)
            .unwrap();
        assert_eq!(rows, [("a".to_string(), 3), ("b".to_string(), 4)]);
    }
}
