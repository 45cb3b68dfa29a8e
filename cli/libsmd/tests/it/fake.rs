//! A fake Nonstop service: job 42 on `n1,n2`; `n2` fails; a replacement takes the spare `n3`
//! and is announced on the watcher's stream, which then ends with the job.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use sluice_testkit::fake::BoxStream;
use sluice_testkit::fake::nonstop_server::{Nonstop, NonstopServer};
use sluice_testkit::serve::serve;
use sluice_wire::auth::{KEY_FILE, Key};
use sluice_wire::proto::*;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::transport::Server;
use tonic::{Request, Response, Status};

pub const JOB: u32 = 42;

#[derive(Default)]
struct State {
    alloc: NonstopAllocation,
    watchers: Vec<UnboundedSender<NonstopEvent>>,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<State>>);

fn node(name: &str, state: NonstopNodeState) -> NonstopNode {
    NonstopNode {
        name: name.into(),
        cpus: 4,
        state: state as i32,
    }
}

fn event(
    kind: NonstopEventKind,
    node: &str,
    replacement: &str,
    alloc: &NonstopAllocation,
) -> NonstopEvent {
    NonstopEvent {
        kind: kind as i32,
        node: node.into(),
        replacement: replacement.into(),
        time: 1_795_255_200,
        allocation: Some(alloc.clone()),
    }
}

fn job(id: u32) -> Result<(), Status> {
    match id {
        JOB => Ok(()),
        _ => Err(Status::permission_denied("")),
    }
}

#[tonic::async_trait]
impl Nonstop for Fake {
    async fn job_nodes(
        &self,
        r: Request<NonstopJobRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        job(r.into_inner().job_id)?;
        Ok(Response::new(self.0.lock().unwrap().alloc.clone()))
    }
    async fn replace_node(
        &self,
        r: Request<NodeChangeRequest>,
    ) -> Result<Response<NonstopAllocation>, Status> {
        let r = r.into_inner();
        job(r.job_id)?;
        let mut s = self.0.lock().unwrap();
        if r.node != "n2" || s.alloc.nodes[1].name != "n2" {
            return Err(Status::failed_precondition("Failed to replace the node"));
        }
        s.alloc.nodes[1] = node("n3", NonstopNodeState::Ok);
        s.alloc.node_list = "n[1,3]".into();
        s.alloc.spares_used = 1;
        let replaced = event(NonstopEventKind::Replaced, "n2", "n3", &s.alloc);
        let ended = event(NonstopEventKind::JobEnded, "", "", &s.alloc);
        for w in &s.watchers {
            let _ = w.send(replaced.clone());
            let _ = w.send(ended.clone());
        }
        Ok(Response::new(s.alloc.clone()))
    }
    async fn watch_job(
        &self,
        r: Request<NonstopJobRequest>,
    ) -> Result<Response<BoxStream<NonstopEvent>>, Status> {
        job(r.into_inner().job_id)?;
        let (tx, rx) = unbounded_channel();
        let mut s = self.0.lock().unwrap();
        let first = event(NonstopEventKind::Failed, "n2", "", &s.alloc);
        s.watchers.push(tx);
        let stream = tokio_stream::iter([first])
            .chain(UnboundedReceiverStream::new(rx))
            .map(Ok);
        Ok(Response::new(Box::pin(stream)))
    }
}

/// The fake on a loopback port of `rt`, with slurm.conf and slurm.key naming it in a temp dir.
pub struct Cluster {
    pub conf: PathBuf,
    pub dir: tempfile::TempDir,
    /// Serves the fake for as long as the cluster lives.
    _rt: tokio::runtime::Runtime,
}

impl Cluster {
    pub fn start() -> Self {
        let fake = Fake::default();
        fake.0.lock().unwrap().alloc = NonstopAllocation {
            job_id: JOB,
            node_list: "n[1-2]".into(),
            nodes: vec![
                node("n1", NonstopNodeState::Ok),
                node("n2", NonstopNodeState::Failed),
            ],
            cpus_per_node: "4(x2)".into(),
            time_limit_minutes: 30,
            ..Default::default()
        };
        let rt = tokio::runtime::Runtime::new().unwrap();
        let served = rt.block_on(serve(
            Server::builder().add_service(NonstopServer::new(fake)),
        ));
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("slurm.conf");
        std::fs::write(
            &conf,
            format!(
                "SlurmctldHost=h(127.0.0.1)\nSlurmctldPort={}\nMessageTimeout=5\n",
                served.port()
            ),
        )
        .unwrap();
        Key::create_if_missing(&dir.path().join(KEY_FILE)).unwrap();
        Self { conf, dir, _rt: rt }
    }
}
