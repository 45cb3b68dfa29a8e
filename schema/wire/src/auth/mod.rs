//! Request authentication in the spirit of Slurm's `auth/slurm`: a key shared by the daemons and
//! trusted commands (`slurm.key`, readable only by its owner) signs a short-lived token naming the
//! caller's uid and gid, bound to one request ([`token`]: its method, the digest of its body and
//! a nonce). Tokens travel in the `authorization` metadata of every RPC; the client side signs in
//! [`Signed`], a wrapper of the channel that sees each request's path and body, and every daemon
//! checks them in [`Guarded`], a wrapper of its services that sees the same.
//!
//! Who may sign: whoever can read the key (root, the SlurmUser: daemons and admins) signs
//! locally; everyone else asks the local credential service ([`sack`]), which signs for the
//! uid the kernel reports for the caller. [`Signer::for_caller`] picks the way.
//!
//! A token is accepted while its issue time lies within [`MAX_TOKEN_AGE`] of the verifier's
//! clock (and not more than [`MAX_CLOCK_SKEW`] in its future); older tokens are refused as stale,
//! a token whose nonce the daemon saw before as a replay ([`replay`]), a token for another
//! method or body as bound to another request.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use tonic::{Request, Status};

pub mod credential;
mod guard;
pub mod munge;
pub mod replay;
pub mod sack;
mod signer;
pub mod token;
mod verifier;

pub use guard::Guarded;
pub use signer::{NoCredential, Signed, Signer};
pub use token::{Binding, Claims};
pub use verifier::Verifier;

/// The key file's name, next to `slurm.conf` / `slurmdbd.conf`.
pub const KEY_FILE: &str = "slurm.key";
/// How long after its issue a token is accepted, in seconds.
pub const MAX_TOKEN_AGE: i64 = 60;
/// How far in the future a token's issue time may lie (clock skew between hosts), in seconds.
pub const MAX_CLOCK_SKEW: i64 = 10;
/// The `authorization` scheme of `slurm.key` tokens.
pub const BEARER_SCHEME: &str = "Bearer ";
/// The `authorization` scheme of MUNGE credentials.
pub const MUNGE_SCHEME: &str = "Munge ";
/// Slurm's text for a refused credential.
pub const AUTH_ERROR: &str = "Protocol authentication error";

const MIN_KEY_LEN: usize = 32;
/// SHA-256's block size: HMAC hashes longer keys first.
const SHA256_BLOCK: usize = 64;

/// Why a key could not be used or a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: key file must be readable only by its owner (mode is {mode:o})")]
    Permissions { path: PathBuf, mode: u32 },
    #[error("{path}: key is too short ({len} bytes, at least {MIN_KEY_LEN} needed)")]
    TooShort { path: PathBuf, len: usize },
    #[error("request is not signed")]
    Unsigned,
    #[error("bad signature: {0}")]
    BadSignature(String),
    #[error("stale credential (issued {age} s ago)")]
    Stale { age: i64 },
    #[error("credential issued in the future")]
    Future,
    #[error("credential already used (replayed)")]
    Replayed,
    #[error("credential was issued for {signed}, not {used}")]
    OtherMethod { signed: String, used: String },
    #[error("credential was issued for another request body")]
    OtherBody,
    /// munged could not encode or decode a credential.
    #[error("munge: {why}")]
    Munge { why: String },
    /// A job credential a node daemon refuses (Slurm's "Invalid job credential").
    #[error("Invalid job credential: {why}")]
    JobCredential { why: String },
}

