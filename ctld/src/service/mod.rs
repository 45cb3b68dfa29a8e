//! The `Controller` gRPC service: it authenticates the caller, decodes the request, runs it
//! on the core through the [`CoreHandle`] and encodes the answer. No controller logic lives
//! here; errors carry Slurm's texts (the core's [`CtldError`]s).
//!
//! - [`submit`]: Submit (and `--test-only`), Allocate (srun), CreateStep, StepDone;
//! - [`no_alloc`]: NoAllocStep (`srun -Z`, root and the SlurmUser only);
//! - [`control`]: Cancel, ControlJob, UpdateJob;
//! - [`query`]: ListJobs, ListNodes, ListPartitions; [`config`]: GetConfig;
//! - [`nodes`]: RegisterNode, Heartbeat, JobExited (node daemons), UpdateNode (admins);
//! - [`convert`]: protobuf ↔ core; [`users`]: users and groups as this host knows them;
//! - [`server`]: the runtime and this service on a listener, until shutdown;
//! - [`federation`]: `ControllerFederation` (`scontrol show federation`);
//! - [`admin`]: `ControllerAdmin` (`scontrol reconfigure`, `scontrol update SuspendExc*`);
//! - [`nonstop`]: `Nonstop`, failure management (`SlurmctldPlugin=slurmctld/nonstop`).
//!
//! Requests about federated jobs take their way through [`crate::fed_client::route`] first.

pub mod admin;
pub mod config;
pub mod control;
pub mod convert;
pub mod federation;
pub mod no_alloc;
pub mod nodes;
pub mod nonstop;
pub mod query;
pub mod server;
pub mod shares;
pub mod submit;
pub mod users;

use crate::conf::CtldConf;
use crate::core::{Caller, SimTime};
use crate::error::CtldError;
use crate::runtime::admins::DbdAdmins;
use crate::runtime::{CallError, CoreHandle, RuntimeGone};
use sluice_wire::auth;
use sluice_wire::auth::credential::CredentialKey;
use sluice_wire::proto::controller_server::{Controller, ControllerServer};
use sluice_wire::proto::*;
use std::sync::Arc;
use tonic::{Request, Response, Status};
use users::Users;

/// The service's state: the core's handle and what it needs to know about callers.
pub struct ControllerService {
    core: CoreHandle,
    conf: Arc<CtldConf>,
    admins: Vec<u32>,
    dbd_admins: DbdAdmins,
    users: Users,
    started: SimTime,
    fed: Option<crate::fed_client::FedHandle>,
    /// Signs the job credential of each step created.
    creds: CredentialKey,
}

impl ControllerService {
    /// A service over `core`; `admins` are root and the SlurmUser (see
    /// [`ControllerService::with_dbd_admins`] for the dbd's administrators).
    pub fn new(
        core: CoreHandle,
        conf: Arc<CtldConf>,
        admins: Vec<u32>,
        started: SimTime,
        creds: CredentialKey,
    ) -> Self {
        Self {
            creds,
            core,
            conf,
            admins,
            dbd_admins: DbdAdmins::default(),
            users: Users::default(),
            started,
            fed: None,
        }
    }

    /// Takes federated paths through `fed` (the federation client connected to the runtime's
    /// port, with a dbd).
    pub fn with_fed(mut self, fed: Option<crate::fed_client::FedHandle>) -> Self {
        self.fed = fed;
        self
    }

    /// Also treats the accounting daemon's administrators (`AdminLevel=Administrator`, as the
    /// runtime keeps them) as administrators.
    pub fn with_dbd_admins(mut self, admins: DbdAdmins) -> Self {
        self.dbd_admins = admins;
        self
    }

