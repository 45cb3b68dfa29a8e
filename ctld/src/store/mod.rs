//! The controller's durable state under `StateSaveLocation`: one SQLite file holding the jobs,
//! the node states, the job-id source and the accounting outbox (see [`schema`] for the
//! tables and the durability argument).
//!
//! The runtime calls [`StateStore::commit`] after each batch of core handlers, with the save
//! hints and accounting records the core put in its outbox: everything of the batch lands in
//! one transaction, so after a crash the store holds either all of a batch or none of it, and
//! an accounting record is durable exactly when the state change it reports is. The
//! [`crate::shipper`] reads the outbox through its own connection.

pub mod acct;
pub mod codec;
mod dbd_cache;
mod fed;
mod load;
pub mod schema;
mod writable;

pub use writable::{check_writable, mark_read};

pub use crate::core::snapshot::Snapshot;

use crate::core::snapshot::{JobSnap, NodeSnap, SNAPSHOT_FORMAT, part_state_name};

const _: () = assert!(SNAPSHOT_FORMAT == codec::CURRENT);
use crate::core::{AcctRecord, Core, SaveHint};
use prost::Message;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sluice_vocab::cluster_conf::StateSync;
use sluice_vocab::{FedJobId, NodeIdx};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The state file's name inside `StateSaveLocation`.
pub const STATE_FILE: &str = "ctld-state.sqlite3";

/// What can go wrong with the state store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `StateSaveLocation` or its state file cannot be created or made private.
    #[error("cannot set up StateSaveLocation {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// SQLite failed (open, read or write).
    #[error("state database {path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// A state file cannot be opened for writing now (immutable, append-only, read-only file
    /// system); nothing was tried, since SQLite would write it through a memory mapping.
    #[error("state file {path} cannot be written: {source}")]
    NotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file was written by a newer controller.
    #[error(
        "state database {path} has schema version {found}; this controller knows up to {known}"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// A saved record does not decode.
    #[error("state database {path}: saved {what} {key} is unreadable: {reason}")]
    Corrupt {
        path: PathBuf,
        what: &'static str,
        key: String,
        reason: String,
    },
}

/// The controller's state database (one writer: the task that owns the core).
pub struct StateStore {
    path: PathBuf,
    conn: Connection,
    /// The seq the next accounting record gets (never reused, even once shipped and deleted).
    next_seq: u64,
    /// The outbox stream the seqs count in (see [`schema`]).
    stream_id: u64,
    /// The id ranges last saved.
    saved_ids: Option<Vec<(u32, u32)>>,
    /// The cluster name last saved.
    saved_cluster: Option<String>,
    /// Owners whose launch spec is saved.
    launches: HashSet<u32>,
    /// The federation view and event cursor last saved.
    saved_fed: fed::SavedFed,
    /// The generation of the dbd's lists last saved (see [`dbd_cache`]).
    saved_dbd_generation: u64,
}

impl StateStore {
    /// The state file for `StateSaveLocation` `dir`.
    pub fn file(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// Opens (creating `dir`, the file and the schema as needed) the store in `dir`, with the
    /// default durability (`SluiceStateSync=normal`).
    pub fn open(dir: &Path) -> Result<StateStore, StoreError> {
        Self::open_with(dir, StateSync::default())
    }

    /// [`StateStore::open`] with the durability `sync` (`SluiceStateSync`).
    pub fn open_with(dir: &Path, sync: StateSync) -> Result<StateStore, StoreError> {
        // Job scripts and environments are in here: the directory is the controller's alone
        // (0700) and so are its files (0600; SQLite gives the WAL and shared-memory files the
        // database's mode), also those an earlier version left readable.
        let private = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::CreateDir { path, source }
        };
        sluice_wire::daemon::private_dir(dir).map_err(private(dir))?;
        let path = Self::file(dir);
        sluice_wire::daemon::private_file(&path).map_err(private(&path))?;
        sluice_wire::daemon::private_files_in(dir).map_err(private(dir))?;
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let mut conn = Connection::open(&path).map_err(sql)?;
        schema::configure(&conn, sync).map_err(sql)?;
        if let schema::Migration::TooNew(found) = schema::migrate(&mut conn).map_err(sql)? {
            return Err(StoreError::TooNew {
                path,
                found,
                known: schema::SCHEMA_VERSION,
            });
        }
        let mut store = StateStore::over(path, conn);
        store.read_cursors()?;
        Ok(store)
    }

