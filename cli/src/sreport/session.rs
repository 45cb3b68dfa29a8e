//! One sreport run: its options, where it writes, the sticky exit code, and its connections
//! to the accounting daemon (opened on first use, so option errors never need a daemon).
//!
//! The queries: which clusters a report covers (the local one, `-M`, `-a`, `Clusters=`, or
//! with `--federation` the local cluster's federation), and the `Reports` calls.

use std::io::Write;

use sluice_wire::client::{DbdClient, SignedChannel};
use sluice_wire::proto::reports_client::ReportsClient;
use sluice_wire::proto::{self, JobSizesQuery, UsageQuery};

use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::SlurmConf;
use crate::timefmt::Zone;

use super::args::{ClusterChoice, Options};
use super::conds::Conds;
use super::data::{AssocTres, ClusterTres, SizeRow};
use super::error::SreportError;
use super::render::{ProperNames, Style};

/// The clusters a report covers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope {
    /// Cluster names; empty means every cluster.
    pub clusters: Vec<String>,
    /// With `--federation`: the federation whose clusters are merged.
    pub federation: Option<String>,
}

/// The state of one run.
pub struct Session<'io> {
    pub opts: Options,
    out: &'io mut dyn Write,
    err: &'io mut dyn Write,
    /// 1 once anything failed, as sreport's global `exit_code`.
    pub exit_code: i32,
    /// The clock, read once by the entry point.
    pub now: i64,
    pub zone: Zone,
    /// Proper names of users (the passwd database outside tests).
    pub names: ProperNames<'io>,
    conf: Option<SlurmConf>,
    reports: Option<ReportsClient<SignedChannel>>,
    dbd: Option<DbdClient>,
}

impl<'io> Session<'io> {
    /// A session writing to `out`/`err`.
    pub fn new(
        opts: Options,
        out: &'io mut dyn Write,
        err: &'io mut dyn Write,
        now: i64,
        names: ProperNames<'io>,
    ) -> Self {
        Self {
            opts,
            out,
            err,
            exit_code: 0,
            now,
            zone: Zone::Local,
            names,
            conf: None,
            reports: None,
            dbd: None,
        }
    }

    /// Writes to stdout (a closed stdout is not worth a panic).
    pub fn out(&mut self, text: &str) {
        let _ = self.out.write_all(text.as_bytes());
    }

    /// Prints an error line on stderr and makes the exit code 1.
    pub fn fail(&mut self, text: &str) {
        let _ = writeln!(self.err, "{text}");
        self.exit_code = 1;
    }

    /// Flushes both streams.
    pub fn flush(&mut self) {
        let _ = self.out.flush();
        let _ = self.err.flush();
    }

    /// The print settings of the current options.
    pub fn style(&self) -> Style {
        Style {
            mode: self.opts.mode,
            header: !self.opts.noheader,
            time: self.opts.time,
            tres: self.opts.tres.clone(),
            zone: self.zone,
            sort_by_name: self.opts.sort_by_name,
        }
    }

    fn conf(&mut self) -> Result<&SlurmConf, SreportError> {
        if self.conf.is_none() {
            self.conf = Some(SlurmConf::from_env()?);
        }
        self.conf
            .as_ref()
            .ok_or(SreportError::Database(String::new()))
    }

    async fn reports(&mut self) -> Result<&mut ReportsClient<SignedChannel>, SreportError> {
        if self.reports.is_none() {
            let client = self
                .conf()?
                .connect_reports()
                .await
                .map_err(connect_error)?;
            self.reports = Some(client);
        }
        self.reports
            .as_mut()
            .ok_or(SreportError::Database(String::new()))
    }

    async fn dbd(&mut self) -> Result<&mut DbdClient, SreportError> {
        if self.dbd.is_none() {
            let client = self.conf()?.connect_dbd().await.map_err(connect_error)?;
            self.dbd = Some(client);
        }
        self.dbd
            .as_mut()
            .ok_or(SreportError::Database(String::new()))
    }

    /// The clusters `conds` (with the global options) select.
    pub async fn scope(&mut self, conds: &Conds) -> Result<Scope, SreportError> {
        let mut clusters = match &self.opts.clusters {
            ClusterChoice::List(l) => l.clone(),
            _ => Vec::new(),
        };
        let mut all = conds.all_clusters || self.opts.clusters == ClusterChoice::All;
        let mut federation = None;
        let fed_of = if self.opts.federation && self.opts.clusters == ClusterChoice::Local {
            self.conf()?.cluster_name.clone()
        } else {
            None
        };
        if let Some(local) = fed_of {
            let req = proto::ListFederationsRequest {
                clusters: vec![local],
                ..Default::default()
            };
            let reply = self.dbd().await?.list_federations(req).await;
            let feds = reply.map_err(query_error)?.into_inner().federations;
            if let Some(fed) = feds.into_iter().find(|f| !f.deleted) {
                clusters = fed
                    .clusters
                    .iter()
                    .filter(|c| !c.deleted)
                    .map(|c| c.name.clone())
                    .collect();
                federation = Some(fed.name);
                all = false;
            }
        }
        for c in &conds.clusters {
            if !clusters.iter().any(|x| x.eq_ignore_ascii_case(c)) {
                clusters.push(c.clone());
            }
        }
        if clusters.is_empty() && !all {
            clusters.extend(self.conf()?.cluster_name.clone());
        }
        Ok(Scope {
            clusters,
            federation,
        })
    }

    /// `Reports.ClusterUtilization`.
    pub async fn cluster_usage(&mut self, q: UsageQuery) -> Result<Vec<ClusterTres>, SreportError> {
        let reply = self.reports().await?.cluster_utilization(q).await;
        let rows = reply.map_err(query_error)?.into_inner().rows;
        Ok(rows.into_iter().map(ClusterTres::from).collect())
    }

    /// `Reports.AssocUtilization`: association rows and the clusters' totals.
    pub async fn assoc_usage(
        &mut self,
        q: UsageQuery,
    ) -> Result<(Vec<AssocTres>, Vec<ClusterTres>), SreportError> {
        let reply = self.reports().await?.assoc_utilization(q).await;
        let r = reply.map_err(query_error)?.into_inner();
        Ok((
            r.rows.into_iter().map(AssocTres::from).collect(),
            r.clusters.into_iter().map(ClusterTres::from).collect(),
        ))
    }

    /// `Reports.JobSizes`.
    pub async fn job_sizes(
        &mut self,
        q: JobSizesQuery,
    ) -> Result<(Vec<SizeRow>, Vec<u64>), SreportError> {
        let reply = self.reports().await?.job_sizes(q).await;
        let reply = reply.map_err(query_error)?.into_inner();
        let rows = reply.rows.into_iter().map(SizeRow::from).collect();
        Ok((rows, reply.sizes))
    }
}

fn connect_error(e: crate::slurm_conf::CliError) -> SreportError {
    match e {
        crate::slurm_conf::CliError::Connect { reason, .. } => SreportError::Database(reason),
        other => SreportError::Setup(other),
    }
}

fn query_error(status: tonic::Status) -> SreportError {
    SreportError::Database(status_text(&status, Asker::Accounting))
}
