//! The accounting daemon's speed targets: 1,000 cluster/account/user changes through the RPC
//! (under 2 s on SQLite), and `sacctmgr show cluster withfed` / `show federation` over a
//! federation of 63 clusters, process start included (under 20 ms, median of 20).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use sluice_wire::client::DbdClient;
use sluice_wire::proto::{
    AddAccountsRequest, AddClustersRequest, AddFederationsRequest, AddUsersRequest, ListEdit,
    ListOp, ModifyClustersRequest,
};

use super::report::{self, Figure};
use super::{BenchError, work_dir};
use crate::up::{self, DownArgs, UpArgs, process};
use sluice_cli::slurm_conf::SlurmConf;

/// Options of `sluice bench dbd`.
#[derive(Debug, Clone, clap::Args)]
pub struct DbdBenchArgs {
    /// The accounting database (as `sluice up --storage`). [default: sqlite]
    #[arg(long)]
    pub storage: Option<String>,
    /// How many runs of each `sacctmgr show` to take the median of.
    #[arg(long, default_value_t = 20)]
    pub runs: usize,
    /// Keep the daemons' directory here instead of a temporary one.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// Clusters in the benchmark federation: the most a federation may hold.
const FED_CLUSTERS: usize = 63;
/// Changes in the timed batch.
const CHANGES: usize = 1000;

/// Runs the benchmark and prints its table.
pub async fn run(args: &DbdBenchArgs) -> Result<(), BenchError> {
    let (dir, _tmp) = work_dir(args.dir.as_ref())?;
    let up_args = UpArgs {
        dbd_only: true,
        detach: true,
        storage: args.storage.clone(),
        clusters: Some("bench".to_string()),
        ..UpArgs::new(dir.clone())
    };
    up::up(&up_args).await?;
    let result = measure(&dir, args.runs).await;
    up::down(&DownArgs { dir }).await?;
    let figures = result?;
    println!("{}", report::render(&figures));
    Ok(())
}

async fn measure(dir: &Path, runs: usize) -> Result<Vec<Figure>, BenchError> {
    let conf = SlurmConf::read(&dir.join("bench").join("slurm.conf"))?;
    let mut client = conf.connect_dbd().await?;

    let started = Instant::now();
    let done = apply_changes(&mut client).await?;
    let changes = started.elapsed();

    let sacctmgr = process::binary(&process::bin_dir()?, "sacctmgr")?;
    let slurm_conf = conf.path.clone();
    let show_cluster = median_run(
        &sacctmgr,
        &slurm_conf,
        &["show", "cluster", "withfed"],
        runs,
    )?;
    let show_fed = median_run(&sacctmgr, &slurm_conf, &["show", "federation"], runs)?;
    Ok(vec![
        Figure {
            name: format!("{done} cluster/account/user changes via RPC"),
            target: Duration::from_secs(2),
            measured: changes,
            detail: "sequential, one client, committed".to_string(),
        },
        Figure {
            name: format!("sacctmgr show cluster withfed ({FED_CLUSTERS} clusters)"),
            target: Duration::from_millis(20),
            measured: show_cluster,
            detail: format!("median of {runs}, process start included"),
        },
        Figure {
            name: format!("sacctmgr show federation ({FED_CLUSTERS} clusters)"),
            target: Duration::from_millis(20),
            measured: show_fed,
            detail: format!("median of {runs}, process start included"),
        },
    ])
}

/// The timed mix: 63 clusters, a federation of them, accounts, users with associations on
/// every cluster, and feature edits. Returns how many changes were made.
async fn apply_changes(client: &mut DbdClient) -> Result<usize, BenchError> {
    let names: Vec<String> = (0..FED_CLUSTERS).map(|i| format!("c{i:02}")).collect();
    let mut count = 0;
    for name in &names {
        let req = AddClustersRequest {
            names: vec![name.clone()],
            commit: true,
            ..Default::default()
        };
        rpc("add cluster", client.add_clusters(req).await)?;
        count += 1;
    }
    let req = AddFederationsRequest {
        names: vec!["benchfed".to_string()],
        clusters: names.clone(),
        commit: true,
    };
    rpc("add federation", client.add_federations(req).await)?;
    count += 1;
    let per_kind = (CHANGES - count) * 2 / 5;
    for i in 0..per_kind {
        let req = AddAccountsRequest {
            names: vec![format!("acct{i}")],
            description: Some(format!("account {i}")),
            organization: Some("bench".to_string()),
            commit: true,
            ..Default::default()
        };
        rpc("add account", client.add_accounts(req).await)?;
        let req = AddUsersRequest {
            names: vec![format!("user{i}")],
            accounts: vec![format!("acct{i}")],
            commit: true,
            ..Default::default()
        };
        rpc("add user", client.add_users(req).await)?;
        count += 2;
    }
    let mut i = 0;
    while count < CHANGES {
        let req = ModifyClustersRequest {
            names: vec![names[i % names.len()].clone()],
            features: Some(ListEdit {
                op: ListOp::Set as i32,
                items: vec![format!("feat{i}")],
            }),
            commit: true,
            ..Default::default()
        };
        rpc("modify cluster", client.modify_clusters(req).await)?;
        count += 1;
        i += 1;
    }
    Ok(count)
}

fn rpc<T>(what: &str, r: Result<tonic::Response<T>, tonic::Status>) -> Result<T, BenchError> {
    r.map(tonic::Response::into_inner)
        .map_err(|status| BenchError::Rpc {
            what: what.to_string(),
            status: Box::new(status),
        })
}

/// Runs `program args` `runs` times with `SLURM_CONF` set; the median wall time of a run.
fn median_run(
    program: &Path,
    slurm_conf: &Path,
    args: &[&str],
    runs: usize,
) -> Result<Duration, BenchError> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let out = std::process::Command::new(program)
            .args(args)
            .env("SLURM_CONF", slurm_conf)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| BenchError::Command {
                command: format!("sacctmgr {}", args.join(" ")),
                detail: e.to_string(),
            })?;
        samples.push(started.elapsed());
        if !out.status.success() {
            return Err(BenchError::Command {
                command: format!("sacctmgr {}", args.join(" ")),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
    }
    Ok(report::median(&mut samples))
}
