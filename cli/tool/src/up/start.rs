//! The `up` sequence: prepare the directory, then start what is not running, each daemon
//! waited for before what depends on it: the dbd (then the clusters and the federation are
//! registered in it), each controller, then its node daemons until all have registered.

use std::path::PathBuf;

use sluice_vocab::node_states::NodeState;
use sluice_wire::proto::NodeInfo;

use super::daemons::Daemon;
use super::plan::{self, Plan};
use super::status::{self, Row, Summary};
use super::stop::{self, Started};
use super::{UpArgs, UpError, cloud, ctld, dbd, process};

/// `sluice up`: see the module documentation. Stays in the foreground until Ctrl-C/SIGTERM
/// unless `--detach`.
pub async fn up(args: &UpArgs) -> Result<(), UpError> {
    up_with(args, &[]).await
}

/// Like [`up`], appending `extra` lines to each cluster's `slurm.conf` when it is first
/// written (tests use it for short timers).
pub async fn up_with(args: &UpArgs, extra: &[String]) -> Result<(), UpError> {
    let plan = plan::prepare(args, extra)?;
    for note in &plan.notes {
        eprintln!("note: {note}");
    }
    let bin_dir = process::bin_dir()?;
    super::scripts::install(&plan.layout, &bin_dir)?;
    if let Some(first) = plan.clusters.first() {
        plan.layout.write_env_sh(&bin_dir, &first.name)?;
    }
    for cluster in plan.clusters.iter().filter(|c| !c.cloud_nodes.is_empty()) {
        cloud::write_programs(&plan.layout, cluster, &bin_dir)?;
    }
    // Installed before anything starts, so a Ctrl-C during start-up still stops what started.
    let shutdown = match args.detach {
        true => None,
        false => Some(signals()?),
    };
    let mut run = Run {
        bin_dir,
        started: Vec::new(),
        rows: Vec::new(),
    };
    if let Err(e) = bring_up(&plan, args, &mut run).await {
        stop::stop_started(&mut run.started).await;
        return Err(e);
    }
    let clusters: Vec<(String, usize)> = plan
        .clusters
        .iter()
        .map(|c| (c.name.clone(), c.nodes.len()))
        .collect();
    let summary = Summary {
        dir: &plan.layout.dir,
        env_sh: &plan.layout.env_sh(),
        clusters: &clusters,
        federation: args.federation.as_deref(),
        dbd_only: args.dbd_only,
        detached: args.detach,
    };
    print!("{}", status::report(&summary, &run.rows));

    let Some(shutdown) = shutdown else {
        return Ok(());
    };
    if run.started.is_empty() {
        println!("Nothing new was started, so there is nothing to watch here.");
        return Ok(());
    }
    // Cloud node daemons (started by the ResumeProgram) go first, as `down` stops them.
    let (layout, clusters) = (plan.layout.clone(), plan.clusters.clone());
    let shutdown = async move {
        shutdown.await;
        cloud::stop_resumed(&layout, &clusters).await;
    };
    stop::foreground(run.started, shutdown).await
}

/// What this run started and what it shows.
struct Run {
    bin_dir: PathBuf,
    started: Vec<Started>,
    rows: Vec<Row>,
}

impl Run {
    /// Starts `daemon` unless its pid file names a live one; returns the index of the newly
    /// started one in `started`.
    fn ensure(&mut self, plan: &Plan, daemon: Daemon) -> Result<Option<usize>, UpError> {
        let layout = &plan.layout;
        let program = daemon.kind.program();
        let pid_file = layout.pid_file(&daemon.id);
        let log = layout.log_file(&daemon.id);
        let component = daemon.label.clone();
        // Relative to the directory the headline names: the table stays narrow.
        let shown_log = log
            .strip_prefix(&layout.dir)
            .unwrap_or(&log)
            .display()
            .to_string();
        if let Some(pid) = process::live_pid(&pid_file, program) {
            self.rows.push(Row {
                component,
                pid,
                address: daemon.address,
                state: String::new(),
                log: shown_log,
                started: false,
            });
            return Ok(None);
        }
        let path = process::binary(&self.bin_dir, program)?;
        let args: Vec<&str> = daemon.args.iter().map(String::as_str).collect();
        let child = process::spawn(&path, &args, &log)?;
        let pid = child.id().map(|p| p as i32).unwrap_or_default();
        let write = std::fs::write(&pid_file, format!("{pid}\n"));
        self.rows.push(Row {
            component,
            pid,
            address: daemon.address.clone(),
            state: String::new(),
            log: shown_log,
            started: true,
        });
        self.started.push(Started {
            daemon,
            child,
            pid,
            log,
            pid_file: pid_file.clone(),
        });
        write.map_err(|source| UpError::Write {
            path: pid_file,
            source,
        })?;
        Ok(Some(self.started.len() - 1))
    }

