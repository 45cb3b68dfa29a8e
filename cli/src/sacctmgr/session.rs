//! One sacctmgr run: its options, where it writes, its stdin, and its connection to the dbd
//! (opened on first use, so parse errors never need a daemon).
//!
//! Changes follow Slurm's commit flow: with `-i` the change is committed at once; otherwise it
//! is run with `commit=false` (a dry run in a rolled-back transaction, so errors show before
//! any question), then sacctmgr asks, and a `y` sends the same request with `commit=true`.

use std::io::Write;

use sluice_wire::client::DbdClient;
use sluice_wire::proto::{self, ChangeReply};

use crate::output::Printer;
use crate::slurm_conf::SlurmConf;

use super::args::Options;
use super::error::SacctmgrError;
use super::fields::{Chosen, columns};
use crate::prompt::{ANSWER_TIMEOUT, Input, Read, is_yes};
use crate::rpc_error::{Asker, status_text};

/// How a command ended when it did not fail with an error: Slurm exits 1 after some
/// outcomes it reports on stdout (" Nothing deleted", " This cluster c1 already exists").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Done {
    Ok,
    Failed,
}

/// What a command handler returns.
pub type Outcome = Result<Done, SacctmgrError>;

macro_rules! changes {
    ($($variant:ident($req:ident) => $rpc:ident),* $(,)?) => {
        /// A change request to the dbd, any entity.
        #[derive(Debug, Clone)]
        pub enum Change {
            $($variant(proto::$req)),*
        }

        impl Change {
            fn set_commit(&mut self, commit: bool) {
                match self {
                    $(Self::$variant(r) => r.commit = commit),*
                }
            }

            async fn send(&self, client: &mut DbdClient) -> Result<ChangeReply, tonic::Status> {
                match self {
                    $(Self::$variant(r) => client.$rpc(r.clone()).await.map(tonic::Response::into_inner)),*
                }
            }
        }
    };
}

changes! {
    AddClusters(AddClustersRequest) => add_clusters,
    ModifyClusters(ModifyClustersRequest) => modify_clusters,
    DeleteClusters(DeleteClustersRequest) => delete_clusters,
    AddFederations(AddFederationsRequest) => add_federations,
    ModifyFederations(ModifyFederationsRequest) => modify_federations,
    DeleteFederations(DeleteFederationsRequest) => delete_federations,
    AddAccounts(AddAccountsRequest) => add_accounts,
    ModifyAccounts(ModifyAccountsRequest) => modify_accounts,
    DeleteAccounts(DeleteAccountsRequest) => delete_accounts,
    AddUsers(AddUsersRequest) => add_users,
    ModifyUsers(ModifyUsersRequest) => modify_users,
    DeleteUsers(DeleteUsersRequest) => delete_users,
    AddCoordinators(CoordinatorsRequest) => add_coordinators,
    DeleteCoordinators(CoordinatorsRequest) => delete_coordinators,
    ModifyAssocLimits(ModifyAssocLimitsRequest) => modify_assoc_limits,
    AddQos(AddQosRequest) => add_qos,
    ModifyQos(ModifyQosRequest) => modify_qos,
    DeleteQos(DeleteQosRequest) => delete_qos,
    ModifyAssocQos(ModifyAssocQosRequest) => modify_assoc_qos,
}

/// The state of one run.
pub struct Session<'io> {
    pub opts: Options,
    out: &'io mut dyn Write,
    err: &'io mut dyn Write,
    pub input: Input,
    client: Option<DbdClient>,
}

