//! `sinfo`: partitions and nodes, with Slurm's views (partition, `-N`, `-R`, `-s`, `-l`), `-o`
//! fields, state names with suffixes, and grouping of alike nodes.
//!
//! * [`args`]: options and built-in formats; [`fields`]: the `-o` fields and node groups.
//!
//! `--federation` shows every member of the local cluster's federation in one table with a
//! CLUSTER column; `-M a,b|all` shows each named cluster under its own `CLUSTER: name` line.

pub mod args;
pub mod fields;

#[cfg(test)]
mod fed_render_tests;
#[cfg(test)]
mod render_tests;

use std::io::Write;

use sluice_vocab::NodeState;
use sluice_wire::proto::{ListNodesRequest, ListPartitionsRequest, NodeInfo, PartitionInfo};

use crate::cmdutil;
use crate::multicluster::{self, Selection};
use crate::output::percent::{self, FieldSpec, pad};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use crate::timefmt::{self, Zone};
use args::{Invocation, SinfoOpts, View};
use fields::{Field, Group};

const USAGE: &str = "Usage: sinfo [-adelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n\
              [-S fields] [-o format] [-O Format] [--federation|--local|--cluster=cluster_name]\n";

/// The smallest width of a `%#P` / `%#N` column.
const MIN_AUTO_WIDTH: usize = 9;

/// Runs the `sinfo` binary.
pub fn main() -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(&cmdutil::args(), &mut stdout.lock(), &mut stderr.lock())
}

/// Runs sinfo with `args` against the controller named by `SLURM_CONF`; returns the exit code.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let opts = match args::parse(args, &env) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => {
            let _ = out.write_all(USAGE.as_bytes());
            return 0;
        }
        Ok(Invocation::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    let Some(rt) = cmdutil::runtime("sinfo", err) else {
        return 1;
    };
    let conf = match SlurmConf::from_env() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "sinfo: error: {e}");
            return 1;
        }
    };
    let (zone, now) = (Zone::Local, cmdutil::now());
    let show =
        |r: Result<Vec<ClusterInfo>, String>, out: &mut dyn Write, err: &mut dyn Write| match r {
            Ok(clusters) => {
                let (text, warnings) = render_clusters(&clusters, &opts, zone, now);
                let _ = err.write_all(warnings.as_bytes());
                let _ = out.write_all(text.as_bytes());
                0
            }
            Err(text) => {
                let _ = writeln!(err, "{text}");
                1
            }
        };
    match &opts.view {
        View::Local => show(rt.block_on(fetch_local(&conf)), out, err),
        View::Federation => show(rt.block_on(fetch_federation(&conf)), out, err),
        View::Clusters(list) => {
            let members = match rt.block_on(multicluster::resolve(&conf, &Selection::parse(list))) {
                Ok(m) => m,
                Err(e) => {
                    e.print("sinfo", err);
                    return 1;
                }
            };
            let mut code = 0;
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    let _ = writeln!(out);
                }
                let _ = writeln!(out, "CLUSTER: {}", m.name);
                let fetched = rt.block_on(async {
                    let client = multicluster::connect(&conf, m)
                        .await
                        .map_err(|_| load_failure())?;
                    fetch_from(client, m.name.clone()).await
                });
                code |= show(fetched.map(|c| vec![c]), out, err);
            }
            code
        }
    }
}

/// One cluster's partitions and nodes (`name` is "" for the plain local view).
#[derive(Debug, Clone, Default)]
pub struct ClusterInfo {
    /// The cluster's name (the `%V` field).
    pub name: String,
    /// Its nodes.
    pub nodes: Vec<NodeInfo>,
    /// Its partitions.
    pub parts: Vec<PartitionInfo>,
}

/// The text for a controller that cannot be reached (sinfo's first call names it).
fn load_failure() -> String {
    format!("slurm_load_partitions: {CONNECT_FAILURE}")
}

async fn fetch_local(conf: &SlurmConf) -> Result<Vec<ClusterInfo>, String> {
    let client = conf.connect_ctld().await.map_err(|e| match e {
        CliError::Connect { .. } => load_failure(),
        other => format!("sinfo: error: {other}"),
    })?;
    let name = conf.cluster_name.clone().unwrap_or_default();
    Ok(vec![fetch_from(client, name).await?])
}

