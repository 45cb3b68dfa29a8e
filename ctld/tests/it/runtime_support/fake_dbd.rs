//! A fake accounting daemon for runtime tests: it leases job ids, lists the administrators it
//! was given, and keeps every accounting record shipped to it (applied once per stream and seq,
//! as the real one does). Everything else is unimplemented.

use sluice_testkit::fake::accounting_records_server::{AccountingRecords, AccountingRecordsServer};
use sluice_testkit::fake::accounting_server::{Accounting, AccountingServer};
use sluice_wire::auth::Verifier;
use sluice_wire::proto::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

#[derive(Default)]
struct State {
    admins: Vec<String>,
    next_id: u32,
    cursors: HashMap<u64, u64>,
    records: Vec<AcctRecord>,
}

/// The fake dbd; clones share it.
#[derive(Clone)]
pub struct FakeDbd {
    /// Where it listens.
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl FakeDbd {
    /// Serves a fake dbd listing `admins` (user names) as `AdminLevel=Administrator`, leasing
    /// ids from 100 up.
    pub async fn start(admins: &[&str]) -> FakeDbd {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let dbd = FakeDbd {
            port,
            state: Arc::new(Mutex::new(State {
                admins: admins.iter().map(|s| s.to_string()).collect(),
                next_id: 100,
                ..State::default()
            })),
        };
        let verifier = Verifier::new(super::key());
        let accounting = verifier.guard(AccountingServer::new(dbd.clone()));
        let records = verifier.guard(AccountingRecordsServer::new(dbd.clone()));
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(accounting)
                .add_service(records)
                .serve_with_incoming(TcpListenerStream::new(listener)),
        );
        dbd
    }

    /// The `slurm.conf` lines pointing a controller at this dbd.
    pub fn conf_lines(&self) -> String {
        format!(
            "AccountingStorageHost=127.0.0.1\nAccountingStoragePort={}\n",
            self.port
        )
    }

    /// Every record shipped so far, in the order applied.
    pub fn records(&self) -> Vec<AcctRecord> {
        self.state.lock().unwrap().records.clone()
    }
}

#[tonic::async_trait]
impl AccountingRecords for FakeDbd {
    async fn record_batch(
        &self,
        req: Request<RecordBatchRequest>,
    ) -> Result<Response<RecordBatchReply>, Status> {
        let req = req.into_inner();
        let mut st = self.state.lock().unwrap();
        let mut applied = st.cursors.get(&req.stream_id).copied().unwrap_or(0);
        for r in req.records {
            if r.seq > applied {
                applied = r.seq;
                st.records.push(r);
            }
        }
        st.cursors.insert(req.stream_id, applied);
        Ok(Response::new(RecordBatchReply {
            applied_seq: applied,
        }))
    }
}

#[tonic::async_trait]
impl Accounting for FakeDbd {
    async fn lease_job_ids(
        &self,
        req: Request<LeaseJobIdsRequest>,
    ) -> Result<Response<LeaseJobIdsReply>, Status> {
        let count = req.into_inner().count;
        let mut st = self.state.lock().unwrap();
        let first = st.next_id;
        st.next_id += count;
        Ok(Response::new(LeaseJobIdsReply {
            ranges: vec![JobIdRange { first, count }],
        }))
    }

    async fn list_users(
        &self,
        req: Request<ListUsersRequest>,
    ) -> Result<Response<ListUsersReply>, Status> {
        let req = req.into_inner();
        let st = self.state.lock().unwrap();
        let users = st
            .admins
            .iter()
            .map(|name| User {
                name: name.clone(),
                default_account: "root".into(),
                admin_level: "Administrator".into(),
                deleted: false,
                coord_accounts: Vec::new(),
            })
            .filter(|u| req.admin_levels.is_empty() || req.admin_levels.contains(&u.admin_level))
            .collect();
        Ok(Response::new(ListUsersReply { users }))
    }
}