    /// The tonic servers of `Controller`, `ControllerAdmin` and `Nonstop`, sharing this
    /// service (wrap each with the `Verifier` interceptor).
    pub fn into_servers(
        self,
    ) -> (
        ControllerServer<Self>,
        sluice_wire::proto::controller_admin_server::ControllerAdminServer<Self>,
        sluice_wire::proto::nonstop_server::NonstopServer<Self>,
    ) {
        let shared = Arc::new(self);
        (
            ControllerServer::from_arc(shared.clone()),
            sluice_wire::proto::controller_admin_server::ControllerAdminServer::from_arc(
                shared.clone(),
            ),
            sluice_wire::proto::nonstop_server::NonstopServer::from_arc(shared),
        )
    }

    /// Who sent `req`.
    fn caller<T>(&self, req: &Request<T>) -> Result<Caller, Status> {
        let uid = auth::identity(req)?.uid;
        let admin = self.admins.contains(&uid) || self.dbd_admins.contains(uid);
        Ok(Caller {
            uid,
            admin,
            operator: admin || self.dbd_admins.is_operator(uid),
        })
    }

    /// The caller, who must be an administrator (node daemons, admins' commands).
    fn admin<T>(&self, req: &Request<T>) -> Result<Caller, Status> {
        let caller = self.caller(req)?;
        if caller.admin {
            Ok(caller)
        } else {
            tracing::warn!(
                uid = caller.uid,
                "refused a request that needs an administrator"
            );
            Err(CtldError::AccessDenied.into())
        }
    }
}

impl From<CtldError> for Status {
    fn from(e: CtldError) -> Self {
        let note = e.note();
        let mut status = status_of(e);
        if let Some(note) = note {
            status.metadata_mut().insert_bin(
                sluice_wire::client::NOTE_KEY,
                tonic::metadata::MetadataValue::from_bytes(note.as_bytes()),
            );
        }
        status
    }
}

/// The status of `e`, without its note.
fn status_of(e: CtldError) -> Status {
    let msg = e.to_string();
    match e {
        CtldError::AccessDenied | CtldError::PartitionGroupDenied { .. } => {
            Status::permission_denied(msg)
        }
        // EAGAIN: the controller is up but cannot take the job now. Not `Unavailable`,
        // which the commands read as "Unable to contact slurm controller"; sbatch retries
        // on the text, as Slurm's does on EAGAIN.
        CtldError::MaxJobCount { .. } | CtldError::JobIdsExhausted | CtldError::NodesBusy => {
            Status::resource_exhausted(msg)
        }
        CtldError::InvalidJobId | CtldError::InvalidNodeName { .. } => Status::not_found(msg),
        CtldError::Conf(_) => Status::internal(msg),
        CtldError::NonstopNotConfigured => Status::unimplemented(msg),
        CtldError::NodeMustRegister { .. }
        | CtldError::StaleRun { .. }
        | CtldError::NoSpareNode { .. }
        | CtldError::SpareLimit { .. }
        | CtldError::NodeNotFailed { .. }
        | CtldError::NodeNotDroppable { .. }
        | CtldError::ExtensionRefused { .. } => Status::failed_precondition(msg),
        _ => Status::invalid_argument(msg),
    }
}

impl From<RuntimeGone> for Status {
    fn from(e: RuntimeGone) -> Self {
        Status::unavailable(e.to_string())
    }
}

impl From<CallError> for Status {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Gone => RuntimeGone.into(),
            // Not `Unavailable` (the commands read that as the controller being away) nor
            // `ResourceExhausted` (sbatch retries that): the request failed and is gone.
            CallError::Store => Status::internal(e.to_string()),
            // The client gives up at its deadline meanwhile; what it may still read says so.
            CallError::Late => Status::deadline_exceeded(e.to_string()),
        }
    }
}

type Res<T> = Result<Response<T>, Status>;

#[tonic::async_trait]
impl Controller for ControllerService {
    type AllocateStream = tokio_stream::wrappers::ReceiverStream<Result<AllocationEvent, Status>>;

