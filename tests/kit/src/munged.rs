//! A private MUNGE daemon for tests of `AuthType=auth/munge`: `munged` from the Debian package
//! (`.ci/deps` installs it), started in the foreground with its own key, socket, pid and seed
//! files in a temp dir, and stopped on drop. Needs root (munged's directory checks want its
//! files owned by root or its own user).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::cmd::run;
use crate::wait::eventually_within;

/// Where the Debian package installs the daemon and the key tool.
const MUNGED: &str = "/usr/sbin/munged";
const MUNGEKEY: &str = "/usr/sbin/mungekey";

/// A running munged; killed on drop.
pub struct Munged {
    dir: tempfile::TempDir,
    child: Child,
}

impl Munged {
    /// Starts munged, or returns why it cannot run here (not installed, not root): the
    /// caller prints it as a SKIP.
    pub fn start() -> Result<Munged, String> {
        if !Path::new(MUNGED).exists() || !Path::new(MUNGEKEY).exists() {
            return Err(format!(
                "{MUNGED} is not installed (Debian packages munge, libmunge-dev; see .ci/deps)"
            ));
        }
        if !nix::unistd::geteuid().is_root() {
            return Err("munged's tests run as root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        // Clients must reach the socket: munged wants its directory searchable by all.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        let key = dir.path().join("munge.key");
        let out = run(
            Command::new(MUNGEKEY)
                .arg("--create")
                .arg(format!("--keyfile={}", key.display())),
            None,
        );
        if out.code != 0 {
            return Err(format!("mungekey failed: {out:?}"));
        }
        let path = |name: &str| dir.path().join(name).display().to_string();
        let child = Command::new(MUNGED)
            .arg("--foreground")
            .arg(format!("--socket={}", path("munge.socket")))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", path("munged.pid")))
            .arg(format!("--seed-file={}", path("munged.seed")))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {MUNGED}: {e}"))?;
        let munged = Munged { dir, child };
        let socket = munged.socket();
        eventually_within_blocking(&format!("munged at {}", socket.display()), || {
            socket.exists()
        });
        Ok(munged)
    }

    /// Its socket (for `AuthInfo=socket=...` and `munge -S`).
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("munge.socket")
    }
}

impl Drop for Munged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `ready` (bounded) from synchronous code.
fn eventually_within_blocking(what: &str, mut ready: impl FnMut() -> bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    rt.block_on(eventually_within(
        Duration::from_secs(20),
        what,
        async || ready().then_some(()),
    ));
}