/// Every reachable member of the local federation (the local view outside one, as Slurm).
async fn fetch_federation(conf: &SlurmConf) -> Result<Vec<ClusterInfo>, String> {
    let Ok(Some((_, members))) = multicluster::federation(conf).await else {
        return fetch_local(conf).await;
    };
    let mut all = Vec::new();
    for m in &members {
        // A member that does not answer is left out, as Slurm does.
        let Ok(client) = multicluster::connect(conf, m).await else {
            continue;
        };
        if let Ok(c) = fetch_from(client, m.name.clone()).await {
            all.push(c);
        }
    }
    if all.is_empty() {
        return Err(load_failure());
    }
    Ok(all)
}

async fn fetch_from(
    mut client: sluice_wire::client::CtldClient,
    name: String,
) -> Result<ClusterInfo, String> {
    let parts = client
        .list_partitions(ListPartitionsRequest::default())
        .await
        .map_err(|s| format!("slurm_load_partitions: {}", status_text(&s, Asker::Views)))?;
    let nodes = client
        .list_nodes(ListNodesRequest::default())
        .await
        .map_err(|s| format!("slurm_load_node: {}", status_text(&s, Asker::Views)))?;
    Ok(ClusterInfo {
        name,
        nodes: nodes.into_inner().nodes,
        parts: parts.into_inner().partitions,
    })
}

/// Whether `n` passes the node filters (`-n -t -r -d`).
fn node_selected(n: &NodeInfo, o: &SinfoOpts) -> bool {
    if o.nodes.as_ref().is_some_and(|hl| !hl.contains(&n.name)) {
        return false;
    }
    if (o.responding && n.not_responding) || (o.dead && !n.not_responding) {
        return false;
    }
    let Some(states) = &o.states else {
        return true;
    };
    let base = NodeState::parse(&n.state);
    let shown = fields::node_state(n);
    states.iter().any(|s| match s.as_str() {
        "drain" => n.drain,
        "alloc" | "allocated" => base == Some(NodeState::Allocated),
        "no_respond" => n.not_responding,
        "responding" => !n.not_responding,
        other => NodeState::parse(other) == Some(shown),
    })
}

/// The groups to print, in Slurm's order.
fn groups<'a>(
    nodes: &'a [NodeInfo],
    parts: &'a [PartitionInfo],
    o: &SinfoOpts,
    specs: &[(FieldSpec, Option<&'static Field>)],
    zone: Zone,
    cluster: &'a str,
) -> Vec<Group<'a>> {
    let wanted = |p: &PartitionInfo| o.partitions.as_ref().is_none_or(|l| l.contains(&p.name));
    let by_name = |name: &str| nodes.iter().find(|n| n.name == name);
    let mut records: Vec<Group<'a>> = Vec::new();
    if o.node_view || o.reasons {
        let mut sorted: Vec<&NodeInfo> = nodes.iter().filter(|n| node_selected(n, o)).collect();
        sorted.sort_by(|a, b| natural(&a.name, &b.name));
        for n in sorted {
            let mine: Vec<&PartitionInfo> = parts
                .iter()
                .filter(|p| {
                    wanted(p) && (p.nodes.contains(&n.name) || n.partitions.contains(&p.name))
                })
                .collect();
            if o.reasons || (mine.is_empty() && o.partitions.is_none()) {
                records.push(Group {
                    part: mine.first().copied().filter(|_| !o.reasons),
                    nodes: vec![n],
                    cluster,
                });
            }
            if !o.reasons {
                records.extend(mine.into_iter().map(|p| Group {
                    part: Some(p),
                    nodes: vec![n],
                    cluster,
                }));
            }
        }
        if o.node_view {
            return records;
        }
    } else {
        for p in parts.iter().filter(|p| wanted(p)) {
            for n in p.nodes.iter().filter_map(|name| by_name(name)) {
                if node_selected(n, o) {
                    records.push(Group {
                        part: Some(p),
                        nodes: vec![n],
                        cluster,
                    });
                }
            }
        }
    }
    // Merge records that look the same in every non-aggregate field.
    let key = |g: &Group| -> Vec<String> {
        let mut k = vec![g.part.map_or(String::new(), |p| p.name.clone())];
        k.extend(
            specs
                .iter()
                .filter_map(|(_, f)| f.filter(|f| !f.aggregate))
                .map(|f| (f.value)(g, zone)),
        );
        k
    };
    let mut merged: Vec<(Vec<String>, Group<'a>)> = Vec::new();
    for r in records {
        let k = key(&r);
        match merged.iter_mut().find(|(mk, _)| *mk == k) {
            Some((_, g)) => g.nodes.extend(r.nodes),
            None => merged.push((k, r)),
        }
    }
    let mut out: Vec<Group<'a>> = merged.into_iter().map(|(_, g)| g).collect();
    if !o.reasons {
        let part_pos = |g: &Group| {
            g.part
                .and_then(|p| parts.iter().position(|q| q.name == p.name))
        };
        out.sort_by(|a, b| {
            part_pos(a).cmp(&part_pos(b)).then_with(|| {
                let rank = |g: &Group| g.nodes.first().map_or(0, |n| fields::state_rank(n));
                rank(b).cmp(&rank(a))
            })
        });
    }
    out
}

/// Compares host names with embedded numbers numerically (`n2` before `n10`).
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, num) = s.split_at(s.len() - digits);
        (
            head.to_string(),
            num.parse::<u64>().unwrap_or(0),
            s.to_string(),
        )
    };
    split(a).cmp(&split(b))
}