    async fn ping(&self, req: Request<PingRequest>) -> Res<CtldPingReply> {
        self.caller(&req)?;
        Ok(Response::new(CtldPingReply {
            cluster: self.conf.cluster_name.clone(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            started: i64::try_from(self.started.secs()).unwrap_or(0),
        }))
    }

    async fn submit(&self, req: Request<SubmitJobRequest>) -> Res<SubmitJobReply> {
        submit::submit(self, req).await.map(Response::new)
    }

    async fn allocate(&self, req: Request<SubmitJobRequest>) -> Res<Self::AllocateStream> {
        submit::allocate(self, req).await.map(Response::new)
    }

    async fn create_step(&self, req: Request<CreateStepRequest>) -> Res<CreateStepReply> {
        submit::create_step(self, req).await.map(Response::new)
    }

    async fn no_alloc_step(&self, req: Request<NoAllocStepRequest>) -> Res<NoAllocStepReply> {
        no_alloc::no_alloc_step(self, req).await.map(Response::new)
    }

    async fn step_done(&self, req: Request<StepDoneRequest>) -> Res<Ack> {
        submit::step_done(self, req).await.map(Response::new)
    }

    async fn complete_allocation(&self, req: Request<CompleteAllocationRequest>) -> Res<Ack> {
        submit::complete_allocation(self, req)
            .await
            .map(Response::new)
    }

    async fn list_jobs(&self, req: Request<ListJobsRequest>) -> Res<ListJobsReply> {
        query::list_jobs(self, req).await.map(Response::new)
    }

    async fn list_nodes(&self, req: Request<ListNodesRequest>) -> Res<ListNodesReply> {
        query::list_nodes(self, req).await.map(Response::new)
    }

    async fn list_partitions(
        &self,
        req: Request<ListPartitionsRequest>,
    ) -> Res<ListPartitionsReply> {
        query::list_partitions(self, req).await.map(Response::new)
    }

    async fn get_config(&self, req: Request<GetConfigRequest>) -> Res<ConfigReply> {
        config::get_config(self, req).await.map(Response::new)
    }

    async fn list_shares(&self, req: Request<ListSharesRequest>) -> Res<ListSharesReply> {
        shares::list_shares(self, req).await.map(Response::new)
    }

    async fn cancel(&self, req: Request<CancelRequest>) -> Res<CancelReply> {
        control::cancel(self, req).await.map(Response::new)
    }

    async fn control_job(&self, req: Request<ControlJobRequest>) -> Res<ControlJobReply> {
        control::control_job(self, req).await.map(Response::new)
    }

    async fn update_job(&self, req: Request<UpdateJobRequest>) -> Res<ControlJobReply> {
        control::update_job(self, req).await.map(Response::new)
    }

    async fn update_node(&self, req: Request<UpdateNodeRequest>) -> Res<Ack> {
        nodes::update_node(self, req).await.map(Response::new)
    }

    async fn update_partition(&self, req: Request<UpdatePartitionRequest>) -> Res<Ack> {
        nodes::update_partition(self, req).await.map(Response::new)
    }

    async fn register_node(&self, req: Request<RegisterNodeRequest>) -> Res<RegisterNodeReply> {
        nodes::register_node(self, req).await.map(Response::new)
    }

    async fn heartbeat(&self, req: Request<HeartbeatRequest>) -> Res<Ack> {
        nodes::heartbeat(self, req).await.map(Response::new)
    }

    async fn job_exited(&self, req: Request<JobExitedRequest>) -> Res<Ack> {
        nodes::job_exited(self, req).await.map(Response::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eagain_travels_as_its_text_and_not_as_a_connect_failure() {
        for e in [
            CtldError::MaxJobCount { limit: 10 },
            CtldError::JobIdsExhausted,
        ] {
            let status = Status::from(e);
            assert_eq!(status.message(), "Resource temporarily unavailable");
            assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        }
        let gone = Status::from(RuntimeGone);
        assert_eq!(gone.code(), tonic::Code::Unavailable);
    }
}
