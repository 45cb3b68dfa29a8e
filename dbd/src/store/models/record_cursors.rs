//! The `record_cursors` table: per cluster and controller outbox stream, the seq of the last
//! accounting record applied.

use crate::db::schema::record_cursors;
use diesel::prelude::*;

use super::cached;
use crate::store::conn::AnyConnection;

/// A stream id as stored: the signed view of its 64 bits (every backend has signed BIGINT).
pub fn stored_stream(stream: u64) -> i64 {
    i64::from_ne_bytes(stream.to_ne_bytes())
}

/// The applied seq of `cluster`'s stream `stream`, if it ever sent records.
pub fn get(conn: &mut AnyConnection, cluster: &str, stream: u64) -> QueryResult<Option<i64>> {
    record_cursors::table
        .find((cluster, stored_stream(stream)))
        .select(record_cursors::applied_seq)
        .get_result(conn)
        .optional()
}

/// Creates the cursor of `cluster`'s stream `stream` at `seq`.
pub fn insert(conn: &mut AnyConnection, cluster: &str, stream: u64, seq: i64) -> QueryResult<()> {
    diesel::insert_into(record_cursors::table)
        .values((
            record_cursors::cluster.eq(cluster),
            record_cursors::stream_id.eq(stored_stream(stream)),
            record_cursors::applied_seq.eq(seq),
        ))
        .execute(conn)
        .map(|_| ())
}

/// Moves the cursor of `cluster`'s stream `stream` to `seq`.
pub fn set(conn: &mut AnyConnection, cluster: &str, stream: u64, seq: i64) -> QueryResult<()> {
    cached::update(
        record_cursors::table,
        record_cursors::cluster
            .eq(cluster)
            .and(record_cursors::stream_id.eq(stored_stream(stream))),
        record_cursors::applied_seq.eq(seq),
    )
    .execute(conn)
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::stored_stream;

    #[test]
    fn stream_ids_keep_all_64_bits() {
        assert_eq!(stored_stream(1), 1);
        assert_eq!(stored_stream(u64::MAX), -1);
        assert_eq!(stored_stream(1 << 63), i64::MIN);
    }
}
