//! The local credential service, in the spirit of Slurm's `sackd` (`auth/slurm`): commands run
//! by users who cannot read `slurm.key` ask it for a token over a unix socket. The service
//! learns the caller's uid and gid from the kernel (`SO_PEERCRED`), never from the caller, and
//! signs a token for that uid only.
//!
//! The socket is `sack.socket` next to `slurm.conf` ([`socket_path`]), so commands find it
//! without configuration and every cluster (or `sluice up` directory) on a host has its own.
//! It is world-connectable (0666). The exchange: the client connects and reads one line, the
//! token (`sluice1.<uid>.<issued>.<mac>`); the service then closes the connection.
//!
//! `sluice-noded` offers the service on compute hosts (when root) and `sluice-sackd` on login hosts. Several
//! daemons of one configuration on a host (the node daemons of `sluice up`) share the socket:
//! one serves it, the others look again every [`RECLAIM_INTERVAL`] and take it over when it no
//! longer answers.

use std::future::Future;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::{Key, TOKEN_PREFIX, unix_now};

/// The socket's name, in the directory of `slurm.conf`.
pub const SOCKET_FILE: &str = "sack.socket";
/// How often a daemon that does not serve the socket (another one does) looks whether it still
/// answers.
pub const RECLAIM_INTERVAL: Duration = Duration::from_secs(5);
/// How long a client waits for the service's answer.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);

/// The credential service's socket for the configuration in `conf_dir`.
pub fn socket_path(conf_dir: &Path) -> PathBuf {
    conf_dir.join(SOCKET_FILE)
}

/// Asks the service at `socket` for a token for the calling process's uid (blocking).
pub fn request_token(socket: &Path) -> std::io::Result<String> {
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let token = answer.trim_end();
    if token.starts_with(&format!("{TOKEN_PREFIX}.")) && !token.contains(char::is_whitespace) {
        Ok(token.to_string())
    } else {
        Err(std::io::Error::new(
            ErrorKind::InvalidData,
            format!("unexpected answer {answer:?}"),
        ))
    }
}

/// The socket, bound by this process; removed when dropped (unless another daemon has replaced
/// it meanwhile).
#[derive(Debug)]
pub struct Claimed {
    listener: UnixListener,
    path: PathBuf,
    ino: u64,
}

impl Claimed {
    /// Where the socket is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds the socket at `path`, mode 0666. `None` when a live service already answers there; a
/// socket file nobody answers on (left by a killed daemon) is replaced.
pub fn claim(path: &Path) -> std::io::Result<Option<Claimed>> {
    let listener = match UnixListener::bind(path) {
        Ok(l) => l,
        Err(e) if e.kind() == ErrorKind::AddrInUse => {
            if UnixStream::connect(path).is_ok() {
                return Ok(None);
            }
            // Only a socket is replaced, never a file someone put there.
            if !std::fs::symlink_metadata(path)?.file_type().is_socket() {
                return Err(e);
            }
            std::fs::remove_file(path)?;
            match UnixListener::bind(path) {
                Ok(l) => l,
                // Another daemon replaced it first.
                Err(e) if e.kind() == ErrorKind::AddrInUse => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    let ino = std::fs::symlink_metadata(path)?.ino();
    let claimed = Claimed {
        listener,
        path: path.to_path_buf(),
        ino,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    claimed.listener.set_nonblocking(true)?;
    Ok(Some(claimed))
}

/// Serves tokens on `claimed` until `shutdown` completes: each caller gets a token for the uid
/// the kernel reports for it.
pub async fn serve(
    claimed: Claimed,
    key: Key,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let listener = tokio::net::UnixListener::from_std(claimed.listener.try_clone()?)?;
    tracing::info!(socket = %claimed.path.display(), "credential service listening");
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("credential service: accept failed: {e}");
                    continue;
                }
            },
        };
        let key = key.clone();
        tokio::spawn(async move {
            if let Err(e) = answer(stream, &key).await {
                tracing::debug!("credential service: {e}");
            }
        });
    }
    drop(claimed);
    Ok(())
}

async fn answer(mut stream: tokio::net::UnixStream, key: &Key) -> std::io::Result<()> {
    let cred = stream.peer_cred()?;
    let token = key.sign(cred.uid(), unix_now());
    tracing::debug!(
        uid = cred.uid(),
        gid = cred.gid(),
        pid = cred.pid(),
        "credential issued"
    );
    stream.write_all(format!("{token}\n").as_bytes()).await?;
    stream.shutdown().await
}

/// Offers the service at `path` for as long as the daemon runs: serves it when it can claim the
/// socket, else looks again every [`RECLAIM_INTERVAL`] (another daemon serves it meanwhile).
/// Returns when `shutdown` completes.
pub async fn offer(path: PathBuf, key: Key, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut logged = false;
    loop {
        match claim(&path) {
            Ok(Some(claimed)) => {
                if let Err(e) = serve(claimed, key.clone(), &mut shutdown).await {
                    tracing::warn!("credential service {}: {e}", path.display());
                }
                return;
            }
            Ok(None) if !logged => {
                tracing::info!(
                    "credential service {} is served by another daemon",
                    path.display()
                );
                logged = true;
            }
            Ok(None) => {}
            Err(e) if !logged => {
                tracing::warn!(
                    "cannot offer the credential service at {}: {e}",
                    path.display()
                );
                logged = true;
            }
            Err(_) => {}
        }
        tokio::select! {
            () = &mut shutdown => return,
            () = tokio::time::sleep(RECLAIM_INTERVAL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_service_signs_for_the_callers_own_uid() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        let key = Key::from_bytes(vec![7; 64]);
        let claimed = claim(&path).unwrap().expect("free socket");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o666
        );
        assert!(claim(&path).unwrap().is_none(), "a live service is kept");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(claimed, key.clone(), async {
            let _ = stopped.await;
        }));
        let socket = path.clone();
        let token = tokio::task::spawn_blocking(move || request_token(&socket))
            .await
            .unwrap()
            .unwrap();
        let me = nix::unistd::getuid().as_raw();
        assert_eq!(key.verify(&token, unix_now()).unwrap().uid, me);
        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
        assert!(
            !path.exists(),
            "the socket is removed when the service stops"
        );
    }

    #[test]
    fn a_dead_socket_is_taken_over_and_other_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = socket_path(dir.path());
        // A socket whose daemon was killed: bound, never removed.
        drop(UnixListener::bind(&path).unwrap());
        let claimed = claim(&path).unwrap().expect("stale socket replaced");
        drop(claimed);
        assert!(!path.exists());
        std::fs::write(&path, "not a socket").unwrap();
        assert!(claim(&path).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a socket");
    }

    #[test]
    fn nobody_listening_is_an_error_naming_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        let e = request_token(&socket_path(dir.path())).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