    /// A store over an open connection, its cursors not read yet.
    fn over(path: PathBuf, conn: Connection) -> StateStore {
        StateStore {
            path,
            conn,
            next_seq: 1,
            stream_id: 0,
            saved_ids: None,
            saved_cluster: None,
            launches: HashSet::new(),
            saved_fed: fed::SavedFed::default(),
            saved_dbd_generation: 0,
        }
    }

    /// Where the state file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The seq the next accounting record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The outbox stream id the shipper sends with every batch: random, made with the store, so
    /// a store created afresh (a wiped `StateSaveLocation`) has a new one.
    pub fn stream_id(&self) -> u64 {
        self.stream_id
    }

    /// How many accounting records wait in the outbox for the shipper.
    pub fn outbox_len(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM acct_outbox", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| self.sql(e))
    }

    /// In ONE transaction: saves the jobs and nodes named by `saves` as `core` has them now (a
    /// job no longer in the core is deleted, whatever the hint), appends `acct` to the
    /// outbox with consecutive seqs, and saves the cluster name and job-id source when they
    /// changed. On error nothing is written and the store is as before.
    pub fn commit(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
    ) -> Result<(), StoreError> {
        self.check_writable()?;
        let mut pending = Pending::default();
        self.write(core, saves, acct, &mut pending)
            .map_err(|e| self.sql(e))?;
        // Committed; a failure of this read changes nothing written.
        if let Err(e) = mark_read(&self.conn) {
            tracing::debug!("state read after commit failed: {e}");
        }
        // The transaction is committed: only now do the cursors move.
        self.next_seq = pending.next_seq;
        if let Some(ids) = pending.ids {
            self.saved_ids = Some(ids);
        }
        if let Some(name) = pending.cluster {
            self.saved_cluster = Some(name);
        }
        if let Some(saved) = pending.fed {
            self.saved_fed = saved;
        }
        if let Some(generation) = pending.dbd_generation {
            self.saved_dbd_generation = generation;
        }
        self.launches.extend(pending.launches_added);
        for owner in pending.launches_removed {
            self.launches.remove(&owner);
        }
        Ok(())
    }

    fn write(
        &mut self,
        core: &Core,
        saves: &[SaveHint],
        acct: &[AcctRecord],
        pending: &mut Pending,
    ) -> rusqlite::Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        pending.next_seq = self.next_seq;
        if !acct.is_empty() {
            let mut ins =
                tx.prepare_cached("INSERT INTO acct_outbox (seq, record) VALUES (?1, ?2)")?;
            for rec in acct {
                let seq = pending.next_seq;
                ins.execute(params![
                    seq_param(seq),
                    acct::to_proto(rec, seq).encode_to_vec()
                ])?;
                pending.next_seq += 1;
            }
            tx.prepare_cached("UPDATE meta SET value = ?1 WHERE key = 'next_seq'")?
                .execute(params![seq_param(pending.next_seq)])?;
        }
        let mut jobs_seen: HashSet<FedJobId> = HashSet::new();
        let mut nodes_seen: HashSet<NodeIdx> = HashSet::new();
        let mut parts_saved = false;
        for hint in saves {
            match *hint {
                SaveHint::Job(id) | SaveHint::JobPurged(id) if jobs_seen.insert(id) => {
                    match core.job(id) {
                        Some(job) => {
                            put_job(&tx, &JobSnap::of(core, job), &self.launches, pending)?
                        }
                        None => delete_job(&tx, id.get(), pending)?,
                    }
                }
                SaveHint::Node(i) if nodes_seen.insert(i) => {
                    if let Some(node) = core.nodes().get(i.get() as usize) {
                        let body = codec::encode(&NodeSnap::of(node))?;
                        tx.prepare_cached(
                            "INSERT OR REPLACE INTO nodes (name, format, body) VALUES (?1, ?2, ?3)",
                        )?
                        .execute(params![
                            node.name,
                            codec::CURRENT,
                            body
                        ])?;
                    }
                }
                SaveHint::Partitions if !parts_saved => {
                    parts_saved = true;
                    let states: Vec<(String, &str)> = core
                        .partitions()
                        .iter()
                        .map(|p| (p.name.clone(), part_state_name(p.state)))
                        .collect();
                    put_meta(&tx, "partitions", &json(&states)?)?;
                }
                _ => {}
            }
        }
        let ids = core.ids.ranges();
        if self.saved_ids.as_ref() != Some(&ids) {
            put_meta(&tx, "job_ids", &json(&ids)?)?;
            pending.ids = Some(ids);
        }
        let cluster = &core.config().cluster_name;
        if self.saved_cluster.as_ref() != Some(cluster) {
            put_meta(&tx, "cluster", cluster.as_bytes())?;
            pending.cluster = Some(cluster.clone());
        }
        pending.fed = fed::write(&tx, core, &self.saved_fed)?;
        pending.dbd_generation = dbd_cache::write(&tx, core, self.saved_dbd_generation)?;
        tx.commit()
    }

    fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }
}

