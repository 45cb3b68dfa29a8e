//! `ControllerFederation`: the federation as this controller sees it, for `scontrol show
//! federation` (Self, then the siblings by name; `connected` is Slurm's PersistConnSend/Recv).

use crate::fed_client::convert::wire_view;
use crate::runtime::CoreHandle;
use sluice_wire::auth;
use sluice_wire::proto::controller_federation_server::{
    ControllerFederation, ControllerFederationServer,
};
use sluice_wire::proto::{FederationView, GetFederationRequest};
use tonic::{Request, Response, Status};

/// The service over the core's view.
pub struct FederationInfoService {
    core: CoreHandle,
}

impl FederationInfoService {
    /// A service reading the view of the core behind `core`.
    pub fn new(core: CoreHandle) -> Self {
        Self { core }
    }

    /// The tonic server (wrap it with the `Verifier` interceptor).
    pub fn into_server(self) -> ControllerFederationServer<Self> {
        ControllerFederationServer::new(self)
    }
}

#[tonic::async_trait]
impl ControllerFederation for FederationInfoService {
    async fn get_federation(
        &self,
        req: Request<GetFederationRequest>,
    ) -> Result<Response<FederationView>, Status> {
        auth::identity(&req)?;
        let mut view = self
            .core
            .query(|cx| {
                let mut v = cx.core.fed_view().clone();
                v.siblings.sort_by(|a, b| a.name.cmp(&b.name));
                v
            })
            .await?;
        if !view.in_federation() {
            view = crate::core::federation::FedView::default();
        }
        Ok(Response::new(wire_view(&view)))
    }
}
