//! The `Reports` gRPC service: sreport's usage reports from the rollups. It decodes, calls the
//! store on a blocking thread with the clock's `now` (for Slurm's table choice), and encodes.
//! Every authenticated caller may read usage (Slurm's default); with `PrivateData=usage` in
//! slurmdbd.conf, association reports show a caller below Operator only their own user's rows.
//!
//! Before reading, it rolls up what closed since the daemon's rollup task last ran (usually
//! nothing: one read per cluster), so a report always covers every closed hour and every
//! record received, late ones included.

mod convert;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use sluice_reports::Calendar;
use sluice_wire::auth;
use sluice_wire::proto::{
    self,
    reports_server::{Reports, ReportsServer},
};
use tonic::{Request, Response, Status};

use super::{blocking, private};
use crate::store::usage::PurgePolicy;
use crate::store::{Store, StoreError};
use sluice_vocab::private_data::PrivateData;

/// The clock the service reads `now` from (unix seconds).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The usage-reports service.
#[derive(Clone)]
pub struct ReportsService {
    store: Arc<Store>,
    cal: Calendar,
    clock: Clock,
    admin_uids: Vec<u32>,
    private: PrivateData,
}

impl std::fmt::Debug for ReportsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportsService")
            .field("cal", &self.cal)
            .finish_non_exhaustive()
    }
}

impl ReportsService {
    /// A service over `store`, counting days and months in `cal`, with the time from `clock`.
    pub fn new(store: Arc<Store>, cal: Calendar, clock: Clock) -> Self {
        Self {
            store,
            cal,
            clock,
            admin_uids: Vec::new(),
            private: PrivateData::default(),
        }
    }

    /// Applies slurmdbd.conf's `PrivateData=usage` for callers other than root, the SlurmUser
    /// (`admin_uids`) and operators.
    pub fn with_privacy(mut self, admin_uids: Vec<u32>, private: PrivateData) -> Self {
        self.admin_uids = admin_uids;
        self.private = private;
        self
    }

    /// The tonic server to mount (behind the `Verifier` interceptor).
    pub fn into_server(self) -> ReportsServer<Self> {
        ReportsServer::new(self)
    }
}

/// Rolls up the hours closed by `now` that the rollup task has not rolled yet (no purge: that
/// is the task's).
fn catch_up(store: &Store, cal: &Calendar, now: i64) -> Result<(), StoreError> {
    store.roll_up(cal, now, &PurgePolicy::default()).map(|_| ())
}

#[tonic::async_trait]
impl Reports for ReportsService {
    async fn cluster_utilization(
        &self,
        req: Request<proto::UsageQuery>,
    ) -> Result<Response<proto::ClusterUsageReply>, Status> {
        auth::identity(&req)?;
        let q = convert::usage_query(req.into_inner())?;
        let (store, cal, now) = (Arc::clone(&self.store), self.cal, (self.clock)());
        let report = blocking(move || {
            catch_up(&store, &cal, now)?;
            store.cluster_utilization(&cal, &q, now)
        })
        .await?;
        Ok(Response::new(proto::ClusterUsageReply {
            rows: report
                .rows
                .into_iter()
                .map(convert::cluster_usage)
                .collect(),
            table: report.period.name().to_string(),
        }))
    }

    async fn assoc_utilization(
        &self,
        req: Request<proto::UsageQuery>,
    ) -> Result<Response<proto::AssocUsageReply>, Status> {
        let uid = auth::identity(&req)?.uid;
        let privacy = private::privacy(&self.store, &self.admin_uids, self.private, uid).await?;
        let q = convert::usage_query(req.into_inner())?;
        let (store, cal, now) = (Arc::clone(&self.store), self.cal, (self.clock)());
        let mut report = blocking(move || {
            catch_up(&store, &cal, now)?;
            store.assoc_utilization(&cal, &q, now)
        })
        .await?;
        privacy.usage(&mut report.rows);
        Ok(Response::new(proto::AssocUsageReply {
            rows: report.rows.into_iter().map(convert::assoc_usage).collect(),
            clusters: report
                .clusters
                .into_iter()
                .map(convert::cluster_usage)
                .collect(),
            table: report.period.name().to_string(),
        }))
    }

    async fn job_sizes(
        &self,
        req: Request<proto::JobSizesQuery>,
    ) -> Result<Response<proto::JobSizesReply>, Status> {
        let uid = auth::identity(&req)?.uid;
        let privacy = private::privacy(&self.store, &self.admin_uids, self.private, uid).await?;
        let mut q = convert::job_sizes_query(req.into_inner())?;
        if !privacy.job_uids(&mut q.uids) {
            // Only other users' jobs asked for: nothing to count.
            return Ok(Response::new(proto::JobSizesReply::default()));
        }
        let individual = q.individual;
        let (store, cal, now) = (Arc::clone(&self.store), self.cal, (self.clock)());
        let report = blocking(move || {
            catch_up(&store, &cal, now)?;
            store.job_sizes(&cal, &q, now)
        })
        .await?;
        Ok(Response::new(proto::JobSizesReply {
            rows: report
                .rows
                .into_iter()
                .map(convert::job_sizes_row)
                .collect(),
            clusters: report
                .clusters
                .into_iter()
                .map(convert::cluster_usage)
                .collect(),
            sizes: if individual {
                report.bounds
            } else {
                Vec::new()
            },
        }))
    }
}
