//! The server side's checks of a token: signature, freshness, binding to the request at hand,
//! first use.

use std::sync::Arc;

use tonic::metadata::MetadataMap;

use sluice_vocab::auth_conf::AuthConf;

use super::munge::Munge;
use super::replay::ReplayCache;
use super::token::Binding;
use super::{
    AuthError, BEARER_SCHEME, Guarded, Identity, Key, MAX_CLOCK_SKEW, MAX_TOKEN_AGE, MUNGE_SCHEME,
};

/// Checks the tokens of one daemon's requests. Clones share the replay cache, so one verifier
/// (and its clones) guards all the services a daemon serves.
#[derive(Debug, Clone)]
pub struct Verifier {
    key: Key,
    server: &'static str,
    replays: Arc<ReplayCache>,
    /// With `AuthType=auth/munge`: munged, which decodes the users' credentials.
    munge: Option<Arc<Munge>>,
}

impl Verifier {
    /// A verifier for `key`, naming its server "the server" in protocol errors.
    pub fn new(key: Key) -> Self {
        Self {
            key,
            server: "the server",
            replays: Arc::default(),
            munge: None,
        }
    }

    /// Also accepts the MUNGE credentials of `auth` when it is `auth/munge` (tokens signed
    /// with the key, the daemons' own, stay accepted).
    pub fn with_auth(self, auth: &AuthConf) -> Self {
        match auth {
            AuthConf::Slurm => self,
            AuthConf::Munge { socket } => Self {
                munge: Some(Arc::new(Munge {
                    socket: socket.clone(),
                })),
                ..self
            },
        }
    }

    /// Whether checking `metadata`'s credential blocks (asks munged).
    pub fn blocks(&self, metadata: &MetadataMap) -> bool {
        self.munge.is_some()
            && metadata
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with(MUNGE_SCHEME))
    }

    /// Names the program this verifier guards (`sluice-ctld`, ...) in protocol errors.
    pub fn serving(self, server: &'static str) -> Self {
        Self { server, ..self }
    }

    /// The program named in protocol errors.
    pub fn server(&self) -> &'static str {
        self.server
    }

    /// `inner` (a tonic server) behind this verifier: requests reach it only with a token
    /// bound to them, seen for the first time, and carry the caller's [`Identity`].
    pub fn guard<S>(&self, inner: S) -> Guarded<S> {
        Guarded::new(inner, self.clone())
    }

    /// Checks the `authorization` metadata of a request bound by `binding` at unix time `now`,
    /// and remembers its nonce. Blocks when it asks munged (see [`Verifier::blocks`]).
    pub fn check(
        &self,
        metadata: &MetadataMap,
        binding: &Binding,
        now: i64,
    ) -> Result<Identity, AuthError> {
        let header = metadata
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .ok_or(AuthError::Unsigned)?;
        if let (Some(munge), Some(cred)) = (&self.munge, header.strip_prefix(MUNGE_SCHEME)) {
            return self.check_munge(munge, cred, binding, now);
        }
        let token = header
            .strip_prefix(BEARER_SCHEME)
            .ok_or(AuthError::Unsigned)?;
        // The MAC covers the body's digest: a token opens only with the body it was made for.
        let claims = self.key.open(token, &binding.digest)?;
        let age = now.saturating_sub(claims.issued);
        if age > MAX_TOKEN_AGE {
            return Err(AuthError::Stale { age });
        }
        if age.saturating_neg() > MAX_CLOCK_SKEW {
            return Err(AuthError::Future);
        }
        if claims.method != binding.method {
            return Err(AuthError::OtherMethod {
                signed: claims.method.to_string(),
                used: binding.method.clone(),
            });
        }
        // Last: a token refused above does not use up its nonce.
        if !self.replays.admit(claims.nonce.bits(), claims.issued, now) {
            return Err(AuthError::Replayed);
        }
        Ok(Identity {
            uid: claims.uid,
            gid: claims.gid,
        })
    }

    /// A MUNGE credential: munged vouches for uid, gid and freshness and refuses a replay;
    /// the payload must bind this request, and its nonce be new here too.
    fn check_munge(
        &self,
        munge: &Munge,
        cred: &str,
        binding: &Binding,
        now: i64,
    ) -> Result<Identity, AuthError> {
        let decoded = munge.decode(cred)?;
        bound_to(&decoded.binding, binding)?;
        if !self.replays.admit(decoded.nonce.bits(), now, now) {
            return Err(AuthError::Replayed);
        }
        Ok(Identity {
            uid: decoded.uid,
            gid: decoded.gid,
        })
    }
}

