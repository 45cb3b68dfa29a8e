//! How soon a change made with `sacctmgr` reaches every controller of the federation.
//!
//! Each run sets a new feature on one cluster with `ModifyClusters` (the request
//! `sacctmgr -i modify cluster C set features=F` sends, committed at once), then asks every
//! controller for its own view (`GetFederation`, what it schedules and validates by) together,
//! round after round, until all of them show the new features. The time runs from the request's
//! start, so it includes the dbd's commit; it is an upper bound within one polling round.

use std::time::{Duration, Instant};

use sluice_wire::auth::{Key, Signer};
use sluice_wire::client::{CtldFedClient, connect};
use sluice_wire::proto::{GetFederationRequest, ListEdit, ListOp, ModifyClustersRequest};

use crate::bench::gauge::{self, Gauge};
use crate::bench::load::rpc;
use crate::bench::{BenchError, report};
use sluice_cli::slurm_conf::SlurmConf;

/// The target: a change reaches every controller within a second.
const TARGET: Duration = Duration::from_secs(1);
/// How long one change may take before the benchmark gives up.
const TIMEOUT: Duration = Duration::from_secs(30);

/// `runs` feature changes of the last cluster in `confs`; the worst time until every
/// controller showed the change (the median in the detail).
pub async fn propagation(confs: &[SlurmConf], key: &Key, runs: usize) -> Result<Gauge, BenchError> {
    let mut dbd = confs
        .first()
        .ok_or_else(|| BenchError::Command {
            command: "sacctmgr change propagation".to_string(),
            detail: "no cluster".to_string(),
        })?
        .connect_dbd()
        .await?;
    let target = confs
        .last()
        .and_then(|c| c.cluster_name.clone())
        .unwrap_or_default();
    let mut clients = Vec::with_capacity(confs.len());
    for conf in confs {
        clients.push(fed_client(conf, key).await?);
    }
    let mut samples = Vec::with_capacity(runs);
    let mut rounds = Vec::new();
    for run in 0..runs.max(1) {
        let feature = format!("bench{run}");
        let started = Instant::now();
        let req = ModifyClustersRequest {
            names: vec![target.clone()],
            features: Some(ListEdit {
                op: ListOp::Set as i32,
                items: vec![feature.clone()],
            }),
            commit: true,
            ..Default::default()
        };
        rpc("modify cluster", dbd.modify_clusters(req).await)?;
        loop {
            let round = Instant::now();
            let seen = seen_by(&clients, &target, &feature).await?;
            rounds.push(round.elapsed());
            if seen == clients.len() {
                samples.push(started.elapsed());
                break;
            }
            if started.elapsed() > TIMEOUT {
                return Err(BenchError::Command {
                    command: format!("features={feature} on {target}"),
                    detail: format!("{seen} of {} controllers after {TIMEOUT:?}", clients.len()),
                });
            }
        }
    }
    let worst = samples.iter().max().copied().unwrap_or_default();
    let n = samples.len();
    let median = gauge::ms(report::median(&mut samples));
    let round = gauge::ms(report::median(&mut rounds));
    let detail = format!(
        "worst of {n} (median {median:.2} ms); sacctmgr -i's ModifyClusters until all {} \
         controllers' GetFederation show it (round {round:.2} ms)",
        clients.len()
    );
    let name = "sacctmgr change reaches every controller";
    Ok(Gauge::millis(name, worst, TARGET).with(detail))
}

/// A `ControllerFederation` client of the controller of `conf`, signed as the current user.
pub(super) async fn fed_client(conf: &SlurmConf, key: &Key) -> Result<CtldFedClient, BenchError> {
    let channel = connect(
        &conf.ctld_host,
        conf.ctld_port,
        Signer::for_current_user(key.clone()),
    )
    .await
    .map_err(|e| BenchError::Command {
        command: format!("connecting to {}:{}", conf.ctld_host, conf.ctld_port),
        detail: e.to_string(),
    })?;
    Ok(CtldFedClient::new(channel))
}

/// How many controllers show `cluster` with exactly `feature`, all asked together.
async fn seen_by(
    clients: &[CtldFedClient],
    cluster: &str,
    feature: &str,
) -> Result<usize, BenchError> {
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        let mut client = client.clone();
        tasks.spawn(async move { client.get_federation(GetFederationRequest {}).await });
    }
    let mut seen = 0;
    while let Some(done) = tasks.join_next().await {
        let reply = done.map_err(|e| BenchError::Command {
            command: "get federation task".to_string(),
            detail: e.to_string(),
        })?;
        let view = rpc("get federation", reply)?;
        let shows = view
            .self_
            .iter()
            .chain(&view.siblings)
            .any(|m| m.name == cluster && m.features == [feature]);
        seen += usize::from(shows);
    }
    Ok(seen)
}
