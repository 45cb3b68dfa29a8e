//! The client side: [`Signer`] makes the token of each request, [`Signed`] wraps a channel so
//! that every request leaves with one bound to its method and body.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::HeaderValue;
use http_body_util::{BodyExt, Full};
use tonic::Status;
use tonic::body::Body;

use super::munge::Munge;
use super::token::{Binding, Claims, new_nonce};
use super::{
    AUTH_ERROR, AuthError, BEARER_SCHEME, KEY_FILE, Key, MUNGE_SCHEME, request_streams, sack,
    unix_now,
};
use sluice_vocab::auth_conf::AuthConf;

/// Signs requests: with the key, or with tokens of the local credential service.
#[derive(Debug, Clone)]
pub struct Signer {
    source: TokenSource,
}

#[derive(Debug, Clone)]
enum TokenSource {
    /// Signs as `uid`/`gid` with the key.
    Key { key: Key, uid: u32, gid: u32 },
    /// Asks the credential service at this socket, once per request.
    Service(Arc<PathBuf>),
    /// Asks munged (`AuthType=auth/munge`), once per request.
    Munge(Arc<Munge>),
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
    /// A signer for `uid`, with its primary group (the process's own when it is the caller,
    /// else from the user database; `nogroup` for a uid unknown there).
    pub fn new(key: Key, uid: u32) -> Self {
        let gid = if uid == nix::unistd::getuid().as_raw() {
            nix::unistd::getgid().as_raw()
        } else {
            nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
                .ok()
                .flatten()
                .map_or(NOGROUP, |u| u.gid.as_raw())
        };
        Self::with_gid(key, uid, gid)
    }

    /// A signer for `uid` and `gid`.
    pub fn with_gid(key: Key, uid: u32, gid: u32) -> Self {
        Self {
            source: TokenSource::Key { key, uid, gid },
        }
    }

    /// A signer for the calling process's real uid and gid.
    pub fn for_current_user(key: Key) -> Self {
        Self::with_gid(
            key,
            nix::unistd::getuid().as_raw(),
            nix::unistd::getgid().as_raw(),
        )
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
        let socket = sack::socket_path(conf_dir);
        match sack::probe(&socket) {
            Ok(()) => Ok(Self {
                source: TokenSource::Service(Arc::new(socket)),
            }),
            Err(service) => Err(NoCredential {
                key: key_err,
                socket,
                service,
            }),
        }
    }

    /// The signer of a command whose configuration is in `conf_dir` and says `auth`: MUNGE
    /// credentials with `auth/munge`, else as [`Signer::for_caller`].
    pub fn for_caller_with(conf_dir: &Path, auth: &AuthConf) -> Result<Self, NoCredential> {
        match auth {
            AuthConf::Slurm => Self::for_caller(conf_dir),
            AuthConf::Munge { socket } => Ok(Self::munge(Munge {
                socket: socket.clone(),
            })),
        }
    }

    /// A signer asking munged for a credential per request.
    pub fn munge(munge: Munge) -> Self {
        Self {
            source: TokenSource::Munge(Arc::new(munge)),
        }
    }

    /// Whether this signer asks the credential service (tests, diagnostics).
    pub fn uses_service(&self) -> bool {
        matches!(self.source, TokenSource::Service(_))
    }

    /// The `authorization` value of one request bound by `binding`, issued at unix time
    /// `now`: `Bearer <token>`, or `Munge <credential>`.
    pub async fn token(&self, binding: Binding, now: i64) -> Result<String, Status> {
        match &self.source {
            TokenSource::Key { key, uid, gid } => Ok(key_header(key, *uid, *gid, binding, now)),
            TokenSource::Munge(munge) => {
                let munge = Arc::clone(munge);
                let nonce = new_nonce();
                let cred = tokio::task::spawn_blocking(move || munge.encode(&binding, &nonce))
                    .await
                    .map_err(|e| Status::internal(format!("munge task failed: {e}")))?
                    .map_err(|e| Status::unauthenticated(format!("{AUTH_ERROR}: {e}")))?;
                Ok(format!("{MUNGE_SCHEME}{cred}"))
            }
            TokenSource::Service(socket) => sack::request_token(socket, &binding, &new_nonce())
                .await
                .map(|token| format!("{BEARER_SCHEME}{token}"))
                .map_err(|e| {
                    Status::unauthenticated(format!(
                        "{AUTH_ERROR}: credential service {}: {e}",
                        socket.display()
                    ))
                }),
        }
    }

