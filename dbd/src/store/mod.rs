//! The accounting daemon's storage: clusters, federations, accounts, users, associations and
//! job-id cursors in one diesel database (SQLite, MariaDB/MySQL or PostgreSQL, picked by URL).
//!
//! Every change request runs in one transaction, so a failing request changes nothing; with
//! [`Apply::DryRun`] the whole change runs and is then rolled back. The rules (Slurm's, see
//! `as_mysql_federation.c` / `as_mysql_cluster.c`) live in the entity modules; the row types and
//! single-table queries in [`models`].
//!
//! Layering (each module uses only the ones below it; none reaches up):
//! 1. [`conn`] (backends and migrations) and `error`, over the diesel schema in `crate::db`;
//! 2. `types`: the domain types (admin entities, `types::records` for accounting records and
//!    job runs, `types::fed` for the federation arbiter, also reachable as [`fed::types`]);
//!    they depend on nothing in the store;
//! 3. [`models`]: one diesel row type per table with its single-table queries, depending only
//!    on `types` and `conn` (`bulk` holds the many-row writes and chunk sizes they share);
//! 4. the rules, one module per entity (`accounts`, `users`, `clusters`, `federations`,
//!    `leases`, [`usage`], `records` (ingest), [`fed`]) over `models`;
//! 5. `jobs`: sacct's job query and the record-batch entry point, over `records` and `models`;
//!    inside it `types` (query, cursor, page) ← `window` (the matching rules) ← `query` (the
//!    paged scan) and `fed_dups` ← `jobs` itself;
//! 6. this module: [`Store`], the facade whose methods (here and in `impl Store` blocks of the
//!    entity modules) each run one transaction.
//!
//! Concurrency: one writing connection behind a `std::sync::Mutex`. The async service calls
//! the store from `tokio::task::spawn_blocking`, so changes are serialised; that is simple and
//! plenty for sacctmgr traffic and lease requests. On a SQLite file, reads run on connections
//! of their own beside it (`readers`): sacct's pages, sacctmgr's lists, sreport. Job-id leases
//! additionally compare-and-set their cursor, so two dbds over one database never hand out an
//! id twice.

mod accounts;
mod clusters;
pub mod conn;
mod coords;
mod error;
pub mod fairshare;
pub mod fed;
mod federations;
mod jobs;
mod leases;
mod limits;
pub mod models;
mod qos;
mod readers;
mod records;
mod requests;
mod types;
pub mod usage;
mod users;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use sluice_wire::daemon::fault::FaultEpisodes;

use diesel::Connection;

pub use conn::{AnyConnection, Backend};
pub use coords::{CoordChange, Realms};
pub use error::{ObjectKind, StoreError};
pub use jobs::{JobCursor, JobPage, JobQuery, TextField};
pub use leases::{MAX_JOB_ID, MAX_LEASE_COUNT};
pub use limits::ModifyAssocLimits;
pub use qos::{AddQos, DeleteQos, ModifyAssocQos, ModifyQos, QosEntry};
pub use requests::{
    AccountFilter, AddAccounts, AddClusters, AddFederations, AddUsers, AssociationFilter,
    ClusterFilter, Coordinators, DeleteClusters, DeleteUsers, FederationFilter, ModifyAccounts,
    ModifyClusters, ModifyFederations, ModifyUsers, UserFilter,
};
pub use types::records::{
    ClusterCapacity, JobEnded, JobResized, JobRun, JobStarted, JobSubmitted, JobSuspended,
    NodeEvent, NodeEventInfo, Record, RecordKind, Step,
};
pub use types::{
    Account, AdminLevel, Apply, Association, Change, Cluster, Federation, JobIdRange, ListEdit,
    User,
};

/// The accounting database.
pub struct Store {
    conn: Mutex<AnyConnection>,
    /// SQLite reader connections for sacct's stream (none on the other backends).
    readers: Option<readers::Readers>,
    fed: fed::Signals,
    /// Database failures (disk full, read-only, I/O errors, a server gone), logged once per
    /// episode; a committed change ends one.
    faults: Mutex<FaultEpisodes>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store(..)")
    }
}

/// Why a transaction closure stopped: a real failure, or a finished dry run to roll back.
enum Abort<T> {
    Failed(StoreError),
    DryRun(T),
}

impl<T> From<diesel::result::Error> for Abort<T> {
    fn from(e: diesel::result::Error) -> Self {
        Self::Failed(StoreError::Db(e))
    }
}

impl<T> From<StoreError> for Abort<T> {
    fn from(e: StoreError) -> Self {
        Self::Failed(e)
    }
}

impl Store {
    /// Connects to `url` (see [`conn::parse_url`]), creates or migrates the schema, and makes
    /// sure the `root` account and user exist, as on a fresh slurmdbd.
    pub fn connect(url: &str) -> Result<Store, StoreError> {
        Self::connect_at(url, chrono::Utc::now().timestamp())
    }

