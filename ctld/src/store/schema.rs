//! The state database's schema, its version (`PRAGMA user_version`) and its migrations.
//!
//! ```sql
//! meta(key TEXT PRIMARY KEY, value BLOB)     -- 'cluster', 'next_seq', 'job_ids' (JSON ranges),
//!                                            -- 'stream_id' (the outbox stream, see below),
//!                                            -- 'partitions' (JSON [name, state] pairs)
//! jobs(id INTEGER PRIMARY KEY,               -- the job id
//!      format INTEGER,                       -- record format (see `codec`)
//!      launch_owner INTEGER,                 -- launch(owner) it uses
//!      body BLOB)                            -- JobSnap in that format
//! launch(owner INTEGER PRIMARY KEY,          -- LaunchSpec, one per job or array
//!        body BLOB, format INTEGER)          -- (format since version 3; 1 = JSON before)
//! nodes(name TEXT PRIMARY KEY, format INTEGER, body BLOB)   -- NodeSnap
//! acct_outbox(seq INTEGER PRIMARY KEY, record BLOB)  -- proto AcctRecord (seq set), prost-encoded
//! ```
//!
//! The outbox's seqs count within a stream named by `stream_id`, a random 64-bit integer made
//! when the store is created (SQLite's `random()`, seeded from the OS). The dbd keeps a cursor
//! per (cluster, stream), so a wiped `StateSaveLocation` starts a new stream whose seqs from 1
//! are not mistaken for records the dbd already has.
//!
//! Durability: WAL, with `synchronous` as `SluiceStateSync` says. `normal` (the default): a
//! commit is in the WAL file (written, not yet fsynced) when `COMMIT` returns, so killing the
//! process (`kill -9`) loses nothing: the OS still has the pages and the next open replays the
//! WAL. Only an OS crash or power loss may drop the last commits (never corrupting the
//! database), which Slurm's own state files risk too. `full` fsyncs the WAL on every commit, so
//! a commit also survives power loss, at the cost of one fsync per group commit.

use rusqlite::{Connection, params};
use sluice_vocab::cluster_conf::StateSync;

/// The schema version this controller writes.
pub const SCHEMA_VERSION: i64 = 3;

/// How long a writer waits for another connection's write lock (the shipper's deletes).
pub const BUSY_TIMEOUT_MS: u64 = 5_000;

const V1: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    format INTEGER NOT NULL,
    launch_owner INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX jobs_launch_owner ON jobs (launch_owner);
CREATE TABLE launch (owner INTEGER PRIMARY KEY, body BLOB NOT NULL);
CREATE TABLE nodes (name TEXT PRIMARY KEY, format INTEGER NOT NULL, body BLOB NOT NULL);
CREATE TABLE acct_outbox (seq INTEGER PRIMARY KEY, record BLOB NOT NULL);
";

/// Sets the connection's journal, durability (`sync`) and locking options.
pub fn configure(conn: &Connection, sync: StateSync) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let level = match sync {
        StateSync::Normal => "NORMAL",
        StateSync::Full => "FULL",
    };
    conn.pragma_update(None, "synchronous", level)?;
    // No memory-mapped reads of the database file: a mapped page the file system can no
    // longer back (a file cut short, a device gone) is a SIGBUS, where read(2) is an error.
    conn.pragma_update(None, "mmap_size", 0)?;
    Ok(())
}

/// The outbox stream id (see the module doc); `None` when the schema is older than version 2.
pub fn stream_id(conn: &Connection) -> rusqlite::Result<Option<u64>> {
    use rusqlite::OptionalExtension;
    // Cached: the shipper reads it with every batch.
    let v: Option<i64> = conn
        .prepare_cached("SELECT value FROM meta WHERE key = 'stream_id'")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(v.map(|v| u64::from_ne_bytes(v.to_ne_bytes())))
}

/// What [`migrate`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// The schema is at [`SCHEMA_VERSION`] (created or upgraded as needed).
    Current,
    /// The database was written by a newer controller, with this version.
    TooNew(i64),
}

/// Creates the schema or upgrades it to [`SCHEMA_VERSION`], in one transaction.
pub fn migrate(conn: &mut Connection) -> rusqlite::Result<Migration> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Ok(Migration::TooNew(version));
    }
    if version < 1 {
        tx.execute_batch(V1)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('next_seq', ?1)",
            params![1_i64],
        )?;
    }
    if version < 2 {
        // A store of version 1 ships its outbox as a stream of its own from now on.
        tx.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('stream_id', random())",
            [],
        )?;
    }
    if version < 3 {
        // Launch specs say their encoding, as jobs and nodes always did: those saved so far
        // are JSON (`codec::JSON`) and stay so (a spec is written once per owner).
        tx.execute_batch("ALTER TABLE launch ADD COLUMN format INTEGER NOT NULL DEFAULT 1;")?;
    }
    // Later versions: `if version < 4 { ... }`, each step moving the data forward.
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(Migration::Current)
}
