//! `ControllerAdmin`: administrators' changes to the controller's own settings,
//! `scontrol reconfigure` (Reconfigure) and `scontrol update SuspendExc*` (UpdateSuspendExc).
//! Both need an administrator; both change nothing when they fail.

use super::ControllerService;
use crate::core::{self, on_suspend_exc_update};
use crate::error::CtldError;
use crate::runtime::reconfigure::reconfigure;
use sluice_wire::proto::controller_admin_server::ControllerAdmin;
use sluice_wire::proto::{
    Ack, ReconfigureRequest, SuspendExcKey, UpdateMode, UpdateSuspendExcRequest,
};
use tonic::{Request, Response, Status};

/// A refused reconfiguration: a file that does not read and changes that need a restart are
/// the state of the controller's file, not bad arguments.
fn refused(e: CtldError) -> Status {
    match e {
        CtldError::Conf(_) | CtldError::RestartNeeded { .. } => {
            Status::failed_precondition(e.to_string())
        }
        other => other.into(),
    }
}

#[tonic::async_trait]
impl ControllerAdmin for ControllerService {
    async fn reconfigure(&self, req: Request<ReconfigureRequest>) -> Result<Response<Ack>, Status> {
        let caller = self.admin(&req)?;
        reconfigure(&self.core, caller).await?.map_err(refused)?;
        Ok(Response::new(Ack {}))
    }

    async fn update_suspend_exc(
        &self,
        req: Request<UpdateSuspendExcRequest>,
    ) -> Result<Response<Ack>, Status> {
        let caller = self.admin(&req)?;
        let r = req.into_inner();
        let key = match SuspendExcKey::try_from(r.key) {
            Ok(SuspendExcKey::Nodes) => core::SuspendExcKey::Nodes,
            Ok(SuspendExcKey::Parts) => core::SuspendExcKey::Parts,
            Ok(SuspendExcKey::States) => core::SuspendExcKey::States,
            Ok(SuspendExcKey::Unspecified) | Err(_) => {
                return Err(Status::invalid_argument(
                    "No valid entity in update command",
                ));
            }
        };
        let mode = match UpdateMode::try_from(r.mode) {
            Ok(UpdateMode::Set) => core::UpdateMode::Set,
            Ok(UpdateMode::Add) => core::UpdateMode::Add,
            Ok(UpdateMode::Remove) => core::UpdateMode::Remove,
            Err(_) => return Err(Status::invalid_argument("Invalid update mode")),
        };
        self.core
            .call(move |cx| on_suspend_exc_update(cx.core, caller, key, mode, &r.value))
            .await??;
        Ok(Response::new(Ack {}))
    }
}