    /// [`Store::connect`] with the clock passed in (creation time of the root rows).
    pub fn connect_at(url: &str, now: i64) -> Result<Store, StoreError> {
        let readers = match conn::parse_url(url)? {
            (Backend::Sqlite, path) => readers::Readers::for_path(&path),
            _ => None,
        };
        let store = Store {
            conn: Mutex::new(conn::open(url)?),
            readers,
            fed: fed::Signals::default(),
            faults: Mutex::new(FaultEpisodes::new("accounting database")),
        };
        store.change(Apply::Commit, |c| accounts::ensure_root(c, now))?;
        Ok(store)
    }

    fn lock(&self) -> MutexGuard<'_, AnyConnection> {
        // A panic while holding the lock leaves the connection usable: diesel rolls back or
        // marks a broken transaction, which the next `transaction` call reports as an error.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` in one transaction; commits only with [`Apply::Commit`] and success. A
    /// failed transaction changed nothing; its database error is logged once per episode.
    fn change<T>(
        &self,
        apply: Apply,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let result = self.transaction(apply, f);
        self.note(&result, apply == Apply::Commit);
        result
    }

    /// Runs a read in one transaction, so it sees one consistent state: on a reader
    /// connection of a SQLite file (beside the writing one, see [`readers`]), on the store's
    /// connection otherwise.
    fn read<T>(
        &self,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let result = match &self.readers {
            Some(readers) => readers.read_diesel(f),
            None => self.transaction(Apply::Commit, f),
        };
        // A read that works says nothing about writes: only a failure is noted.
        self.note(&result, false);
        result
    }

    fn transaction<T>(
        &self,
        apply: Apply,
        f: impl FnOnce(&mut AnyConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let outcome = conn.transaction::<T, Abort<T>, _>(|c| {
            let value = f(c)?;
            match apply {
                Apply::Commit => Ok(value),
                Apply::DryRun => Err(Abort::DryRun(value)),
            }
        });
        match outcome {
            Ok(v) | Err(Abort::DryRun(v)) => Ok(v),
            Err(Abort::Failed(e)) => Err(e),
        }
    }

    /// Logs a database failure when it starts an episode, and the end of one at the next
    /// `committed` change.
    fn note<T>(&self, result: &Result<T, StoreError>, committed: bool) {
        let mut faults = self.faults.lock().unwrap_or_else(PoisonError::into_inner);
        let now = std::time::Instant::now();
        match result {
            Err(StoreError::Db(e)) => {
                if let Some(line) = faults.failed(&e.to_string(), now) {
                    tracing::error!("{line}");
                }
            }
            Err(StoreError::Read(e)) => {
                if let Some(line) = faults.failed(&e.to_string(), now) {
                    tracing::error!("{line}");
                }
            }
            Ok(_) if committed => {
                if let Some(line) = faults.succeeded(now) {
                    tracing::info!("{line}");
                }
            }
            _ => {}
        }
    }

    /// Wraps a change's touched names.
    fn changed(
        &self,
        apply: Apply,
        f: impl FnOnce(&mut AnyConnection) -> Result<Vec<String>, StoreError>,
    ) -> Result<Change, StoreError> {
        let names = self.change(apply, f)?;
        Ok(Change {
            committed: apply == Apply::Commit,
            names,
        })
    }

    /// `sacctmgr add cluster`.
    pub fn add_clusters(
        &self,
        req: &AddClusters,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| clusters::add(c, req, now))
    }

