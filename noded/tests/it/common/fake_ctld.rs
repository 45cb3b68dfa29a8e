//! A fake controller: a real `Controller` gRPC server that records what node daemons send
//! (registrations, heartbeats, exit reports) and answers as the real one must.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sluice_testkit::fake::controller_server::{Controller, ControllerServer};
use sluice_wire::auth::{Key, Verifier};
use sluice_wire::proto::*;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

/// How long a test waits for something a daemon must do.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// What the fake controller received, in order.
#[derive(Debug, Default, Clone)]
pub struct Recorded {
    pub registrations: Vec<RegisterNodeRequest>,
    pub heartbeats: Vec<HeartbeatRequest>,
    pub exits: Vec<JobExitedRequest>,
}

/// How the fake answers.
#[derive(Debug, Default, Clone)]
struct Settings {
    /// Its start time, as `Ping` reports it.
    started: i64,
    /// Jobs a registration reply tells the node to kill.
    kill_jobs: Vec<u32>,
    /// Heartbeats of nodes not registered with this instance are accepted (a controller that
    /// restored its node table from disk).
    lenient: bool,
    /// Heartbeats still to answer UNAVAILABLE (a controller too busy to answer in time).
    unavailable_beats: u32,
}

#[derive(Debug, Default)]
struct Shared {
    recorded: Mutex<Recorded>,
    changed: Notify,
    settings: Mutex<Settings>,
}

static STARTS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1_000);

fn next_start() -> i64 {
    STARTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[derive(Clone)]
struct Service(Arc<Shared>);

/// A running fake controller.
pub struct FakeCtld {
    shared: Arc<Shared>,
    pub port: u16,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl FakeCtld {
    /// Serves on 127.0.0.1:`port` (0: any free port); replies to registrations with `kill_jobs`.
    pub async fn start(key: &Key, port: u16, kill_jobs: Vec<u32>) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared::default());
        *shared.settings.lock().unwrap() = Settings {
            started: next_start(),
            kill_jobs,
            lenient: false,
            unavailable_beats: 0,
        };
        let service = ControllerServer::new(Service(Arc::clone(&shared)));
        let service = Verifier::new(key.clone()).guard(service);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            shared,
            port,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops serving (gracefully: the daemons' connections are told to go away) and closes
    /// the port.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(DEADLINE, task)
                .await
                .expect("the fake controller stops")
                .unwrap();
        }
    }

    /// Accepts heartbeats of nodes that did not register with this instance.
    pub fn set_lenient(&self) {
        self.shared.settings.lock().unwrap().lenient = true;
    }

    /// Answers the next `n` heartbeats UNAVAILABLE.
    pub fn fail_heartbeats(&self, n: u32) {
        self.shared.settings.lock().unwrap().unavailable_beats = n;
    }

    /// Behaves as a controller that restarted in place between two heartbeats: a new start
    /// time, nothing received yet, heartbeats still accepted.
    pub fn restart_in_place(&self) {
        self.shared.settings.lock().unwrap().started = next_start();
        *self.shared.recorded.lock().unwrap() = Recorded::default();
    }

    /// A copy of what was received so far.
    pub fn recorded(&self) -> Recorded {
        self.shared.recorded.lock().unwrap().clone()
    }

    /// Waits (bounded) until `f` finds something in what was received.
    pub async fn wait_for<T>(&self, what: &str, f: impl Fn(&Recorded) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let changed = self.shared.changed.notified();
            if let Some(found) = f(&self.shared.recorded.lock().unwrap()) {
                return found;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!("timed out waiting for {what}; got {:?}", self.recorded());
            }
        }
    }

    /// Waits for the exit report of `job`.
    pub async fn exit_of(&self, job: u32) -> JobExitedRequest {
        self.wait_for(&format!("the exit of job {job}"), |r| {
            r.exits.iter().find(|e| e.job_id == job).cloned()
        })
        .await
    }
}

impl Service {
    fn record(&self, f: impl FnOnce(&mut Recorded)) {
        f(&mut self.0.recorded.lock().unwrap());
        self.0.changed.notify_waiters();
    }
}

#[tonic::async_trait]
impl Controller for Service {
    async fn ping(&self, _: Request<PingRequest>) -> Result<Response<CtldPingReply>, Status> {
        Ok(Response::new(CtldPingReply {
            cluster: "fake".into(),
            version: "0".into(),
            started: self.0.settings.lock().unwrap().started,
        }))
    }

    async fn register_node(
        &self,
        req: Request<RegisterNodeRequest>,
    ) -> Result<Response<RegisterNodeReply>, Status> {
        let req = req.into_inner();
        self.record(|r| r.registrations.push(req));
        Ok(Response::new(RegisterNodeReply {
            cluster: "fake".into(),
            heartbeat_secs: 1,
            kill_jobs: Vec::new(),
            // The first run of each: what every test launches.
            kill_runs: (self.0.settings.lock().unwrap().kill_jobs.iter())
                .map(|&job_id| NodeRun {
                    job_id,
                    restart_count: 0,
                    batch: false,
                    steps: Vec::new(),
                })
                .collect(),
        }))
    }

    async fn heartbeat(&self, req: Request<HeartbeatRequest>) -> Result<Response<Ack>, Status> {
        let req = req.into_inner();
        {
            let mut settings = self.0.settings.lock().unwrap();
            if settings.unavailable_beats > 0 {
                settings.unavailable_beats -= 1;
                return Err(Status::unavailable("busy"));
            }
        }
        let known = self.0.settings.lock().unwrap().lenient || {
            let rec = self.0.recorded.lock().unwrap();
            rec.registrations.iter().any(|r| r.name == req.name)
        };
        if !known {
            // A controller that restarted asks the node to register again.
            return Err(Status::not_found(format!(
                "node {} is not registered",
                req.name
            )));
        }
        self.record(|r| r.heartbeats.push(req));
        Ok(Response::new(Ack {}))
    }

    async fn job_exited(&self, req: Request<JobExitedRequest>) -> Result<Response<Ack>, Status> {
        let req = req.into_inner();
        self.record(|r| r.exits.push(req));
        Ok(Response::new(Ack {}))
    }
}
