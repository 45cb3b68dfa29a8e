//! The `NodeDaemon` gRPC service: decodes, checks who asks, calls into the node, encodes.
//!
//! Every request is signed (the server mounts a [`sluice_wire::auth::Verifier`]). Launching
//! and signalling jobs is for the controller: root, `SlurmUser` or the daemon's own uid.
//! `RunStep` is srun's, signed by the step's user: it may start tasks as that user, with one of
//! that user's groups, only. Both launches also need the controller's job credential for that
//! job, step, user and this node ([`crate::credential`]). `StepInput` feeds stdin to that
//! user's step only, `AttachStep` shows its output to that user only, and `SignalJob` may
//! signal that user's own running step (srun forwarding the terminal's signals); `StepStats`
//! shows a job's usage to its owner and admins only.

use std::sync::Arc;

use nix::sys::signal::Signal;
use sluice_wire::auth;
use sluice_wire::auth::credential::{CredentialKey, Launch};
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::node_daemon_server::{NodeDaemon, NodeDaemonServer};
use sluice_wire::proto::{
    Ack, AttachStepRequest, AwaitStepRequest, JobCredential, LaunchBatchRequest, LiveStep,
    NodePingReply, PingRequest, RegistrationRequest, RunStepRequest, SignalJobRequest, SignalKind,
    StepOutput, StepStatsReply, StepStatsRequest, StepStdin,
};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::credential;
use crate::error::NodedError;
use crate::jobs::Target;
use crate::node::Node;
use crate::stdin::{self, Writer};
use crate::step::{self, OutputStream};
use crate::step_adopt::{self, AwaitError, KeptRequest};
use crate::{batch, node_scripts};

/// Messages of kept output buffered towards srun (the spill files wait on disk meanwhile).
const CHANNEL_DEPTH: usize = 64;

/// The node daemon's RPC service.
#[derive(Debug, Clone)]
pub struct NodeService {
    node: Arc<Node>,
    /// Checks the controller's job credentials of launches.
    creds: CredentialKey,
}

impl NodeService {
    /// The service over `node`, checking launches' job credentials with `creds`.
    pub fn new(node: Arc<Node>, creds: CredentialKey) -> Self {
        Self { node, creds }
    }

    /// Refuses a launch of `launch` without a valid credential for it (logged).
    fn check_credential(
        &self,
        cred: Option<&JobCredential>,
        launch: Launch<'_>,
        caller: auth::Identity,
    ) -> Result<(), Status> {
        credential::check(&self.creds, cred, launch, caller, credential::unix_now())
            .map_err(Status::from)
    }

    /// The tonic server for this service (mount it behind a `Verifier`).
    pub fn into_server(self) -> NodeDaemonServer<Self> {
        NodeDaemonServer::new(self)
    }

    fn require_admin<T>(&self, req: &Request<T>) -> Result<u32, Status> {
        let uid = auth::identity(req)?.uid;
        if self.node.config.admin_uids.contains(&uid) {
            Ok(uid)
        } else {
            tracing::warn!(uid, "refused a controller request from an unprivileged uid");
            Err(NodedError::AccessDenied { uid }.into())
        }
    }
}

/// `job`'s steps sampled on `node`, for `caller`: its owner or an admin.
pub fn step_stats(node: &Node, caller: u32, job: u32) -> Result<StepStatsReply, NodedError> {
    let owner = node.live.owner(job);
    if owner.is_some_and(|o| o != caller) && !node.config.admin_uids.contains(&caller) {
        return Err(NodedError::AccessDenied { uid: caller });
    }
    let steps = node.live.steps(job).into_iter().map(|s| LiveStep {
        step_id: s.step,
        node_list: s.node_list,
        usage: Some(s.usage.to_proto()),
        pids: s.pids,
    });
    Ok(StepStatsReply {
        steps: steps.collect(),
    })
}

/// Whether `gid` is `uid`'s primary group or one of its groups (an NSS lookup: blocking).
pub fn user_has_group(uid: u32, gid: u32) -> bool {
    use nix::unistd::{Gid, Uid, User, getgrouplist};
    let Ok(Some(user)) = User::from_uid(Uid::from_raw(uid)) else {
        return false;
    };
    if user.gid.as_raw() == gid {
        return true;
    }
    let Ok(name) = std::ffi::CString::new(user.name) else {
        return false;
    };
    getgrouplist(&name, user.gid).is_ok_and(|groups| groups.contains(&Gid::from_raw(gid)))
}

