//! [`Guarded`]: a daemon's tonic services behind its [`Verifier`]. It sits where tonic's
//! interceptors would, but sees what they cannot: the request's path and its raw body, which the
//! token must be bound to. A unary body is read whole (tonic would buffer the message anyway),
//! digested and handed on; a client-streamed body ([`request_streams`]) is handed on as it comes.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::{BodyExt, Full, Limited};
use tonic::Status;
use tonic::body::Body;
use tonic::metadata::MetadataMap;
use tonic::server::NamedService;

use super::token::Binding;
use super::{AUTH_ERROR, Verifier, request_streams, unix_now};
use crate::protocol::{self, ProtocolError};

/// The largest request body read for its digest (the servers decode at most 4 MiB anyway).
const MAX_BODY: usize = 64 << 20;

/// A tonic server whose requests pass the [`Verifier`] first (see [`Verifier::guard`]).
#[derive(Debug, Clone)]
pub struct Guarded<S> {
    inner: S,
    verifier: Verifier,
}

impl<S> Guarded<S> {
    pub(super) fn new(inner: S, verifier: Verifier) -> Self {
        Self { inner, verifier }
    }
}

impl<S: NamedService> NamedService for Guarded<S> {
    const NAME: &'static str = S::NAME;
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S> tower_service::Service<http::Request<Body>> for Guarded<S>
where
    S: tower_service::Service<
            http::Request<Body>,
            Response = http::Response<Body>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let verifier = self.verifier.clone();
        Box::pin(async move {
            match admit(&verifier, req).await {
                Ok(req) => {
                    let deadline = crate::deadline::of_headers(req.headers());
                    crate::deadline::scope(deadline, inner.call(req)).await
                }
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}

/// The request with the caller's identity in its extensions, or why it is refused.
async fn admit(
    verifier: &Verifier,
    req: http::Request<Body>,
) -> Result<http::Request<Body>, Status> {
    let (mut parts, body) = req.into_parts();
    let mut metadata = MetadataMap::from_headers(std::mem::take(&mut parts.headers));
    // Another version is refused before the signature, since it may sign differently; a
    // missing version after it, so that an unsigned stranger is told it is unauthenticated.
    let version = protocol::check(&metadata, verifier.server());
    if let Err(e @ ProtocolError::Mismatch { .. }) = version {
        return Err(e.into());
    }
    let method = parts.uri.path();
    let (binding, body) = if request_streams(method) {
        (Binding::new(method, b""), body)
    } else {
        let bytes = Limited::new(body, MAX_BODY)
            .collect()
            .await
            .map_err(|e| Status::invalid_argument(format!("request body unreadable: {e}")))?
            .to_bytes();
        (Binding::new(method, &bytes), Body::new(Full::new(bytes)))
    };
    let checked = if verifier.blocks(&metadata) {
        let (v, b) = (verifier.clone(), binding);
        let (checked, metadata_back) = tokio::task::spawn_blocking(move || {
            let checked = v.check(&metadata, &b, unix_now());
            (checked, metadata)
        })
        .await
        .map_err(|e| Status::internal(format!("credential check failed: {e}")))?;
        metadata = metadata_back;
        checked
    } else {
        verifier.check(&metadata, &binding, unix_now())
    };
    let identity = checked.map_err(|e| {
        tracing::warn!(server = verifier.server(), %method, "request refused: {e}");
        Status::unauthenticated(format!("{AUTH_ERROR}: {e}"))
    })?;
    version?;
    parts.headers = metadata.into_headers();
    parts.extensions.insert(identity);
    Ok(http::Request::from_parts(parts, body))
}