/// Checks that a credential made for `signed` is used for `used`.
fn bound_to(signed: &Binding, used: &Binding) -> Result<(), AuthError> {
    if signed.method != used.method {
        return Err(AuthError::OtherMethod {
            signed: signed.method.clone(),
            used: used.method.clone(),
        });
    }
    if signed.digest != used.digest {
        return Err(AuthError::OtherBody);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tonic::metadata::MetadataValue;

    use super::*;
    use crate::auth::Claims;
    use crate::auth::token::new_nonce;

    const SUBMIT: &str = "/sluice.v1.Controller/SubmitJob";

    fn key() -> Key {
        Key::from_bytes(vec![1; 64])
    }

    fn claims(method: &str, body: &[u8], issued: i64) -> Claims {
        Claims {
            uid: 1000,
            gid: 100,
            issued,
            nonce: new_nonce(),
            binding: Binding::new(method, body),
        }
    }

    fn metadata(token: &str) -> MetadataMap {
        let mut m = MetadataMap::new();
        m.insert(
            "authorization",
            MetadataValue::try_from(format!("Bearer {token}")).unwrap(),
        );
        m
    }

    #[test]
    fn a_token_is_good_for_its_own_request_once() {
        let v = Verifier::new(key());
        let token = key().sign(&claims(SUBMIT, b"job", 1_000));
        let binding = Binding::new(SUBMIT, b"job");
        let who = v.check(&metadata(&token), &binding, 1_000).unwrap();
        assert_eq!(
            who,
            Identity {
                uid: 1000,
                gid: 100
            }
        );
        // The example: the same token 30 s later, for the same or another call.
        assert!(matches!(
            v.check(&metadata(&token), &binding, 1_030),
            Err(AuthError::Replayed)
        ));
        // A clone (another service of the daemon) shares the cache.
        assert!(matches!(
            v.clone().check(&metadata(&token), &binding, 1_030),
            Err(AuthError::Replayed)
        ));
    }

    #[test]
    fn a_token_for_another_method_or_body_is_refused_without_using_it_up() {
        let v = Verifier::new(key());
        let token = key().sign(&claims(SUBMIT, b"job", 1_000));
        let cancel = Binding::new("/sluice.v1.Controller/CancelJob", b"job");
        let e = v.check(&metadata(&token), &cancel, 1_000).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("credential was issued for {SUBMIT}, not /sluice.v1.Controller/CancelJob")
        );
        let other_body = Binding::new(SUBMIT, b"another job");
        assert!(matches!(
            v.check(&metadata(&token), &other_body, 1_000),
            Err(AuthError::OtherBody)
        ));
        // Still good for the request it was made for.
        let own = Binding::new(SUBMIT, b"job");
        assert!(v.check(&metadata(&token), &own, 1_000).is_ok());
    }

    #[test]
    fn stale_future_forged_and_missing_tokens_are_refused() {
        let v = Verifier::new(key());
        let binding = Binding::new(SUBMIT, b"");
        let at = |issued| key().sign(&claims(SUBMIT, b"", issued));
        assert!(
            v.check(&metadata(&at(1_000)), &binding, 1_000 + MAX_TOKEN_AGE)
                .is_ok()
        );
        assert!(matches!(
            v.check(&metadata(&at(1_000)), &binding, 1_001 + MAX_TOKEN_AGE),
            Err(AuthError::Stale { .. })
        ));
        assert!(matches!(
            v.check(&metadata(&at(1_000)), &binding, 999 - MAX_CLOCK_SKEW),
            Err(AuthError::Future)
        ));
        let forged = Key::from_bytes(vec![2; 64]).sign(&claims(SUBMIT, b"", 1_000));
        assert!(matches!(
            v.check(&metadata(&forged), &binding, 1_000),
            Err(AuthError::BadSignature(_))
        ));
        assert!(matches!(
            v.check(&MetadataMap::new(), &binding, 1_000),
            Err(AuthError::Unsigned)
        ));
    }
}