/// What a `SignalJob` request asks for, as a signal and the groups it goes to.
pub fn decode_signal(req: &SignalJobRequest) -> Result<(Signal, Target), NodedError> {
    let bad = |why: String| NodedError::BadRequest { why };
    let kind = SignalKind::try_from(req.kind)
        .map_err(|_| bad(format!("unknown signal kind {}", req.kind)))?;
    Ok(match kind {
        SignalKind::Signal => {
            let signal = Signal::try_from(req.signal)
                .map_err(|_| bad(format!("invalid signal {}", req.signal)))?;
            let target = match (req.step_id, req.batch_only) {
                (Some(step), _) => Target::Step(step),
                (None, true) => Target::Batch,
                (None, false) => Target::All,
            };
            (signal, target)
        }
        SignalKind::Terminate => (Signal::SIGKILL, Target::All),
        SignalKind::Suspend => (Signal::SIGSTOP, Target::All),
        SignalKind::Resume => (Signal::SIGCONT, Target::All),
        SignalKind::Unspecified => return Err(bad("signal kind missing".into())),
    })
}

#[tonic::async_trait]
impl NodeDaemon for NodeService {
    async fn ping(&self, _req: Request<PingRequest>) -> Result<Response<NodePingReply>, Status> {
        Ok(Response::new(NodePingReply {
            name: self.node.config.node_name.clone(),
            running_jobs: self.node.jobs.running_jobs(),
        }))
    }

    async fn launch_batch(
        &self,
        req: Request<LaunchBatchRequest>,
    ) -> Result<Response<Ack>, Status> {
        self.require_admin(&req)?;
        let caller = auth::identity(&req)?;
        let (node, req) = (Arc::clone(&self.node), req.into_inner());
        let here = &self.node.config.node_name;
        let launch = credential::batch_launch(&req, here);
        self.check_credential(req.credential.as_ref(), launch, caller)?;
        // Runs to its end even if the controller goes away mid-call: a dropped call would
        // leave a claimed or started script without the task that waits for it.
        tokio::spawn(async move { batch::launch(&node, req).await })
            .await
            .map_err(|e| Status::internal(format!("batch launch task failed: {e}")))??;
        Ok(Response::new(Ack {}))
    }

    type RunStepStream = OutputStream;

    async fn run_step(
        &self,
        req: Request<RunStepRequest>,
    ) -> Result<Response<Self::RunStepStream>, Status> {
        let identity = auth::identity(&req)?;
        let caller = identity.uid;
        let step = req.into_inner();
        let here = &self.node.config.node_name;
        let launch = credential::step_launch(&step, here);
        self.check_credential(step.credential.as_ref(), launch, identity)?;
        if !self.node.config.admin_uids.contains(&caller) {
            let (uid, gid) = (step.uid, step.gid);
            let own_group = tokio::task::spawn_blocking(move || user_has_group(uid, gid))
                .await
                .unwrap_or(false);
            if caller != step.uid || !own_group {
                return Err(NodedError::AccessDenied { uid: caller }.into());
            }
        }
        // An `srun -Z` step (its id says so; the credential checked above carries the
        // no-allocation mark exactly when it does) has no job whose Prolog and Epilog would
        // run here: it starts at once, and nothing of it is recorded for the controller.
        let no_alloc = sluice_vocab::ids::is_no_alloc(step.job_id);
        if !no_alloc && !node_scripts::before_step(&self.node, &step).await {
            let node = &self.node.config.node_name;
            return Err(Status::failed_precondition(format!(
                "prolog failed on node {node}: step {}.{} not started",
                step.job_id, step.step_id
            )));
        }
        Ok(Response::new(step::run(&self.node, step).await?))
    }

    async fn step_input(
        &self,
        req: Request<Streaming<StepStdin>>,
    ) -> Result<Response<Ack>, Status> {
        let caller = auth::identity(&req)?.uid;
        let mut stream = req.into_inner();
        let Some(first) = stream.message().await? else {
            return Ok(Response::new(Ack {}));
        };
        let (job, step) = (first.job_id, first.step_id);
        let writer = if first.attached {
            Writer::Attached { task: first.task }
        } else {
            Writer::Srun
        };
        let Some((owner, pipes)) = self.node.stdin.open(job, step, writer) else {
            return Err(NodedError::BadRequest {
                why: format!("step {job}.{step} reads no stdin here"),
            }
            .into());
        };
        if caller != owner && !self.node.config.admin_uids.contains(&caller) {
            return Err(NodedError::AccessDenied { uid: caller }.into());
        }
        stdin::pump(pipes, writer, first.data, stream).await;
        Ok(Response::new(Ack {}))
    }

    type AttachStepStream = ReceiverStream<Result<StepOutput, Status>>;

    async fn attach_step(
        &self,
        req: Request<AttachStepRequest>,
    ) -> Result<Response<Self::AttachStepStream>, Status> {
        let caller = auth::identity(&req)?.uid;
        let req = req.into_inner();
        let admin = self.node.config.admin_uids.contains(&caller);
        let reader = self
            .node
            .attach
            .attach(req.job_id, req.step_id, caller, admin)?;
        Ok(Response::new(ReceiverStream::new(reader)))
    }

