//! The `AccountingRecords` gRPC service: controllers send their accounting outbox here
//! (`RecordBatch`), and sacct reads job history (`ListJobs`, streamed page by page, one
//! `JobRows` message per page, so the stream's costs are per page rather than per row).
//!
//! `RecordBatch` needs an admin (root or SlurmUser: the controllers), as every other change.
//! `ListJobs` is open to every authenticated caller, like the other lists.

mod convert;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use sluice_wire::proto::{
    self,
    accounting_records_server::{AccountingRecords, AccountingRecordsServer},
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::{AccountingService, blocking};
use crate::store::{JobCursor, JobQuery, Store};

/// Runs per page read from the store, sent as one `JobRows` message.
const PAGE: usize = 2000;
/// Pages read ahead of the client (the stream's buffer): the dbd holds at most this many
/// pages plus the one being read, however large the result.
const AHEAD: usize = 2;

/// The job-records service; shares the store and the admin rule of [`AccountingService`].
#[derive(Debug, Clone)]
pub struct RecordsService {
    accounting: AccountingService,
}

impl RecordsService {
    /// Applies slurmdbd.conf's `PrivateData` to sacct's listing.
    pub fn with_private_data(mut self, private: sluice_vocab::private_data::PrivateData) -> Self {
        self.accounting = self.accounting.with_private_data(private);
        self
    }

    /// A service over `store`; `admin_uids` (root and the SlurmUser) may send records.
    pub fn new(store: Arc<Store>, admin_uids: Vec<u32>) -> Self {
        Self {
            accounting: AccountingService::new(store, admin_uids),
        }
    }

    /// The tonic server to mount (behind the `Verifier` interceptor).
    pub fn into_server(self) -> AccountingRecordsServer<Self> {
        AccountingRecordsServer::new(self)
    }

    fn store(&self) -> Arc<Store> {
        Arc::clone(&self.accounting.store)
    }
}

/// Streams every page of `query` into `tx`, stopping early when the client goes away.
async fn stream_pages(
    store: Arc<Store>,
    query: JobQuery,
    tx: mpsc::Sender<Result<proto::JobRows, Status>>,
) {
    let query = Arc::new(query);
    let mut after: Option<JobCursor> = None;
    loop {
        let (s, q, a) = (Arc::clone(&store), Arc::clone(&query), after.take());
        let page = match blocking(move || s.list_jobs(&q, a.as_ref(), PAGE)).await {
            Ok(page) => page,
            Err(status) => {
                // The client may have gone already; nothing else to tell.
                let _ = tx.send(Err(status)).await;
                return;
            }
        };
        let rows = page.runs.into_iter().map(convert::job_row).collect();
        if tx.send(Ok(proto::JobRows { rows })).await.is_err() {
            return;
        }
        match page.next {
            Some(next) => after = Some(next),
            None => return,
        }
    }
}

#[tonic::async_trait]
impl AccountingRecords for RecordsService {
    async fn record_batch(
        &self,
        req: Request<proto::RecordBatchRequest>,
    ) -> Result<Response<proto::RecordBatchReply>, Status> {
        let uid = self.accounting.require_admin(&req).await?;
        let m = req.into_inner();
        let records = convert::records(m.records)?;
        let (cluster, stream, count) = (m.cluster, m.stream_id, records.len());
        let store = self.store();
        let name = cluster.clone();
        let applied_seq = blocking(move || store.record_batch(&name, stream, &records)).await?;
        tracing::debug!(
            uid,
            cluster,
            stream,
            count,
            applied_seq,
            "accounting records applied"
        );
        Ok(Response::new(proto::RecordBatchReply { applied_seq }))
    }

    type ListJobsStream = ReceiverStream<Result<proto::JobRows, Status>>;

    async fn list_jobs(
        &self,
        req: Request<proto::JobQuery>,
    ) -> Result<Response<Self::ListJobsStream>, Status> {
        let privacy = self.accounting.privacy(&req).await?;
        let req = req.into_inner();
        let het: Vec<(u32, u32)> = req
            .het_components
            .iter()
            .map(|c| (c.het_job_id, c.het_offset))
            .collect();
        let (mut query, own_by_default) = convert::job_query(req)?;
        let (tx, rx) = mpsc::channel(AHEAD);
        // Nothing the caller may see: the stream ends at once, as an empty sacct.
        if !privacy.sacct_jobs(&mut query, own_by_default) {
            return Ok(Response::new(ReceiverStream::new(rx)));
        }
        // A heterogeneous job's id names every component, `N+K` one of them.
        if !query.job_ids.is_empty() || !het.is_empty() {
            let (store, clusters, ids) =
                (self.store(), query.clusters.clone(), query.job_ids.clone());
            query.job_ids = blocking(move || store.named_jobs(&clusters, &ids, &het)).await?;
            if query.job_ids.is_empty() {
                // Only components that do not exist: no job at all, not every job.
                return Ok(Response::new(ReceiverStream::new(rx)));
            }
        }
        tokio::spawn(stream_pages(self.store(), query, tx));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
