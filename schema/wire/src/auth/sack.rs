//! The local credential service, in the spirit of Slurm's `sackd` (`auth/slurm`): commands run
//! by users who cannot read `slurm.key` ask it for a token over a unix socket. The service
//! learns the caller's uid and gid from the kernel (`SO_PEERCRED`), never from the caller, and
//! signs a token for that uid only.
//!
//! The socket is `sack.socket` next to `slurm.conf` ([`socket_path`]), so commands find it
//! without configuration and every cluster (or `sluice up` directory) on a host has its own.
//! It is world-connectable (0666). The exchange, once per request: the client connects and
//! writes one line, `<method> <digest> <nonce>` (what the token binds, digest and nonce in hex, see
//! [`super::token`]);
//! the service answers one line, the token for the caller's kernel uid and gid with those
//! fields (or `error <why>`), and closes the connection.
//!
//! `sluice-noded` offers the service on compute hosts (when root) and `sluice-sackd` on login hosts. Several
//! daemons of one configuration on a host (the node daemons of `sluice up`) share the socket:
//! one serves it, the others look again every [`RECLAIM_INTERVAL`] and take it over when it no
//! longer answers.

use std::future::Future;
use std::io::{ErrorKind, Read as _};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::token::{Binding, BodyDigest, Claims, Nonce, TOKEN_PREFIX, new_nonce};
use super::{Key, unix_now};

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

/// Asks the service at `socket` for the token of one request bound by `binding`, with `nonce`.
pub async fn request_token(
    socket: &Path,
    binding: &Binding,
    nonce: &Nonce,
) -> std::io::Result<String> {
    let exchange = async {
        let mut stream = tokio::net::UnixStream::connect(socket).await?;
        let line = format!(
            "{} {} {}\n",
            binding.method,
            binding.digest.to_hex(),
            nonce.to_hex()
        );
        stream.write_all(line.as_bytes()).await?;
        let mut answer = String::new();
        BufReader::new(stream)
            .take(MAX_LINE)
            .read_line(&mut answer)
            .await?;
        parse_answer(&answer)
    };
    tokio::time::timeout(CLIENT_TIMEOUT, exchange)
        .await
        .unwrap_or_else(|_| Err(ErrorKind::TimedOut.into()))
}

/// Checks that the service at `socket` answers (blocking): asks for a token for the method
/// [`PROBE_METHOD`], which no daemon serves.
pub fn probe(socket: &Path) -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let mut stream = UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    let binding = Binding::new(PROBE_METHOD, b"");
    let line = format!(
        "{} {} {}\n",
        binding.method,
        binding.digest.to_hex(),
        new_nonce().to_hex()
    );
    stream.write_all(line.as_bytes())?;
    let mut answer = String::new();
    std::io::BufReader::new(stream)
        .take(MAX_LINE)
        .read_line(&mut answer)?;
    parse_answer(&answer).map(drop)
}

/// The method of [`probe`]'s token.
pub const PROBE_METHOD: &str = "/sluice.auth/Probe";
/// The longest line either side reads.
const MAX_LINE: u64 = 1024;

fn parse_answer(answer: &str) -> std::io::Result<String> {
    let answer = answer.trim_end();
    if let Some(why) = answer.strip_prefix("error ") {
        return Err(std::io::Error::new(
            ErrorKind::PermissionDenied,
            why.to_string(),
        ));
    }
    if answer.starts_with(&format!("{TOKEN_PREFIX}.")) && !answer.contains(char::is_whitespace) {
        Ok(answer.to_string())
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

async fn answer(stream: tokio::net::UnixStream, key: &Key) -> std::io::Result<()> {
    let cred = stream.peer_cred()?;
    let mut stream = BufReader::new(stream);
    let mut line = String::new();
    tokio::time::timeout(
        CLIENT_TIMEOUT,
        (&mut stream).take(MAX_LINE).read_line(&mut line),
    )
    .await
    .map_err(|_| std::io::Error::from(ErrorKind::TimedOut))??;
    let reply = match parse_request(&line) {
        Ok((binding, nonce)) => {
            tracing::debug!(
                uid = cred.uid(),
                gid = cred.gid(),
                pid = cred.pid(),
                method = %binding.method,
                "credential issued"
            );
            key.sign(&Claims {
                uid: cred.uid(),
                gid: cred.gid(),
                issued: unix_now(),
                nonce,
                binding,
            })
        }
        Err(why) => format!("error {why}"),
    };
    let stream = stream.get_mut();
    stream.write_all(format!("{reply}\n").as_bytes()).await?;
    stream.shutdown().await
}

/// The binding and nonce a client asks for, checked.
fn parse_request(line: &str) -> Result<(Binding, Nonce), String> {
    let mut fields = line.split_whitespace();
    let (Some(method), Some(digest), Some(nonce), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err("expected <method> <digest> <nonce>".into());
    };
    let digest = BodyDigest::from_hex(digest).ok_or("bad signature: malformed digest")?;
    let binding = Binding {
        method: method.to_string(),
        digest,
    };
    binding.validate().map_err(|e| e.to_string())?;
    let nonce = Nonce::from_hex(nonce).ok_or("malformed nonce")?;
    Ok((binding, nonce))
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
        let binding = Binding::new("/sluice.v1.Controller/SubmitJob", b"job");
        let nonce = new_nonce();
        let token = request_token(&path, &binding, &nonce).await.unwrap();
        let claims = key.open(&token, &binding.digest).unwrap();
        assert_eq!(claims.uid, nix::unistd::getuid().as_raw());
        assert_eq!(claims.gid, nix::unistd::getgid().as_raw());
        assert_eq!((claims.method, claims.nonce), (&binding.method[..], nonce));
        // Malformed requests get an error line, never a token.
        let bad = Binding {
            method: "no-slash".into(),
            digest: BodyDigest::of(b""),
        };
        let e = request_token(&path, &bad, &new_nonce()).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PermissionDenied);
        assert_eq!(e.to_string(), "bad signature: malformed method");
        let socket = path.clone();
        tokio::task::spawn_blocking(move || probe(&socket))
            .await
            .unwrap()
            .unwrap();
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
        let e = probe(&socket_path(dir.path())).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