    /// Signs a request to `method` whose body is `body` (`None` for a streamed request body):
    /// sets its `authorization` and protocol version headers.
    ///
    /// The token is marked sensitive, which HTTP/2 sends as a literal "never indexed" (RFC
    /// 7541, 7.1.3): a value good for one request is of no use in the connection's header
    /// tables, and indexing it made every request insert ~250 bytes into both sides' 4 KiB
    /// tables, pushing out the headers that repeat (content type, user agent, protocol
    /// version), which then travelled again in full; credentials also stay out of the tables.
    pub async fn sign_headers(
        &self,
        headers: &mut http::HeaderMap,
        method: &str,
        body: Option<&[u8]>,
    ) -> Result<(), Status> {
        let binding = Binding::new(method, body.unwrap_or_default());
        let token = match &self.source {
            // Signed on the spot (every request of the daemons and of root's commands).
            TokenSource::Key { key, uid, gid } => key_header(key, *uid, *gid, binding, unix_now()),
            // Boxed, so that the futures of every request are not sized for a socket exchange.
            _ => Box::pin(self.token(binding, unix_now())).await?,
        };
        let mut value = HeaderValue::try_from(token)
            .map_err(|_| Status::internal("token is not valid metadata"))?;
        value.set_sensitive(true);
        headers.insert("authorization", value);
        crate::protocol::stamp(headers);
        Ok(())
    }

    /// `inner` (a channel) with every request signed by this signer.
    pub fn wrap<S>(self, inner: S) -> Signed<S> {
        Signed {
            inner,
            signer: self,
            waits: None,
        }
    }

    /// [`Signer::wrap`] for a client that waits at most `timeout` for each reply: its
    /// requests carry that deadline (see [`crate::deadline`]).
    pub fn wrap_bounded<S>(self, inner: S, timeout: Duration) -> Signed<S> {
        Signed {
            inner,
            signer: self,
            waits: Some(timeout),
        }
    }
}

/// `Bearer <token>` for `uid`/`gid` signed with `key`, written into one buffer.
fn key_header(key: &Key, uid: u32, gid: u32, binding: Binding, now: i64) -> String {
    let mut out = String::with_capacity(BEARER_SCHEME.len() + 100 + binding.method.len());
    out.push_str(BEARER_SCHEME);
    let claims = Claims {
        uid,
        gid,
        issued: now,
        nonce: new_nonce(),
        binding,
    };
    key.sign_into(&claims, &mut out);
    out
}

/// The group of a uid the user database does not know.
const NOGROUP: u32 = 65534;

/// A channel whose requests are signed: each request's body is read (a unary request is one
/// encoded message, already in memory), digested and sent on with its token. Client-streamed
/// bodies ([`request_streams`]) are sent as they come, bound to their method only.
#[derive(Debug, Clone)]
pub struct Signed<S> {
    inner: S,
    signer: Signer,
    /// How long the client waits for each reply, when bounded.
    waits: Option<Duration>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower_service::Service<http::Request<Body>> for Signed<S>
where
    S: tower_service::Service<http::Request<Body>, Response = http::Response<Body>>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    S::Error: Send,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        // The service polled ready is the one to call; its clone waits for the next request.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let signer = self.signer.clone();
        let deadline = self.waits.map(crate::deadline::stamp);
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            if let Some(mut value) = deadline.and_then(|d| HeaderValue::try_from(d).ok()) {
                // Never indexed either: another value every millisecond.
                value.set_sensitive(true);
                parts.headers.insert(crate::deadline::HEADER, value);
            }
            let method = parts.uri.path();
            let (bytes, body) = if request_streams(method) {
                (None, body)
            } else {
                match body.collect().await {
                    Ok(collected) => {
                        let bytes = collected.to_bytes();
                        (Some(bytes.clone()), Body::new(Full::new(bytes)))
                    }
                    Err(status) => return Ok(status.into_http()),
                }
            };
            if let Err(status) = signer
                .sign_headers(&mut parts.headers, method, bytes.as_deref())
                .await
            {
                return Ok(status.into_http());
            }
            inner.call(http::Request::from_parts(parts, body)).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::token::BodyDigest;

    #[tokio::test]
    async fn the_token_header_is_never_indexed_and_opens_for_its_request_only() {
        let key = Key::from_bytes(vec![3; 64]);
        let signer = Signer::with_gid(key.clone(), 1000, 100);
        let mut headers = http::HeaderMap::new();
        signer
            .sign_headers(&mut headers, "/a.B/C", Some(b"body"))
            .await
            .unwrap();
        let value = headers.get("authorization").unwrap();
        // HTTP/2 keeps a sensitive value out of its header tables (RFC 7541, 7.1.3).
        assert!(value.is_sensitive());
        let token = value.to_str().unwrap().strip_prefix(BEARER_SCHEME).unwrap();
        let opened = key.open(token, &BodyDigest::of(b"body")).unwrap();
        assert_eq!(
            (opened.uid, opened.gid, opened.method),
            (1000, 100, "/a.B/C")
        );
        assert!(matches!(
            key.open(token, &BodyDigest::of(b"other")),
            Err(AuthError::OtherBody)
        ));
        assert!(headers.contains_key(crate::protocol::PROTOCOL_METADATA));
    }
}