    /// `sacctmgr modify cluster`.
    pub fn modify_clusters(
        &self,
        req: &ModifyClusters,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| clusters::modify(c, req, now))
    }

    /// `sacctmgr delete cluster`.
    pub fn delete_clusters(
        &self,
        req: &DeleteClusters,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| clusters::delete(c, req, now))
    }

    /// `sacctmgr show cluster`, by name.
    pub fn list_clusters(&self, filter: &ClusterFilter) -> Result<Vec<Cluster>, StoreError> {
        self.read(|c| clusters::list(c, filter))
    }

    /// `sacctmgr add federation`.
    pub fn add_federations(
        &self,
        req: &AddFederations,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| federations::add(c, req, now))
    }

    /// `sacctmgr modify federation`.
    pub fn modify_federations(
        &self,
        req: &ModifyFederations,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| federations::modify(c, req, now))
    }

    /// `sacctmgr delete federation`.
    pub fn delete_federations(
        &self,
        names: &[String],
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.fed_admin_change(apply, now, |c| federations::delete(c, names, now))
    }

    /// `sacctmgr show federation`, by name, members by fed id.
    pub fn list_federations(
        &self,
        filter: &FederationFilter,
    ) -> Result<Vec<Federation>, StoreError> {
        self.read(|c| federations::list(c, filter))
    }

    /// `sacctmgr add account`.
    pub fn add_accounts(
        &self,
        req: &AddAccounts,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| accounts::add(c, req, now))
    }

    /// `sacctmgr modify account`.
    pub fn modify_accounts(
        &self,
        req: &ModifyAccounts,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| accounts::modify(c, req, now))
    }

    /// `sacctmgr delete account`.
    pub fn delete_accounts(
        &self,
        names: &[String],
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| accounts::delete(c, names, now))
    }

    /// `sacctmgr show account`, by name.
    pub fn list_accounts(&self, filter: &AccountFilter) -> Result<Vec<Account>, StoreError> {
        self.read(|c| accounts::list(c, filter))
    }

    /// `sacctmgr add user`.
    pub fn add_users(&self, req: &AddUsers, apply: Apply, now: i64) -> Result<Change, StoreError> {
        self.changed(apply, |c| users::add(c, req, now))
    }

    /// `sacctmgr modify user`.
    pub fn modify_users(
        &self,
        req: &ModifyUsers,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| users::modify(c, req, now))
    }

    /// `sacctmgr delete user`.
    pub fn delete_users(
        &self,
        req: &DeleteUsers,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| users::delete(c, req, now))
    }

    /// `sacctmgr show user`, by name.
    pub fn list_users(&self, filter: &UserFilter) -> Result<Vec<User>, StoreError> {
        self.read(|c| users::list(c, filter))
    }

    /// The admin level of the live user `name` (`None` when there is no such user).
    pub fn admin_level(&self, name: &str) -> Result<Option<AdminLevel>, StoreError> {
        self.read(|c| Ok(models::users::get_live(c, name)?.map(|u| u.level())))
    }

    /// `sacctmgr show association`: live associations by cluster, account, user.
    pub fn list_associations(
        &self,
        filter: &AssociationFilter,
    ) -> Result<Vec<Association>, StoreError> {
        self.read(|c| {
            let rows =
                models::associations::live(c, &filter.clusters, &filter.accounts, &filter.users)?;
            let mut assocs = limits::with_limits(c, rows.clone())?;
            qos::with_qos(c, &rows, &mut assocs)?;
            Ok(assocs)
        })
    }

    /// `sacctmgr add qos`: the names added (existing ones are skipped).
    pub fn add_qos(&self, req: &AddQos, apply: Apply, now: i64) -> Result<Change, StoreError> {
        self.changed(apply, |c| qos::add(c, req, now))
    }

    /// `sacctmgr modify qos`.
    pub fn modify_qos(
        &self,
        req: &ModifyQos,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| qos::modify(c, req, now))
    }

    /// `sacctmgr delete qos`.
    pub fn delete_qos(
        &self,
        req: &DeleteQos,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| qos::delete(c, &req.names, now))
    }

    /// `sacctmgr show qos`.
    pub fn list_qos(
        &self,
        names: &[String],
        with_deleted: bool,
    ) -> Result<Vec<QosEntry>, StoreError> {
        self.read(|c| qos::list(c, names, with_deleted))
    }

    /// What the jobs of each QOS used on `cluster` in `window` (`GrpTRESMins`), by QOS name.
    pub fn qos_usage(
        &self,
        cluster: &str,
        window: fairshare::UsageWindow,
    ) -> Result<HashMap<String, fairshare::Used>, StoreError> {
        self.read(|c| fairshare::qos_usage(c, cluster, window))
    }

    /// `sacctmgr modify user|account ... set QOS=... DefaultQOS=...`.
    pub fn modify_assoc_qos(
        &self,
        req: &ModifyAssocQos,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| qos::modify_assoc(c, req, now))
    }

    /// `sacctmgr modify user|account ... set MaxJobs=...` (association limits).
    pub fn modify_assoc_limits(
        &self,
        req: &ModifyAssocLimits,
        apply: Apply,
        now: i64,
    ) -> Result<Change, StoreError> {
        self.changed(apply, |c| limits::modify(c, req, now))
    }

    /// `sshare` and the controllers' fair share: the live associations matching `filter`
    /// with their shares and decayed usage (see [`fairshare`]).
    pub fn list_association_shares(
        &self,
        filter: &AssociationFilter,
        window: Option<fairshare::UsageWindow>,
    ) -> Result<Vec<fairshare::AssocShare>, StoreError> {
        self.read(|c| fairshare::list(c, filter, window))
    }

    /// Hands `cluster` the next `count` local job ids not in `in_use` (see [`leases`]).
    pub fn lease_job_ids(
        &self,
        cluster: &str,
        count: u32,
        in_use: &[u32],
    ) -> Result<Vec<JobIdRange>, StoreError> {
        leases::lease(self, cluster, count, in_use)
    }
}

/// Stores for the crate's unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{AddClusters, Apply, Store};

    /// A store in a SQLite file under `dir`, opened at `now`, with cluster `c1` added then.
    pub(crate) fn sqlite_with_c1(dir: &tempfile::TempDir, now: i64) -> Store {
        let url = format!("sqlite://{}", dir.path().join("acct.db").display());
        let store = Store::connect_at(&url, now).unwrap();
        let add = AddClusters {
            names: vec!["c1".into()],
            ..Default::default()
        };
        store.add_clusters(&add, Apply::Commit, now).unwrap();
        store
    }
}