/// What a commit changes in the store's cursors once it is durable.
#[derive(Default)]
struct Pending {
    next_seq: u64,
    ids: Option<Vec<(u32, u32)>>,
    cluster: Option<String>,
    launches_added: Vec<u32>,
    launches_removed: Vec<u32>,
    fed: Option<fed::SavedFed>,
    dbd_generation: Option<u64>,
}

fn put_job(
    tx: &rusqlite::Transaction<'_>,
    snap: &JobSnap,
    launches: &HashSet<u32>,
    pending: &mut Pending,
) -> rusqlite::Result<()> {
    let owner = snap.launch_owner();
    if !launches.contains(&owner) && !pending.launches_added.contains(&owner) {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO launch (owner, format, body) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![
            owner,
            codec::CURRENT,
            codec::encode(snap.launch.as_ref())?
        ])?;
        pending.launches_added.push(owner);
    }
    tx.prepare_cached(
        "INSERT OR REPLACE INTO jobs (id, format, launch_owner, body) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        snap.id,
        codec::CURRENT,
        owner,
        codec::encode(snap)?
    ])?;
    Ok(())
}

fn delete_job(
    tx: &rusqlite::Transaction<'_>,
    id: u32,
    pending: &mut Pending,
) -> rusqlite::Result<()> {
    let owner: Option<u32> = tx
        .prepare_cached("DELETE FROM jobs WHERE id = ?1 RETURNING launch_owner")?
        .query_row(params![id], |r| r.get(0))
        .optional()?;
    if let Some(owner) = owner {
        let gone = tx
            .prepare_cached(
                "DELETE FROM launch WHERE owner = ?1 \
                 AND NOT EXISTS (SELECT 1 FROM jobs WHERE launch_owner = ?1)",
            )?
            .execute(params![owner])?;
        if gone > 0 {
            pending.launches_removed.push(owner);
        }
    }
    Ok(())
}

fn put_meta(tx: &rusqlite::Transaction<'_>, key: &str, value: &[u8]) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?
        .execute(params![key, value])?;
    Ok(())
}

/// JSON of a saved record; our own types always serialize, but report it as SQLite would.
fn json<T: serde::Serialize + ?Sized>(value: &T) -> rusqlite::Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// A seq as SQLite's signed integer.
fn seq_param(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_state_directory_and_its_files_are_private_and_loose_ones_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let store = StateStore::open(&state).unwrap();
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(store.path()), 0o600);
        drop(store);
        // What an earlier version left: a listable directory, readable files.
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        let wal = state.join(format!("{STATE_FILE}-wal"));
        std::fs::write(&wal, "").unwrap();
        for file in [StateStore::file(&state), wal.clone()] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let _store = StateStore::open(&state).unwrap();
        assert_eq!(mode(&state), 0o700);
        for file in [StateStore::file(&state), wal] {
            assert_eq!(mode(&file), 0o600, "{}", file.display());
        }
    }
}
