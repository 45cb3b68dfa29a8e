//! A real accounting daemon in the test process, on any of its three databases.
//!
//! * [`TestDatabase`]: a fresh, empty database on one [`Backend`]: an SQLite file in a temp
//!   dir, or a uniquely named database on the MariaDB or PostgreSQL test server, dropped when
//!   the value is dropped.
//! * [`TestDbd`]: the real `sluice-dbd` service (its `slurmdbd.conf`, key and store, as the
//!   binary runs them) on `127.0.0.1:0`, on its own thread and runtime so sync and async tests
//!   alike can use it; it stops on drop, before its database is dropped.
//!
//! The servers are expected to run (CI starts them); when one is unreachable the test fails
//! with a message saying so, it never skips. Admin URLs: `SLUICE_TEST_MYSQL_URL` (default
//! `mysql://root@127.0.0.1:3306/test`) and `SLUICE_TEST_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`).

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use sluice_dbd::config::DbdConfig;
use sluice_dbd::daemon::{self, Prepared};
use sluice_wire::auth::{KEY_FILE, Key, Signer};
use sluice_wire::client::{DbdClient, connect_dbd};
use tokio::sync::oneshot;

mod database;

pub use database::{Backend, TestDatabase};

/// The name of the user running the tests: the daemon's `SlurmUser`, so the test's signed
/// requests are an administrator's.
fn current_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map_or_else(|| "root".to_string(), |u| u.name)
}

/// A running accounting daemon over a fresh [`TestDatabase`]; stopped on drop.
pub struct TestDbd {
    port: u16,
    conf: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    server: Option<std::thread::JoinHandle<()>>,
    // Dropped after the daemon has stopped (see `Drop`).
    db: TestDatabase,
}

impl TestDbd {
    /// Creates a database on `backend` and starts the daemon on it; returns once the schema is
    /// migrated and the port is listening. Panics with the reason when it cannot start.
    pub fn start(backend: Backend) -> TestDbd {
        let db = TestDatabase::create(backend);
        let conf = db.dir().join("slurmdbd.conf");
        let text = format!(
            "DbdHost=127.0.0.1\nDbdPort=0\nSlurmUser={}\n{}",
            current_user(),
            db.storage_conf()
        );
        std::fs::write(&conf, text).expect("write slurmdbd.conf");
        Key::create_if_missing(&db.dir().join(KEY_FILE)).expect("key");
        let config = DbdConfig::load(&conf).expect("slurmdbd.conf");
        let listener = daemon::bind(&config).expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local addr").port();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(async move {
                let prepared = match Prepared::new(&config).await {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let shutdown = async {
                    let _ = stopped.await;
                };
                prepared
                    .serve(listener, shutdown)
                    .await
                    .expect("dbd serves");
            });
        });
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("dbd on {backend:?} did not start: {e}"),
            Err(_) => panic!("dbd on {backend:?} died while starting"),
        }
        TestDbd {
            port,
            conf,
            stop: Some(stop),
            server: Some(server),
            db,
        }
    }

    /// The port it listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its `slurmdbd.conf`.
    pub fn conf_path(&self) -> &Path {
        &self.conf
    }

    /// The key it verifies requests with (`slurm.key` next to the configuration).
    pub fn key_path(&self) -> PathBuf {
        self.db.dir().join(KEY_FILE)
    }

    /// Its store URL (to open the same database directly, or point a second daemon at it).
    pub fn store_url(&self) -> &str {
        self.db.url()
    }

    /// Its backend.
    pub fn backend(&self) -> Backend {
        self.db.backend()
    }

    /// A temp dir that lives as long as the daemon, for the test's own files.
    pub fn dir(&self) -> &Path {
        self.db.dir()
    }

    /// A signer for the calling user, who is the daemon's `SlurmUser` (an administrator).
    pub fn signer(&self) -> Signer {
        Signer::for_current_user(Key::load(&self.key_path()).expect("key"))
    }

    /// A signed client of its admin service. The listener is bound before `start` returns, so
    /// connecting never races the daemon.
    pub async fn client(&self) -> DbdClient {
        connect_dbd("127.0.0.1", self.port, self.signer())
            .await
            .expect("connect to the test dbd")
    }
}

impl Drop for TestDbd {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            // A panic on the server thread has already been printed; the test goes on dropping.
            let _ = server.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_starts_and_answers_on_every_backend() {
        for backend in Backend::ALL {
            let dbd = TestDbd::start(backend);
            assert!(dbd.key_path().exists());
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            let clusters = rt.block_on(async {
                let mut client = dbd.client().await;
                client
                    .add_clusters(sluice_wire::proto::AddClustersRequest {
                        names: vec!["c1".into()],
                        commit: true,
                        ..Default::default()
                    })
                    .await
                    .expect("add cluster");
                client
                    .list_clusters(sluice_wire::proto::ListClustersRequest::default())
                    .await
                    .expect("list clusters")
                    .into_inner()
            });
            assert!(
                clusters.clusters.iter().any(|c| c.name == "c1"),
                "{backend:?}: {clusters:?}"
            );
        }
    }
}
