//! Request authentication in the spirit of Slurm's `auth/slurm`: a key shared by the daemons and
//! trusted commands (`slurm.key`, readable only by its owner) signs a short-lived token naming the
//! caller's uid. Tokens (`sluice1.<uid>.<issued>.<HMAC-SHA256>`) travel in the `authorization` metadata of every RPC.
//!
//! Who may sign: whoever can read the key (root, the SlurmUser: daemons and admins) signs
//! locally; everyone else asks the local credential service ([`sack`]), which signs for the
//! uid the kernel reports for the caller. [`Signer::for_caller`] picks the way.
//!
//! A token is accepted while its issue time lies within [`MAX_TOKEN_AGE`] of the verifier's
//! clock (and not more than [`MAX_CLOCK_SKEW`] in its future); older tokens are refused as stale
//! replays.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::protocol::ProtocolError;

pub mod sack;

/// The key file's name, next to `slurm.conf` / `slurmdbd.conf`.
pub const KEY_FILE: &str = "slurm.key";
/// How long after its issue a token is accepted, in seconds.
pub const MAX_TOKEN_AGE: i64 = 60;
/// How far in the future a token's issue time may lie (clock skew between hosts), in seconds.
pub const MAX_CLOCK_SKEW: i64 = 10;
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
}

/// The shared secret.
#[derive(Clone)]
pub struct Key {
    secret: Arc<Vec<u8>>,
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
        Self {
            secret: Arc::new(secret),
        }
    }

    /// A token for `uid`, issued at unix time `now`: `sluice1.<uid>.<now>.<mac>`, the MAC being
    /// HMAC-SHA256 under the key over everything before it, in hex.
    pub fn sign(&self, uid: u32, now: i64) -> String {
        let claims = format!("{TOKEN_PREFIX}.{uid}.{now}");
        let mac = hex::encode(self.mac(&claims).finalize().into_bytes());
        format!("{claims}.{mac}")
    }

    /// Checks a token against unix time `now`; returns who signed it.
    pub fn verify(&self, token: &str, now: i64) -> Result<Identity, AuthError> {
        let bad = |why: &str| AuthError::BadSignature(why.to_string());
        let (claims, mac) = token
            .rsplit_once('.')
            .ok_or_else(|| bad("malformed token"))?;
        let mac = hex::decode(mac).map_err(|_| bad("malformed token"))?;
        // Constant-time comparison of the MAC before anything in the claims is believed.
        self.mac(claims)
            .verify_slice(&mac)
            .map_err(|_| bad("signature does not match"))?;
        let mut parts = claims.split('.');
        let (Some(TOKEN_PREFIX), Some(uid), Some(iat), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("malformed token"));
        };
        let uid: u32 = uid.parse().map_err(|_| bad("malformed uid"))?;
        let iat: i64 = iat.parse().map_err(|_| bad("malformed issue time"))?;
        let age = now.saturating_sub(iat);
        if age > MAX_TOKEN_AGE {
            return Err(AuthError::Stale { age });
        }
        if age.saturating_neg() > MAX_CLOCK_SKEW {
            return Err(AuthError::Future);
        }
        Ok(Identity { uid })
    }

    /// The keyed MAC over `text`.
    fn mac(&self, text: &str) -> Hmac<Sha256> {
        // HMAC takes keys of any length, so this cannot fail.
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC accepts keys of any length");
        mac.update(text.as_bytes());
        mac
    }
}

/// What every token starts with: its format (a new format gets a new prefix).
const TOKEN_PREFIX: &str = "sluice1";

/// Who sent a request, as proven by its token. Servers find it in the request's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
}

fn unix_now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Client side: signs every outgoing request, with the key or with tokens of the local
/// credential service.
#[derive(Debug, Clone)]
pub struct Signer {
    source: TokenSource,
}

#[derive(Debug, Clone)]
enum TokenSource {
    /// Signs as `uid` with the key.
    Key { key: Key, uid: u32 },
    /// Asks the credential service.
    Service(Arc<ServiceTokens>),
}

/// Tokens of the credential service at `socket`, one reused while it is fresh enough.
#[derive(Debug)]
struct ServiceTokens {
    socket: PathBuf,
    /// The last token and when it was fetched.
    cached: Mutex<Option<(String, i64)>>,
}