/// Renders what sinfo prints for one cluster, and its warnings for stderr.
pub fn render(
    nodes: &[NodeInfo],
    parts: &[PartitionInfo],
    o: &SinfoOpts,
    zone: Zone,
    now: i64,
) -> (String, String) {
    let one = ClusterInfo {
        name: String::new(),
        nodes: nodes.to_vec(),
        parts: parts.to_vec(),
    };
    render_clusters(std::slice::from_ref(&one), o, zone, now)
}

/// Renders several clusters' partitions and nodes as one table (the federated view: each
/// cluster's lines in member order, `%V` naming the cluster).
pub fn render_clusters(
    clusters: &[ClusterInfo],
    o: &SinfoOpts,
    zone: Zone,
    now: i64,
) -> (String, String) {
    let layout = percent::parse_letters(&o.format);
    let mut warnings = String::new();
    let specs: Vec<(FieldSpec, Option<&'static Field>)> = layout
        .fields
        .into_iter()
        .map(|s| {
            let f = fields::by_letter(&s.name);
            if f.is_none() {
                warnings.push_str(&format!(
                    "sinfo: error: Invalid node format specification: {}\n",
                    s.name
                ));
            }
            (s, f)
        })
        .collect();
    let gs: Vec<Group> = clusters
        .iter()
        .flat_map(|c| groups(&c.nodes, &c.parts, o, &specs, zone, &c.name))
        .collect();
    // `%#P` / `%#N`: as wide as the widest value (at least 9).
    let specs: Vec<(FieldSpec, Option<&'static Field>)> = specs
        .into_iter()
        .map(|(mut s, f)| {
            if let (true, Some(field)) = (s.auto, f) {
                let widest = gs
                    .iter()
                    .map(|g| (field.value)(g, zone).chars().count())
                    .max();
                s.width = widest.unwrap_or(0).max(MIN_AUTO_WIDTH);
            }
            (s, f)
        })
        .collect();
    let mut text = String::new();
    if o.long {
        text.push_str(&timefmt::ctime(now, zone));
    }
    let line = |g: Option<&Group>| {
        let mut s = layout.prefix.clone();
        for (spec, f) in &specs {
            match f {
                Some(f) => {
                    let v = g.map_or_else(|| f.header.to_string(), |g| (f.value)(g, zone));
                    s.push_str(&pad(&v, spec.width, spec.right, true));
                }
                None => {
                    s.push('%');
                    s.push_str(&spec.name);
                }
            }
            s.push_str(&spec.suffix);
        }
        s.push('\n');
        s
    };
    if !o.no_header {
        text.push_str(&line(None));
    }
    for g in &gs {
        text.push_str(&line(Some(g)));
    }
    (text, warnings)
}
