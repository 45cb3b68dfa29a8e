//! Fake servers of every Sluice service, generated from the wire protocol: each method answers
//! `Unimplemented` until a test's implementation overrides it, so a fake states only what its
//! test needs. Server-streaming methods return [`BoxStream`].
//!
//! ```ignore
//! struct Dbd;
//! #[tonic::async_trait]
//! impl fake::accounting_server::Accounting for Dbd {
//!     async fn ping(&self, _: Request<PingRequest>) -> Result<Response<PingReply>, Status> { .. }
//! }
//! ```

#![allow(missing_docs, clippy::all, clippy::pedantic)]

pub use tonic::codegen::BoxStream;

tonic::include_proto!("sluice.v1");