/// A token of the credential service is used for this long (well within [`MAX_TOKEN_AGE`]),
/// in seconds, then a new one is asked for.
const SERVICE_TOKEN_REUSE: i64 = MAX_TOKEN_AGE / 3;

impl ServiceTokens {
    fn token(&self, now: i64) -> std::io::Result<String> {
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((token, at)) = cached.as_ref()
            && (0..SERVICE_TOKEN_REUSE).contains(&(now - at))
        {
            return Ok(token.clone());
        }
        let token = sack::request_token(&self.socket)?;
        *cached = Some((token.clone(), now));
        Ok(token)
    }
}

/// Neither way of signing works for the caller: the key cannot be used and the credential
/// service does not answer. Names both.
#[derive(Debug, thiserror::Error)]
#[error("cannot sign requests: {key}; credential service {}: {service}", socket.display())]
pub struct NoCredential {
    /// Why the key could not be used.
    pub key: AuthError,
    /// The credential service's socket.
    pub socket: PathBuf,
    /// Why it did not give a token.
    pub service: std::io::Error,
}

impl Signer {
    /// A signer for `uid`.
    pub fn new(key: Key, uid: u32) -> Self {
        Self {
            source: TokenSource::Key { key, uid },
        }
    }

    /// A signer for the calling process's real uid.
    pub fn for_current_user(key: Key) -> Self {
        Self::new(key, nix::unistd::getuid().as_raw())
    }

    /// The signer of a command whose configuration is in `conf_dir`: with the key there when
    /// the caller can read it (root, the SlurmUser), else with tokens of the credential service
    /// there (see [`sack`]), which is asked once at once so that neither working is reported
    /// here.
    pub fn for_caller(conf_dir: &Path) -> Result<Self, NoCredential> {
        let key_err = match Key::load(&conf_dir.join(KEY_FILE)) {
            Ok(key) => return Ok(Self::for_current_user(key)),
            Err(e) => e,
        };
        let tokens = ServiceTokens {
            socket: sack::socket_path(conf_dir),
            cached: Mutex::new(None),
        };
        match tokens.token(unix_now()) {
            Ok(_) => Ok(Self {
                source: TokenSource::Service(Arc::new(tokens)),
            }),
            Err(service) => Err(NoCredential {
                key: key_err,
                socket: tokens.socket,
                service,
            }),
        }
    }

    /// A token for the next request.
    fn token(&self, now: i64) -> Result<String, Status> {
        match &self.source {
            TokenSource::Key { key, uid } => Ok(key.sign(*uid, now)),
            TokenSource::Service(tokens) => tokens.token(now).map_err(|e| {
                Status::unauthenticated(format!(
                    "{AUTH_ERROR}: credential service {}: {e}",
                    tokens.socket.display()
                ))
            }),
        }
    }
}

impl Interceptor for Signer {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let token = self.token(unix_now())?;
        let value = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| Status::internal("token is not valid metadata"))?;
        req.metadata_mut().insert("authorization", value);
        crate::protocol::stamp(req.metadata_mut());
        Ok(req)
    }
}

/// Server side: refuses unsigned, badly signed and stale requests (`Unauthenticated`) and
/// requests of another or no protocol version (`FailedPrecondition`, see [`crate::protocol`]),
/// and records the caller's [`Identity`] in the request's extensions.
#[derive(Debug, Clone)]
pub struct Verifier {
    key: Key,
    server: &'static str,
}

impl Verifier {
    /// A verifier for `key`, naming its server "the server" in protocol errors.
    pub fn new(key: Key) -> Self {
        Self {
            key,
            server: "the server",
        }
    }

    /// Names the program this verifier guards (`sluice-ctld`, ...) in protocol errors.
    pub fn serving(self, server: &'static str) -> Self {
        Self { server, ..self }
    }

    /// Checks the `authorization` metadata of a request at unix time `now`.
    pub fn check(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        now: i64,
    ) -> Result<Identity, AuthError> {
        let header = metadata
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .ok_or(AuthError::Unsigned)?;
        let token = header.strip_prefix("Bearer ").ok_or(AuthError::Unsigned)?;
        self.key.verify(token, now)
    }
}

