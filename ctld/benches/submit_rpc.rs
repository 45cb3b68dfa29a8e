//! Submission through the RPC with and without authentication (issue 11: "submission stays at
//! or above today's rate through the RPC"). One in-process controller (runtime and
//! `Controller` service, no node daemons, so every job stays held) serves the same service
//! twice on loopback:
//!
//! - guarded: behind the daemon's `Verifier` (body digest, HMAC, binding, replay cache), the
//!   clients signing each request with `slurm.key`, as `sluice-ctld` serves it;
//! - trusting: handed a fixed identity without any token, what the service cost before
//!   authentication.
//!
//! Bursts of held submissions from 64 concurrent callers (one HTTP/2 connection) alternate
//! between the two, several rounds, into the same queue; prints jobs/s per burst. Run with
//! `cargo bench --workspace --bench submit_rpc --profile dev [-- JOBS ROUNDS [guarded|trusting]]`.

use sluice_ctld::conf::CtldConf;
use sluice_ctld::runtime::{self, RuntimeConfig};
use sluice_ctld::service::ControllerService;
use sluice_ctld::service::server::admin_uids;
use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::auth::{Identity, Key, Signer, Verifier};
use sluice_wire::proto::SubmitJobRequest;
use sluice_wire::proto::controller_client::ControllerClient;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::codegen::{Context, Poll, Service, http};
use tonic::server::NamedService;
use tonic::transport::server::TcpIncoming;

/// The daemon's allocator (`sluice-ctld`'s main.rs), since the controller runs in this process.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WORKERS: usize = 64;

/// `inner` with every request carrying `who`, unchecked: the service without authentication.
#[derive(Clone)]
struct Trusting<S> {
    inner: S,
    who: Identity,
}

impl<S: NamedService> NamedService for Trusting<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<http::Request<B>> for Trusting<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        req.extensions_mut().insert(self.who);
        self.inner.call(req)
    }
}

fn conf(dir: &std::path::Path) -> CtldConf {
    let text = format!(
        "ClusterName=bench\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=0\n\
         StateSaveLocation={}\nSlurmdTimeout=0\nMinJobAge=300\nMaxJobCount=1000000\n\
         NodeName=n[1-4] CPUs=64 RealMemory=100000 Port=1\n\
         PartitionName=debug Nodes=ALL Default=YES\n",
        dir.join("state").display()
    );
    let path = dir.join("slurm.conf");
    std::fs::write(&path, &text).unwrap();
    CtldConf::parse(&path, &text).unwrap().0
}

fn job(user: &str, gid: u32) -> SubmitJobRequest {
    SubmitJobRequest {
        name: "bench".into(),
        ntasks: Some(1),
        hold: true,
        script: "#!/bin/sh\ntrue\n".into(),
        workdir: "/tmp".into(),
        stdout: Some("/dev/null".into()),
        user: user.into(),
        gid,
        ..Default::default()
    }
}

/// Submits `count` jobs through `client` from [`WORKERS`] tasks; returns the wall time.
async fn burst<T>(client: &ControllerClient<T>, req: &SubmitJobRequest, count: usize) -> Duration
where
    T: tonic::client::GrpcService<tonic::body::Body> + Clone + Send + 'static,
    T::Future: Send,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..WORKERS {
        let share = count / WORKERS + usize::from(w < count % WORKERS);
        let mut client = client.clone();
        let req = req.clone();
        tasks.spawn(async move {
            for _ in 0..share {
                loop {
                    match client.submit(req.clone()).await {
                        // EAGAIN while job ids are leased: again, as sbatch does.
                        Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        Err(s) => panic!("submit: {s}"),
                        Ok(_) => break,
                    }
                }
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    started.elapsed()
}

async fn bench(jobs: usize, rounds: usize, only: Option<bool>) {
    let dir = tempfile::tempdir().unwrap();
    let conf = conf(dir.path());
    let key = Key::from_bytes(vec![7; 64]);
    let guarded_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let trusting_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let guarded_port = guarded_listener.local_addr().unwrap().port();
    let trusting_port = trusting_listener.local_addr().unwrap().port();
    let rt = runtime::start(RuntimeConfig {
        conf: conf.clone(),
        key: key.clone(),
        ctld_addr: format!("127.0.0.1:{guarded_port}"),
    })
    .unwrap();
    let started = rt.handle().query(|cx| cx.now).await.unwrap();
    let admins = admin_uids(&conf).unwrap();
    let service = ControllerService::new(
        rt.handle(),
        Arc::new(conf),
        admins,
        started,
        CredentialKey::derive(&key),
    );
    let (service, _, _) = service.into_servers();
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    let guarded = Verifier::new(key.clone())
        .serving("sluice-ctld")
        .guard(service.clone());
    let trusting = Trusting {
        inner: service,
        who: Identity { uid, gid },
    };
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(guarded)
            .serve_with_incoming(TcpIncoming::from(guarded_listener).with_nodelay(Some(true))),
    );
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(trusting)
            .serve_with_incoming(TcpIncoming::from(trusting_listener).with_nodelay(Some(true))),
    );
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name);
    let req = job(&user, gid);
    let signed = sluice_wire::client::connect("127.0.0.1", guarded_port, Signer::new(key, uid))
        .await
        .unwrap();
    let signed = ControllerClient::new(signed);
    let plain =
        tonic::transport::Endpoint::from_shared(format!("http://127.0.0.1:{trusting_port}"))
            .unwrap()
            .tcp_nodelay(true)
            .connect()
            .await
            .unwrap();
    let plain = ControllerClient::new(plain);
    // Warm-up: connections, the job-id lease, the store.
    burst(&signed, &req, WORKERS * 4).await;
    burst(&plain, &req, WORKERS * 4).await;
    println!(
        "{jobs} held submissions per burst, {WORKERS} concurrent callers, {rounds} rounds alternated"
    );
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        // Alternate which goes first: the queue grows through the run.
        let order: [bool; 2] = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for guarded in order {
            if only.is_some_and(|only| only != guarded) {
                continue;
            }
            let took = if guarded {
                burst(&signed, &req, jobs).await
            } else {
                burst(&plain, &req, jobs).await
            };
            let rate = jobs as f64 / took.as_secs_f64();
            let name = if guarded {
                "guarded (slurm.key token)"
            } else {
                "trusting (no authentication)"
            };
            println!("round {round}: {name:<30} {rate:>8.0} jobs/s ({took:.2?})");
            if guarded { &mut with } else { &mut without }.push(rate);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    println!(
        "median: trusting {:.0} jobs/s, guarded {:.0} jobs/s",
        median(&mut without),
        median(&mut with)
    );
    rt.shutdown().await;
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let jobs = args.first().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let rounds = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(4);
    // A third word runs one side only (for `perf stat`/`perf record` of each).
    let only = match args.get(2).map(String::as_str) {
        None => None,
        Some("guarded") => Some(true),
        Some("trusting") => Some(false),
        Some(other) => panic!("unknown side {other:?}: guarded or trusting"),
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(bench(jobs, rounds, only));
}
