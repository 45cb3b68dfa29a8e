//! Serving a fake (or a real service) on an ephemeral loopback port inside the test process.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::server::Router;

/// A server running on a task of the test's runtime; dropped with the runtime.
#[derive(Debug)]
pub struct Served {
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Served {
    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}

/// Binds `127.0.0.1:0` and serves `router` (e.g.
/// `Server::builder().add_service(AccountingServer::new(fake))`) on it.
pub async fn serve(router: Router) -> Served {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(router.serve_with_incoming(TcpListenerStream::new(listener)));
    Served { addr }
}