/// The shared secret.
#[derive(Clone)]
pub struct Key {
    /// HMAC's state after the key's inner and outer pads: every MAC starts from a copy of it
    /// instead of hashing the two pad blocks again (two SHA-256 blocks saved per MAC).
    keyed: Arc<Hmac<Sha256>>,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// Loads a key file, refusing one that others may read.
    pub fn load(path: &Path) -> Result<Self, AuthError> {
        let io = |source| AuthError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(AuthError::Permissions {
                path: path.to_path_buf(),
                mode,
            });
        }
        let secret = std::fs::read(path).map_err(io)?;
        if secret.len() < MIN_KEY_LEN {
            return Err(AuthError::TooShort {
                path: path.to_path_buf(),
                len: secret.len(),
            });
        }
        Ok(Self::from_bytes(secret))
    }

    /// Writes a fresh random key to `path` (mode 0600) unless one is there, and loads it.
    pub fn create_if_missing(path: &Path) -> Result<Self, AuthError> {
        if !path.exists() {
            let mut secret = vec![0u8; 1024];
            rand::fill(&mut secret[..]);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .map_err(|source| AuthError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
            f.write_all(&secret).map_err(|source| AuthError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        Self::load(path)
    }

    /// A key from raw bytes (tests, or a key handed over in memory).
    ///
    /// HMAC first replaces a key longer than the hash's block by the key's hash (RFC 2104), so
    /// that is done once here rather than for every token signed or checked: the MACs are the
    /// same, and a token costs a few short blocks of SHA-256 instead of the whole key again.
    pub fn from_bytes(secret: Vec<u8>) -> Self {
        let secret = if secret.len() > SHA256_BLOCK {
            Sha256::digest(&secret).to_vec()
        } else {
            secret
        };
        // HMAC takes keys of any length, so this cannot fail.
        let keyed =
            Hmac::<Sha256>::new_from_slice(&secret).expect("HMAC accepts keys of any length");
        Self {
            keyed: Arc::new(keyed),
        }
    }

    /// The keyed MAC over `text`.
    pub(crate) fn mac(&self, text: impl AsRef<[u8]>) -> Hmac<Sha256> {
        let mut mac = Hmac::clone(&self.keyed);
        mac.update(text.as_ref());
        mac
    }
}

/// Who sent a request, as proven by its token. Servers find it in the request's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
}

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The caller's identity recorded by the [`Verifier`]; `unauthenticated` if it is missing,
/// which only happens when a service is mounted without it.
pub fn identity<T>(req: &Request<T>) -> Result<Identity, Status> {
    req.extensions()
        .get::<Identity>()
        .copied()
        .ok_or_else(|| Status::unauthenticated(AUTH_ERROR))
}

/// The methods whose request body is a stream (`rpc X(stream ...)`): their tokens bind the
/// method and an empty body, the stream's messages are checked by the service itself.
pub const STREAMING_REQUESTS: &[&str] = &["/sluice.v1.NodeDaemon/StepInput"];

/// Whether `method`'s request body is a stream (see [`STREAMING_REQUESTS`]).
pub fn request_streams(method: &str) -> bool {
    STREAMING_REQUESTS.contains(&method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_keys_sign_as_hmac_over_the_whole_key() {
        // RFC 4231 test case 6: a 131-byte key (longer than a block), hashed once at load.
        let long = Key::from_bytes(vec![0xaa; 131]);
        let mac = long
            .mac("Test Using Larger Than Block-Size Key - Hash Key First")
            .finalize()
            .into_bytes();
        assert_eq!(
            hex::encode(mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn key_files_must_be_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let k = Key::create_if_missing(&path).unwrap();
        let again = Key::create_if_missing(&path).unwrap();
        let mac = |k: &Key| k.mac("x").finalize().into_bytes();
        assert_eq!(mac(&k), mac(&again), "an existing key is kept");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(
            Key::load(&path),
            Err(AuthError::Permissions { .. })
        ));
        let short = dir.path().join("short.key");
        std::fs::write(&short, b"abc").unwrap();
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(Key::load(&short), Err(AuthError::TooShort { .. })));
    }

    #[test]
    fn the_streamed_requests_are_those_of_the_proto_files() {
        // Every `rpc X(stream Y)` of the protocol, so that a new one is not read whole.
        let mut streamed = Vec::new();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/proto");
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let mut service = "";
            for line in text.lines().map(str::trim) {
                if let Some(rest) = line.strip_prefix("service ") {
                    service = rest.trim_end_matches(" {").trim();
                }
                if let Some(rest) = line.strip_prefix("rpc ")
                    && let Some((name, args)) = rest.split_once('(')
                    && args.starts_with("stream ")
                {
                    streamed.push(format!("/sluice.v1.{service}/{}", name.trim()));
                }
            }
        }
        assert_eq!(streamed, STREAMING_REQUESTS);
    }
}
