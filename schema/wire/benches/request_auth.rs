//! What request authentication adds to an RPC (issue 11's target: under 0.5 ms at the median,
//! submission rate unchanged). One tonic server on loopback answers `GetFederation` (a trivial
//! handler), reached four ways:
//!
//! - none: a plain channel to the bare service (the baseline: what an RPC costs without auth);
//! - key: signed with `slurm.key` (root, the SlurmUser, the daemons), checked by the guard
//!   (body digest, HMAC, binding, replay cache);
//! - service: a token per request from the local credential service over its unix socket
//!   (users who cannot read the key), checked the same way;
//! - munge: a MUNGE credential per request from munged, decoded by munged (when munged answers
//!   at the socket `MUNGE_SOCKET` names, else at libmunge's default; skipped when none does).
//!
//! For each: the median and 90th percentile of sequential calls, and calls per second with 64
//! concurrent callers; then what signing and checking cost on their own for a 4 KiB body.
//! Run with `cargo bench -p sluice-wire --bench request_auth` (with a private munged:
//! `MUNGE_SOCKET=/path/munge.socket cargo bench ...`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sluice_wire::auth::munge::Munge;
use sluice_wire::auth::token::new_nonce;
use sluice_wire::auth::{Binding, Claims, Key, Signer, Verifier, sack};
use sluice_wire::proto::controller_federation_client::ControllerFederationClient;
use sluice_wire::proto::controller_federation_server::{
    ControllerFederation, ControllerFederationServer,
};
use sluice_wire::proto::{FederationView, GetFederationRequest};
use tonic::transport::Channel;
use tonic::{Request, Response, Status};

const CALLS: usize = 2_000;
const CONCURRENT: usize = 64;

#[derive(Clone)]
struct Trivial;

#[tonic::async_trait]
impl ControllerFederation for Trivial {
    async fn get_federation(
        &self,
        _req: Request<GetFederationRequest>,
    ) -> Result<Response<FederationView>, Status> {
        Ok(Response::new(FederationView {
            cluster: "bench".into(),
            ..Default::default()
        }))
    }
}

/// Serves the trivial service, guarded by `verifier` or bare; returns its port.
async fn serve(verifier: Option<Verifier>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let server = ControllerFederationServer::new(Trivial);
    tokio::spawn(async move {
        let mut b = tonic::transport::Server::builder();
        let served = match verifier {
            Some(v) => {
                b.add_service(v.guard(server))
                    .serve_with_incoming(incoming)
                    .await
            }
            None => b.add_service(server).serve_with_incoming(incoming).await,
        };
        served.unwrap();
    });
    port
}

async fn plain(port: u16) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .tcp_nodelay(true)
        .connect()
        .await
        .unwrap()
}

/// One call of the measured kind.
type Call = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Calls `GetFederation` on `client` (any channel type).
macro_rules! call {
    ($client:expr) => {{
        let client = $client;
        let call: Call = Arc::new(move || {
            let mut c = client.clone();
            Box::pin(async move {
                c.get_federation(GetFederationRequest {}).await.unwrap();
            })
        });
        call
    }};
}

/// Sequential latencies (median, 90th percentile) and concurrent calls per second of `call`.
async fn measure(call: Call) -> (Duration, Duration, f64) {
    for _ in 0..100 {
        call().await;
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        call().await;
        times.push(t.elapsed());
    }
    times.sort();
    let (median, p90) = (times[CALLS / 2], times[CALLS * 9 / 10]);
    let start = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENT)
        .map(|_| {
            let call = Arc::clone(&call);
            tokio::spawn(async move {
                for _ in 0..CALLS / CONCURRENT {
                    call().await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let rate = (CALLS / CONCURRENT * CONCURRENT) as f64 / start.elapsed().as_secs_f64();
    (median, p90, rate)
}

fn report(name: &str, (median, p90, rate): (Duration, Duration, f64), base: Option<Duration>) {
    let added = base.map_or(String::new(), |b| {
        format!(
            "  added {:+.3} ms",
            (median.as_secs_f64() - b.as_secs_f64()) * 1e3
        )
    });
    println!(
        "{name:<8} median {:.3} ms  p90 {:.3} ms  {rate:>8.0} calls/s ({CONCURRENT} callers){added}",
        median.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let key = Key::from_bytes(vec![7; 1024]);
    let verifier = || Verifier::new(key.clone()).serving("bench");
    let port_bare = serve(None).await;
    let port = serve(Some(verifier())).await;

    let none = measure(call!(ControllerFederationClient::new(
        plain(port_bare).await
    )))
    .await;
    report("none", none, None);
    let signer = Signer::for_current_user(key.clone());
    let keyed = measure(call!(ControllerFederationClient::new(
        signer.wrap(plain(port).await)
    )))
    .await;
    report("key", keyed, Some(none.0));

    let dir = tempfile::tempdir().unwrap();
    let socket = sack::socket_path(dir.path());
    let claimed = sack::claim(&socket).unwrap().unwrap();
    tokio::spawn(sack::serve(claimed, key.clone(), std::future::pending()));
    let path = dir.path().to_path_buf();
    // Without the key in the directory, the caller uses the service.
    let signer = tokio::task::spawn_blocking(move || Signer::for_caller(&path))
        .await
        .unwrap()
        .unwrap();
    assert!(signer.uses_service());
    let service = measure(call!(ControllerFederationClient::new(
        signer.wrap(plain(port).await)
    )))
    .await;
    report("service", service, Some(none.0));

    let socket = std::env::var_os("MUNGE_SOCKET").map(std::path::PathBuf::from);
    let munge = Munge {
        socket: socket.clone(),
    };
    let probe = Binding::new(sack::PROBE_METHOD, b"");
    match munge.encode(&probe, &new_nonce()) {
        Ok(_) => {
            let conf = sluice_vocab::auth_conf::AuthConf::Munge { socket };
            let munge_port = serve(Some(verifier().with_auth(&conf))).await;
            let signer = Signer::munge(munge);
            let client = ControllerFederationClient::new(signer.wrap(plain(munge_port).await));
            report("munge", measure(call!(client)).await, Some(none.0));
        }
        Err(e) => println!("munge    skipped: {e}"),
    }

    // The parts on their own, for a 4 KiB body (an sbatch submission with its environment).
    let body = vec![b'x'; 4096];
    let method = "/sluice.v1.Controller/SubmitJob";
    let n = 20_000;
    let t = Instant::now();
    let mut tokens = Vec::with_capacity(n);
    for i in 0..n {
        tokens.push(key.sign(&Claims {
            uid: 1000,
            gid: 1000,
            issued: 1_000_000 + (i as i64 % 30),
            nonce: new_nonce(),
            binding: Binding::new(method, &body),
        }));
    }
    let sign = t.elapsed() / n as u32;
    let v = verifier();
    let t = Instant::now();
    for token in &tokens {
        let mut md = tonic::metadata::MetadataMap::new();
        md.insert("authorization", format!("Bearer {token}").parse().unwrap());
        v.check(&md, &Binding::new(method, &body), 1_000_030)
            .unwrap();
    }
    let check = t.elapsed() / n as u32;
    println!(
        "4 KiB body: digest + sign {:.1} us, digest + check + replay cache {:.1} us per request",
        sign.as_secs_f64() * 1e6,
        check.as_secs_f64() * 1e6
    );
}
