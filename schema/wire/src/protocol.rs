//! The protocol version: which generation of the wire protocol a program speaks, compared on
//! every request so that mixed installations fail with a clear message rather than with
//! undecodable replies.
//!
//! Every signed request carries [`PROTOCOL_VERSION`] in its [`PROTOCOL_METADATA`] entry (the
//! [`Signer`](crate::auth::Signer) adds it next to `authorization`), and the server's
//! [`Verifier`](crate::auth::Verifier) refuses any other version with `FailedPrecondition`.
//! It is distinct from the crate version reported by `Ping`: bump it when a change to the
//! `.proto` files or to the request signing means older programs cannot talk to newer ones.

use tonic::Status;
use tonic::metadata::MetadataMap;

/// The version of the wire protocol this build speaks.
pub const PROTOCOL_VERSION: u32 = 16;
/// The request metadata entry carrying the client's protocol version.
pub const PROTOCOL_METADATA: &str = "sluice-protocol";

/// Why a request's protocol version was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The request names no protocol version (a client older than the version check).
    #[error("protocol version mismatch: client sent no protocol version, {server} speaks {ours}")]
    Missing { server: &'static str, ours: u32 },
    /// The request names another protocol version.
    #[error("protocol version mismatch: client speaks {client}, {server} speaks {ours}")]
    Mismatch {
        client: String,
        server: &'static str,
        ours: u32,
    },
}

impl From<ProtocolError> for Status {
    fn from(e: ProtocolError) -> Self {
        Status::failed_precondition(e.to_string())
    }
}

/// Records [`PROTOCOL_VERSION`] in a request's headers.
pub fn stamp(headers: &mut http::HeaderMap) {
    headers.insert(PROTOCOL_METADATA, http::HeaderValue::from(PROTOCOL_VERSION));
}

/// Checks that a request speaks [`PROTOCOL_VERSION`]; `server` names the refusing program in
/// the error (e.g. `sluice-ctld`).
pub fn check(metadata: &MetadataMap, server: &'static str) -> Result<(), ProtocolError> {
    let ours = PROTOCOL_VERSION;
    let Some(value) = metadata.get(PROTOCOL_METADATA) else {
        return Err(ProtocolError::Missing { server, ours });
    };
    let client = value.to_str().map(str::trim).unwrap_or("?");
    if client.parse::<u32>() == Ok(ours) {
        Ok(())
    } else {
        Err(ProtocolError::Mismatch {
            client: client.to_string(),
            server,
            ours,
        })
    }
}