/// A list query: asks the dbd with `req` and returns one repeated field of the reply.
macro_rules! list_query {
    ($(#[$doc:meta])* $name:ident($req:ty) -> $item:ty, $field:ident) => {
        $(#[$doc])*
        pub async fn $name(&mut self, req: $req) -> Result<Vec<$item>, SacctmgrError> {
            let reply = self.client().await?.$name(req).await.map_err(query_error)?;
            Ok(reply.into_inner().$field)
        }
    };
}

impl<'io> Session<'io> {
    /// A session writing to `out`/`err` and reading answers from `input`.
    pub fn new(
        opts: Options,
        out: &'io mut dyn Write,
        err: &'io mut dyn Write,
        input: Input,
    ) -> Self {
        Self {
            opts,
            out,
            err,
            input,
            client: None,
        }
    }

    /// Writes to stdout. A closed stdout is not worth a panic; the exit code still tells.
    pub fn out(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
    }

    /// Writes to stderr.
    pub fn err(&mut self, text: &str) {
        let _ = self.err.write_all(text.as_bytes());
    }

    /// Flushes both streams (before waiting on stdin, and at the end).
    pub fn flush(&mut self) {
        let _ = self.out.flush();
        let _ = self.err.flush();
    }

    /// Slurm's `commit_check`: true at once with `-i`, otherwise asks and waits 30 seconds.
    pub fn commit_check(&mut self, question: &str) -> bool {
        if self.opts.immediate {
            return true;
        }
        self.out(&format!(
            "{question} (You have 30 seconds to decide)\n(N/y): "
        ));
        self.flush();
        let answer = self.input.read(Some(ANSWER_TIMEOUT));
        self.out("\n");
        if answer == Read::Timeout {
            self.out("timeout\n");
        }
        is_yes(&answer)
    }

    /// The dbd connection, opened on first use.
    pub async fn client(&mut self) -> Result<&mut DbdClient, SacctmgrError> {
        if self.client.is_none() {
            let conf = SlurmConf::from_env()?;
            self.client = Some(conf.connect_dbd().await?);
        }
        self.client
            .as_mut()
            .ok_or(SacctmgrError::Query(String::from("no connection")))
    }

    /// Runs `change` as a dry run (or, with `-i`, for real). `action` leads Slurm's error line.
    pub async fn preview(
        &mut self,
        change: &mut Change,
        action: &'static str,
    ) -> Result<ChangeReply, SacctmgrError> {
        change.set_commit(self.opts.immediate);
        let client = self.client().await?;
        change
            .send(client)
            .await
            .map_err(|s| SacctmgrError::Request {
                action,
                message: status_text(&s, Asker::Accounting),
            })
    }

    /// After a preview: asks (unless `-i`) and commits, or prints " Changes Discarded".
    pub async fn confirm(&mut self, change: &mut Change, action: &'static str) -> Outcome {
        if self.opts.immediate {
            return Ok(Done::Ok);
        }
        if !self.commit_check("Would you like to commit changes?") {
            self.out(" Changes Discarded\n");
            return Ok(Done::Ok);
        }
        change.set_commit(true);
        let client = self.client().await?;
        change
            .send(client)
            .await
            .map_err(|s| SacctmgrError::Request {
                action,
                message: status_text(&s, Asker::Accounting),
            })?;
        Ok(Done::Ok)
    }

    /// Prints a table (header unless `-n`) of `rows` under the chosen fields.
    pub fn print_table(&mut self, chosen: &[Chosen], rows: &[Vec<String>]) {
        let printer = Printer::new(self.opts.mode, columns(chosen));
        let mut text = Vec::new();
        if !self.opts.noheader {
            let _ = printer.print_header(&mut text);
        }
        for row in rows {
            let _ = printer.print_row(&mut text, row);
        }
        let _ = self.out.write_all(&text);
    }

    list_query!(
        /// Lists clusters.
        list_clusters(proto::ListClustersRequest) -> proto::Cluster, clusters
    );
    list_query!(
        /// Lists federations.
        list_federations(proto::ListFederationsRequest) -> proto::Federation, federations
    );
    list_query!(
        /// Lists accounts.
        list_accounts(proto::ListAccountsRequest) -> proto::Account, accounts
    );
    list_query!(
        /// Lists users.
        list_users(proto::ListUsersRequest) -> proto::User, users
    );
    list_query!(
        /// Lists QOS.
        list_qos(proto::ListQosRequest) -> proto::Qos, qos
    );
    list_query!(
        /// Lists associations.
        list_associations(proto::ListAssociationsRequest) -> proto::Association, associations
    );
}

fn query_error(status: tonic::Status) -> SacctmgrError {
    SacctmgrError::Query(status_text(&status, Asker::Accounting))
}