impl Interceptor for Verifier {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        // Another version is refused before the signature, since it may sign differently; a
        // missing version after it, so that an unsigned stranger is told it is unauthenticated.
        let protocol = crate::protocol::check(req.metadata(), self.server);
        if let Err(e @ ProtocolError::Mismatch { .. }) = protocol {
            return Err(e.into());
        }
        match self.check(req.metadata(), unix_now()) {
            Ok(identity) => {
                protocol?;
                req.extensions_mut().insert(identity);
                Ok(req)
            }
            Err(e) => Err(Status::unauthenticated(format!("{AUTH_ERROR}: {e}"))),
        }
    }
}

/// The caller's identity recorded by [`Verifier`]; `unauthenticated` if it is missing, which
/// only happens when a service is mounted without the verifier.
pub fn identity<T>(req: &Request<T>) -> Result<Identity, Status> {
    req.extensions()
        .get::<Identity>()
        .copied()
        .ok_or_else(|| Status::unauthenticated(AUTH_ERROR))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> Key {
        Key::from_bytes(vec![b; 64])
    }

    #[test]
    fn signed_tokens_verify_within_their_window() {
        let k = key(1);
        let t = k.sign(1000, 5_000);
        assert_eq!(k.verify(&t, 5_000).unwrap(), Identity { uid: 1000 });
        assert_eq!(k.verify(&t, 5_000 + MAX_TOKEN_AGE).unwrap().uid, 1000);
        assert!(matches!(
            k.verify(&t, 5_001 + MAX_TOKEN_AGE),
            Err(AuthError::Stale { .. })
        ));
        assert!(matches!(
            k.verify(&t, 5_000 - MAX_CLOCK_SKEW - 1),
            Err(AuthError::Future)
        ));
    }

    #[test]
    fn other_keys_and_tampering_are_refused() {
        let t = key(1).sign(0, 100);
        assert!(matches!(
            key(2).verify(&t, 100),
            Err(AuthError::BadSignature(_))
        ));
        let forged = key(2).sign(0, 100);
        assert!(key(1).verify(&forged, 100).is_err());
        assert!(key(1).verify("not.a.token", 100).is_err());
    }

    #[test]
    fn a_changed_claim_breaks_the_signature_and_malformed_tokens_are_refused() {
        let k = key(1);
        let token = k.sign(1000, 100);
        assert_eq!(k.verify(&token, 100).unwrap().uid, 1000);
        // Claiming root with the MAC of a uid-1000 token.
        let as_root = token.replacen(".1000.", ".0.", 1);
        assert!(matches!(
            k.verify(&as_root, 100),
            Err(AuthError::BadSignature(_))
        ));
        let (claims, _) = token.rsplit_once('.').unwrap();
        for bad in [
            "",
            ".",
            "sluice1",
            &format!("{claims}."),
            &format!("{claims}.zz"),
            &format!("{claims}.{}", "0".repeat(64)),
            &format!("{token}.extra"),
            "sluice1.x.100.00",
            "sluice1.4294967296.100.00",
        ] {
            assert!(
                matches!(k.verify(bad, 100), Err(AuthError::BadSignature(_))),
                "{bad:?} accepted"
            );
        }
        // Well signed but of another format or with non-numeric fields: still refused.
        for claims in [
            "sluice0.1.100",
            "sluice1.x.100",
            "sluice1.1.y",
            "sluice1.1.100.9",
        ] {
            let mac = hex::encode(k.mac(claims).finalize().into_bytes());
            assert!(
                k.verify(&format!("{claims}.{mac}"), 100).is_err(),
                "{claims}"
            );
        }
    }

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
        // A full-length key file signs exactly as before: HMAC over the raw bytes.
        let raw = vec![7u8; 1024];
        let mut direct = Hmac::<Sha256>::new_from_slice(&raw).unwrap();
        direct.update(b"sluice1.5.100");
        let expected = hex::encode(direct.finalize().into_bytes());
        let token = Key::from_bytes(raw).sign(5, 100);
        assert_eq!(token, format!("sluice1.5.100.{expected}"));
    }

    #[test]
    fn key_files_must_be_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(KEY_FILE);
        let k = Key::create_if_missing(&path).unwrap();
        let again = Key::create_if_missing(&path).unwrap();
        assert_eq!(k.secret, again.secret, "an existing key is kept");
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

    /// A request through `signer`, as the server receives it.
    fn signed(signer: &mut Signer) -> Request<()> {
        signer.call(Request::new(())).unwrap()
    }

    #[test]
    fn signed_requests_of_our_protocol_version_pass_the_verifier() {
        let mut signer = Signer::new(key(1), 1000);
        let mut verifier = Verifier::new(key(1)).serving("sluice-ctld");
        let req = verifier.call(signed(&mut signer)).unwrap();
        assert_eq!(identity(&req).unwrap(), Identity { uid: 1000 });
    }

    #[test]
    fn requests_without_a_protocol_version_are_refused_as_a_mismatch() {
        let mut req = signed(&mut Signer::new(key(1), 0));
        req.metadata_mut()
            .remove(crate::protocol::PROTOCOL_METADATA);
        let mut verifier = Verifier::new(key(1)).serving("sluice-dbd");
        let status = verifier.call(req).unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert_eq!(
            status.message(),
            format!(
                "protocol version mismatch: client sent no protocol version, sluice-dbd speaks {}",
                crate::protocol::PROTOCOL_VERSION
            )
        );
    }

    #[test]
    fn requests_of_another_protocol_version_are_refused_naming_both() {
        let ours = crate::protocol::PROTOCOL_VERSION;
        let mut req = signed(&mut Signer::new(key(1), 0));
        req.metadata_mut().insert(
            crate::protocol::PROTOCOL_METADATA,
            MetadataValue::from(ours + 1),
        );
        let mut verifier = Verifier::new(key(1)).serving("sluice-ctld");
        let status = verifier.call(req).unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert_eq!(
            status.message(),
            format!(
                "protocol version mismatch: client speaks {}, sluice-ctld speaks {ours}",
                ours + 1
            )
        );
        // Checked before the signature, so even a foreign key gets the clear message.
        let mut req = signed(&mut Signer::new(key(2), 0));
        req.metadata_mut().insert(
            crate::protocol::PROTOCOL_METADATA,
            MetadataValue::from(0u32),
        );
        let status = Verifier::new(key(1)).call(req).unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
    }

    #[tokio::test]
    async fn callers_who_cannot_read_the_key_use_the_credential_service() {
        let dir = tempfile::tempdir().unwrap();
        // No key and no service: both are named.
        let e = Signer::for_caller(dir.path()).unwrap_err().to_string();
        let socket = sack::socket_path(dir.path());
        assert!(
            e.starts_with(&format!(
                "cannot sign requests: {}",
                dir.path().join(KEY_FILE).display()
            )) && e.contains(&format!("; credential service {}: ", socket.display())),
            "{e}"
        );
        // A service signing with the cluster's key: its tokens pass the cluster's verifier.
        let key = key(3);
        let claimed = sack::claim(&socket).unwrap().unwrap();
        let server = tokio::spawn(sack::serve(claimed, key.clone(), std::future::pending()));
        let path = dir.path().to_path_buf();
        let mut signer = tokio::task::spawn_blocking(move || Signer::for_caller(&path))
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(signer.source, TokenSource::Service(_)));
        let req = tokio::task::spawn_blocking(move || signed(&mut signer))
            .await
            .unwrap();
        let req = Verifier::new(key).call(req).unwrap();
        let me = nix::unistd::getuid().as_raw();
        assert_eq!(identity(&req).unwrap(), Identity { uid: me });
        server.abort();
        // The key is used when it can be read.
        Key::create_if_missing(&dir.path().join(KEY_FILE)).unwrap();
        let signer = Signer::for_caller(dir.path()).unwrap();
        assert!(matches!(signer.source, TokenSource::Key { uid, .. } if uid == me));
    }

    #[test]
    fn unsigned_requests_without_a_version_are_an_auth_error() {
        let status = Verifier::new(key(1)).call(Request::new(())).unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
    }

    #[test]
    fn a_wrong_key_with_our_protocol_version_is_still_an_auth_error() {
        let status = Verifier::new(key(1))
            .call(signed(&mut Signer::new(key(2), 0)))
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
    }
}