    fn child(&mut self, index: Option<usize>) -> Option<&mut tokio::process::Child> {
        index
            .and_then(|i| self.started.get_mut(i))
            .map(|s| &mut s.child)
    }

    /// Shows each node's state (as sinfo would) in its row.
    fn show_nodes(&mut self, nodes: &[NodeInfo]) {
        for node in nodes {
            let state = NodeState::parse(&node.state).map_or(node.state.to_lowercase(), |b| {
                NodeState::combine(b, node.drain, node.completing, node.invalid)
                    .short_name()
                    .to_string()
            });
            let label = format!("sluice-noded (node {})", node.name);
            if let Some(row) = self.rows.iter_mut().find(|r| r.component == label) {
                row.state = state;
            }
        }
    }
}

async fn bring_up(plan: &Plan, args: &UpArgs, run: &mut Run) -> Result<(), UpError> {
    let layout = &plan.layout;
    let (dbd_host, dbd_port) = plan.dbd_address();
    let dbd = Daemon::dbd(layout, format!("{dbd_host}:{dbd_port}"));
    let log = layout.log_file(&dbd.id);
    let index = run.ensure(plan, dbd)?;
    let mut client = dbd::wait_ready(
        &dbd_host,
        dbd_port,
        &plan.key,
        run.child(index),
        &log,
        dbd::READY_TIMEOUT,
    )
    .await?;
    let names: Vec<String> = plan.clusters.iter().map(|c| c.name.clone()).collect();
    dbd::register_clusters(&mut client, &names).await?;
    if let Some(fed) = &args.federation {
        dbd::register_federation(&mut client, fed, &names).await?;
    }
    if args.dbd_only {
        return Ok(());
    }
    for cluster in &plan.clusters {
        let daemon = Daemon::ctld(cluster);
        let log = layout.log_file(&daemon.id);
        let index = run.ensure(plan, daemon)?;
        let mut client = ctld::wait_ready(
            cluster,
            &plan.key,
            run.child(index),
            &log,
            ctld::READY_TIMEOUT,
        )
        .await?;
        let first_node = run.started.len();
        // A node daemon started now must register anew: the registration of one killed
        // before (still listed) says nothing about whether this one came up.
        let mut fresh = ctld::Fresh::default();
        for (node, address) in cluster.nodes.iter().zip(&cluster.node_addresses) {
            let started = run.ensure(plan, Daemon::noded(cluster, node, address.clone()))?;
            if let Some(s) = started.and_then(|i| run.started.get(i)) {
                fresh
                    .0
                    .push((node.clone(), u32::try_from(s.pid).unwrap_or(0)));
            }
        }
        let nodes = ctld::wait_nodes(
            &mut client,
            cluster,
            (&mut run.started[first_node..], &fresh),
            &layout.log_dir(),
            ctld::NODES_TIMEOUT,
        )
        .await?;
        run.show_nodes(&nodes);
    }
    Ok(())
}

/// Completes on the first SIGINT or SIGTERM; the handlers are installed immediately.
fn signals() -> Result<impl std::future::Future<Output = ()>, UpError> {
    use tokio::signal::unix::{SignalKind, signal};
    let err = |source| UpError::Signals { source };
    let mut term = signal(SignalKind::terminate()).map_err(err)?;
    let mut int = signal(SignalKind::interrupt()).map_err(err)?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}
