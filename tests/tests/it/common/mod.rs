//! The end-to-end harness: a real `sluice-dbd` on an ephemeral loopback port in a temp dir,
//! driven through the real command binaries.
//!
//! Binaries come from the build's output directory (`target/<profile>/`); build them first
//! with `cargo build --workspace --bins`.

// The site harness (clusters and federations started with `sluice up`) and running the
// commands come from the testkit; this module adds the stand-alone accounting daemon.
pub use sluice_testkit::cmd::{CmdOutput, DAEMON_TIMEOUT, bin, block_on, exit_code, run};
pub use sluice_testkit::site::{cluster, federation, procs};

pub mod lines;
pub mod python;
pub mod raw_rpc;
pub mod users;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use sluice_tool::up::storage::StorageSpec;
use sluice_wire::auth::Key;

use sluice_testkit::dbd::{Backend, TestDatabase};

/// Writes a fresh key (mode 0600) into `dir`.
pub fn write_key(dir: &Path) -> Key {
    Key::create_if_missing(&dir.join(sluice_wire::auth::KEY_FILE)).expect("write slurm.key")
}

/// Writes `slurmdbd.conf` in `dir` as the dbd wants it: mode 0600, owned by whoever runs the
/// tests (root, the default SlurmUser, in CI).
pub fn write_dbd_conf(dir: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("slurmdbd.conf");
    std::fs::write(&path, text).expect("write slurmdbd.conf");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .expect("chmod slurmdbd.conf");
}

/// Writes a `slurm.conf` pointing commands at the dbd on `127.0.0.1:port`.
pub fn write_slurm_conf(dir: &Path, port: u16) {
    let text = format!(
        "ClusterName=cluster\nAccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"
    );
    std::fs::write(dir.join("slurm.conf"), text).expect("write slurm.conf");
}

/// A running `sluice-dbd -D` in a temp dir; stopped (SIGTERM, then SIGKILL) on drop.
pub struct Dbd {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
    // Dropped after the daemon has stopped (field order), so no connection holds it.
    _db: Option<TestDatabase>,
}

impl Dbd {
    /// A dbd on SQLite in a temp dir.
    pub fn start() -> Dbd {
        Self::start_with("sqlite")
    }

    /// A dbd on `storage`: `sqlite`, `mysql` (or `mariadb`), `postgres` (or `pgsql`) for a
    /// throwaway database dropped afterwards, or a storage URL as `sluice up --storage` takes it.
    pub fn start_with(storage: &str) -> Dbd {
        Self::start_with_conf(storage, &[])
    }

    /// Like [`Dbd::start_with`], with `extra` lines appended to `slurmdbd.conf`.
    pub fn start_with_conf(storage: &str, extra: &[&str]) -> Dbd {
        let db = match storage {
            "mysql" | "mariadb" => Some(TestDatabase::create(Backend::Mysql)),
            "postgres" | "pgsql" => Some(TestDatabase::create(Backend::Postgres)),
            _ => None,
        };
        let url = db.as_ref().map_or(storage, TestDatabase::url);
        let spec = StorageSpec::parse(url).unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conf = vec!["DbdHost=127.0.0.1".to_string(), "DbdPort=0".into()];
        conf.extend(spec.conf_lines(dir.path()));
        conf.extend(extra.iter().map(|l| l.to_string()));
        write_dbd_conf(dir.path(), &(conf.join("\n") + "\n"));
        write_key(dir.path());
        let mut dbd = Dbd {
            dir,
            port: 0,
            child: None,
            _db: db,
        };
        dbd.spawn();
        dbd
    }

    fn spawn(&mut self) {
        let port_file = self.dir.path().join("port");
        let _ = std::fs::remove_file(&port_file);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open dbd log");
        let mut child = Command::new(bin("sluice-dbd"))
            .arg("-D")
            .arg("-f")
            .arg(self.dir.path().join("slurmdbd.conf"))
            .env("SLUICE_PORT_FILE", &port_file)
            .env_remove("SLURMDBD_CONF")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log"))
            .stderr(log)
            .spawn()
            .expect("spawn sluice-dbd");
        let deadline = Instant::now() + DAEMON_TIMEOUT;
        self.port = loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break port;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "sluice-dbd exited while starting ({status}):\n{}",
                    self.log()
                );
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                panic!(
                    "sluice-dbd did not come up within {DAEMON_TIMEOUT:?}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.child = Some(child);
        write_slurm_conf(self.dir.path(), self.port);
    }

    /// SIGTERM, then waits for the exit (SIGKILL after [`DAEMON_TIMEOUT`]). `None` if not running.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + DAEMON_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = child.kill();
                    return child.wait().ok();
                }
            }
        }
    }

    /// Stops the daemon and starts it again on the same configuration and data (a new port).
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// The temp dir holding `slurmdbd.conf`, `slurm.conf`, `slurm.key` and `dbd.log`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The port the daemon listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The key the daemon trusts.
    pub fn key(&self) -> Key {
        Key::load(&self.dir().join(sluice_wire::auth::KEY_FILE)).expect("load slurm.key")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("dbd.log")
    }

    /// What the daemon wrote to stdout/stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Runs the real `sacctmgr` against this dbd, stdin closed.
    pub fn sacctmgr(&self, args: &[&str]) -> CmdOutput {
        run(&mut self.command("sacctmgr", args, self.dir()), None)
    }

    /// Runs `sacctmgr` with `stdin` as its input.
    pub fn sacctmgr_stdin(&self, args: &[&str], stdin: &str) -> CmdOutput {
        run(&mut self.command("sacctmgr", args, self.dir()), Some(stdin))
    }

    /// Runs `sacctmgr` as `uid`, with its own private copy of `slurm.conf` and the key.
    pub fn sacctmgr_as(&self, uid: u32, args: &[&str]) -> CmdOutput {
        let home = tempfile::tempdir().expect("temp dir");
        for name in ["slurm.conf", sluice_wire::auth::KEY_FILE] {
            let to = home.path().join(name);
            std::fs::copy(self.dir().join(name), &to).expect("copy conf");
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
        let gid = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
            .ok()
            .flatten()
            .map_or(uid, |u| u.gid.as_raw());
        for path in [
            home.path().to_path_buf(),
            home.path().join("slurm.conf"),
            home.path().join(sluice_wire::auth::KEY_FILE),
        ] {
            nix::unistd::chown(&path, Some(uid.into()), Some(gid.into()))
                .expect("chown (tests run as root)");
        }
        let mut cmd = self.command("sacctmgr", args, home.path());
        cmd.uid(uid).gid(gid).current_dir(home.path());
        run(&mut cmd, None)
    }

    fn command(&self, program: &str, args: &[&str], conf_dir: &Path) -> Command {
        let mut cmd = Command::new(bin(program));
        cmd.args(args)
            .env("SLURM_CONF", conf_dir.join("slurm.conf"));
        cmd
    }
}

impl Drop for Dbd {
    fn drop(&mut self) {
        self.stop();
    }
}