    async fn signal_job(&self, req: Request<SignalJobRequest>) -> Result<Response<Ack>, Status> {
        // srun (and sattach) pass the user's signals on to the tasks of the user's own step.
        let caller = auth::identity(&req)?.uid;
        let own_step = req.get_ref().kind == SignalKind::Signal as i32
            && req.get_ref().step_id.is_some_and(|step| {
                self.node
                    .attach
                    .owns_step(req.get_ref().job_id, step, caller)
            });
        if !own_step {
            self.require_admin(&req)?;
        }
        let req = req.into_inner();
        let (signal, target) = decode_signal(&req)?;
        let terminate = req.kind == SignalKind::Terminate as i32;
        if self.node.jobs.signal(req.job_id, target, Some(signal)) {
            tracing::info!(job = req.job_id, ?signal, ?target, "job signalled");
            if signal == Signal::SIGKILL && target == Target::All {
                crate::unkillable::watch(&self.node, req.job_id);
            }
        } else {
            tracing::info!(
                job = req.job_id,
                ?signal,
                "signal for a job with no processes here: nothing to do"
            );
        }
        if terminate {
            step_adopt::forget_job(&self.node, req.job_id, None);
            node_scripts::on_terminate(&self.node, req.job_id);
        }
        Ok(Response::new(Ack {}))
    }

    type AwaitStepStream = OutputStream;

    async fn await_step(
        &self,
        req: Request<AwaitStepRequest>,
    ) -> Result<Response<Self::AwaitStepStream>, Status> {
        let caller = auth::identity(&req)?.uid;
        let admin = self.node.config.admin_uids.contains(&caller);
        let AwaitStepRequest {
            job_id,
            step_id,
            received,
        } = req.into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(CHANNEL_DEPTH);
        let kept = KeptRequest {
            job: job_id,
            step: step_id,
            caller,
            admin,
            received,
        };
        match step_adopt::stream_kept(&self.node, kept, tx) {
            Ok(()) => Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
                rx,
            ))),
            Err(AwaitError::NotOwner) => Err(NodedError::AccessDenied { uid: caller }.into()),
            Err(AwaitError::Unknown) => Err(Status::not_found(format!(
                "no task of step {job_id}.{step_id} outlived a restart on node {}",
                self.node.config.node_name
            ))),
        }
    }

    async fn request_registration(
        &self,
        req: Request<RegistrationRequest>,
    ) -> Result<Response<Ack>, Status> {
        self.require_admin(&req)?;
        tracing::info!("the controller asks for a registration");
        self.node.register_now.notify_one();
        Ok(Response::new(Ack {}))
    }

    async fn run_prolog(&self, req: Request<LaunchBatchRequest>) -> Result<Response<Ack>, Status> {
        self.require_admin(&req)?;
        node_scripts::at_allocation(&self.node, &req.into_inner());
        Ok(Response::new(Ack {}))
    }

    async fn step_stats(
        &self,
        req: Request<StepStatsRequest>,
    ) -> Result<Response<StepStatsReply>, Status> {
        let caller = auth::identity(&req)?.uid;
        let job = req.into_inner().job_id;
        Ok(Response::new(step_stats(&self.node, caller, job)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: SignalKind, signal: i32) -> SignalJobRequest {
        SignalJobRequest {
            job_id: 1,
            kind: kind as i32,
            signal,
            ..Default::default()
        }
    }

    #[test]
    fn users_may_only_claim_their_own_groups() {
        assert!(user_has_group(0, 0));
        assert!(user_has_group(65534, 65534));
        assert!(!user_has_group(65534, 0));
        assert!(
            !user_has_group(4_000_000_000, 0),
            "unknown users have no groups"
        );
    }

    #[test]
    fn signal_kinds_map_to_signals_and_targets() {
        let d = |r: &SignalJobRequest| decode_signal(r).unwrap();
        assert_eq!(
            d(&req(SignalKind::Signal, 15)),
            (Signal::SIGTERM, Target::All)
        );
        assert_eq!(
            d(&req(SignalKind::Terminate, 0)),
            (Signal::SIGKILL, Target::All)
        );
        assert_eq!(
            d(&req(SignalKind::Suspend, 0)),
            (Signal::SIGSTOP, Target::All)
        );
        assert_eq!(
            d(&req(SignalKind::Resume, 0)),
            (Signal::SIGCONT, Target::All)
        );
        let mut batch = req(SignalKind::Signal, 10);
        batch.batch_only = true;
        assert_eq!(d(&batch), (Signal::SIGUSR1, Target::Batch));
        batch.step_id = Some(2);
        assert_eq!(d(&batch).1, Target::Step(2));
        assert!(decode_signal(&req(SignalKind::Signal, 999)).is_err());
        assert!(decode_signal(&req(SignalKind::Unspecified, 9)).is_err());
    }
}
