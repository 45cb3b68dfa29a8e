//! What a local federation directory holds: its clusters, their nodes and ports. Chosen once,
//! when the directory is first set up (from `--clusters`, `--nodes` and free loopback ports),
//! then read back from the files every time, so an admin's edits count.

use sluice_wire::auth::Key;

use super::cloud::{self, CloudSpec};
use super::cluster_conf::{ClusterConf, ClusterSpec, NodeSpec};
use super::layout::Layout;
use super::ports::free_ports;
use super::storage::StorageSpec;
use super::{AuthMode, UpArgs, UpError};

/// Node daemons per cluster when `--nodes` is not given.
pub const DEFAULT_NODES: u32 = 2;
/// The name of the only cluster when `--clusters` is not given (or is 1).
pub const DEFAULT_CLUSTER: &str = "cluster";
/// The most clusters a federation may hold.
const MAX_CLUSTERS: usize = 63;
/// The most node daemons per cluster `up` starts on one host.
const MAX_NODES: u32 = 128;
/// Most CPUs `--cpus` gives a node (Slurm's own bound on a node's CPU count).
const MAX_CPUS: u32 = 65_535;

/// A prepared directory: every file written, read back.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The directory.
    pub layout: Layout,
    /// The key every daemon and command shares.
    pub key: Key,
    /// The clusters in order (the first is the one `env.sh` points at).
    pub clusters: Vec<ClusterConf>,
    /// Options that were ignored because the directory was already set up.
    pub notes: Vec<String>,
}

impl Plan {
    /// Where the dbd answers: as the first cluster's configuration says (as commands see it).
    pub fn dbd_address(&self) -> (String, u16) {
        match self.clusters.first() {
            Some(c) => (c.dbd_host.clone(), c.dbd_port),
            None => ("127.0.0.1".to_string(), 0),
        }
    }
}

/// Checks that munged answers on this host (at `socket`, else libmunge's default) for
/// `--auth munge`.
fn check_munged(socket: Option<&std::path::Path>) -> Result<(), UpError> {
    let munge = sluice_wire::auth::munge::Munge {
        socket: socket.map(std::path::Path::to_path_buf),
    };
    let probe = sluice_wire::auth::Binding::new(sluice_wire::auth::sack::PROBE_METHOD, b"");
    munge
        .encode(&probe, &sluice_wire::auth::token::new_nonce())
        .map(drop)
        .map_err(|e| UpError::BadOption {
            option: "--auth",
            value: "munge".to_string(),
            reason: format!("munged does not answer on this host ({e})"),
        })
}

/// The cluster names `--clusters` asks for.
pub fn cluster_names(value: Option<&str>) -> Result<Vec<String>, UpError> {
    let value = value.unwrap_or("1").trim();
    let bad = |reason: &str| UpError::BadOption {
        option: "--clusters",
        value: value.to_string(),
        reason: reason.to_string(),
    };
    if let Ok(n) = value.parse::<usize>() {
        return match n {
            0 => Err(bad("at least one cluster is needed")),
            1 => Ok(vec![DEFAULT_CLUSTER.to_string()]),
            n if n > MAX_CLUSTERS => Err(bad("a federation holds at most 63 clusters")),
            n => Ok((1..=n).map(|i| format!("{DEFAULT_CLUSTER}{i}")).collect()),
        };
    }
    let mut names: Vec<String> = Vec::new();
    for name in value.split(',').map(|n| n.trim().to_ascii_lowercase()) {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(bad(
                "cluster names start with a letter and hold letters, digits, - and _",
            ));
        }
        if names.contains(&name) {
            return Err(bad(&format!("cluster {name} is named twice")));
        }
        names.push(name);
    }
    if names.len() > MAX_CLUSTERS {
        return Err(bad("a federation holds at most 63 clusters"));
    }
    Ok(names)
}

/// Writes what is missing in the directory of `args` and reads everything back. `extra`
/// lines are appended to each cluster's `slurm.conf` when it is first written.
pub fn prepare(args: &UpArgs, extra: &[String]) -> Result<Plan, UpError> {
    prepare_with(args, extra, &mut free_ports)
}

/// Like [`prepare`], taking new ports from `ports(n)` (tests reserve theirs, so parallel
/// tests never pick the same).
pub fn prepare_with(
    args: &UpArgs,
    extra: &[String],
    ports: &mut dyn FnMut(usize) -> Result<Vec<u16>, UpError>,
) -> Result<Plan, UpError> {
    // Every option is checked before anything is created.
    let storage = StorageSpec::parse(args.storage.as_deref().unwrap_or("sqlite"))?;
    let wanted = cluster_names(args.clusters.as_deref())?;
    let nodes = args.nodes.unwrap_or(DEFAULT_NODES);
    if nodes == 0 || nodes > MAX_NODES {
        return Err(UpError::BadOption {
            option: "--nodes",
            value: nodes.to_string(),
            reason: format!("expected 1 to {MAX_NODES} node daemons per cluster"),
        });
    }
    if let Some(cpus) = args.cpus
        && !(1..=MAX_CPUS).contains(&cpus)
    {
        return Err(UpError::BadOption {
            option: "--cpus",
            value: cpus.to_string(),
            reason: format!("expected 1 to {MAX_CPUS} CPUs per node"),
        });
    }
    let cloud_nodes = args.cloud_nodes.unwrap_or(0);
    if cloud_nodes > cloud::MAX_CLOUD_NODES {
        return Err(UpError::BadOption {
            option: "--cloud-nodes",
            value: cloud_nodes.to_string(),
            reason: format!(
                "expected 0 to {} cloud nodes per cluster",
                cloud::MAX_CLOUD_NODES
            ),
        });
    }
    let suspend_time = args.suspend_time.unwrap_or(cloud::DEFAULT_SUSPEND_TIME);
    if suspend_time == 0 {
        return Err(UpError::BadOption {
            option: "--suspend-time",
            value: "0".to_string(),
            reason: "expected a number of seconds above 0".to_string(),
        });
    }
    let auth = args.auth.unwrap_or(AuthMode::Slurm);
    if args.munge_socket.is_some() && auth != AuthMode::Munge {
        return Err(UpError::BadOption {
            option: "--munge-socket",
            value: args
                .munge_socket
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            reason: "only with --auth munge".to_string(),
        });
    }
    if auth == AuthMode::Munge {
        check_munged(args.munge_socket.as_deref())?;
    }
    let auth_lines = auth.conf_lines(args.munge_socket.as_deref());
    let extra: Vec<String> = extra.iter().cloned().chain(auth_lines.clone()).collect();
    let extra = extra.as_slice();
    let layout = Layout::new(&args.dir)?;
    layout.create_dirs()?;
    let key = Key::create_if_missing(&layout.key())?;
    let mut notes = Vec::new();

    let names = match layout.read_clusters()? {
        Some(names) => {
            for (given, option) in [
                (args.clusters.is_some(), "--clusters"),
                (args.nodes.is_some(), "--nodes"),
                (args.cpus.is_some(), "--cpus"),
                (args.select.is_some(), "--select"),
                (args.cloud_nodes.is_some(), "--cloud-nodes"),
                (args.suspend_time.is_some(), "--suspend-time"),
                (args.auth.is_some(), "--auth"),
                (args.munge_socket.is_some(), "--munge-socket"),
            ] {
                if given {
                    notes.push(format!(
                        "{} exists and is kept; {option} is ignored",
                        layout.clusters_file().display()
                    ));
                }
            }
            names
        }
        None => wanted,
    };
    let new: Vec<&String> = names
        .iter()
        .filter(|n| !layout.cluster_conf(n).exists())
        .collect();
    let dbd_port = layout.dbd_port()?;
    let per_cluster = 1 + nodes as usize + cloud_nodes as usize;
    let mut ports = ports(usize::from(dbd_port.is_none()) + new.len() * per_cluster)?.into_iter();
    let mut next_port = || ports.next().ok_or_else(no_port);
    let dbd_port = match dbd_port {
        Some(p) => p,
        None => next_port()?,
    };
    if !layout.write_slurmdbd_conf(dbd_port, &storage, &current_user_name(), &auth_lines)?
        && args.storage.is_some()
    {
        notes.push(format!(
            "{} exists and is kept; --storage is ignored",
            layout.slurmdbd_conf().display()
        ));
    }
    let share = node_memory_mb(names.len() * (nodes + cloud_nodes) as usize);
    for name in &names {
        layout.create_cluster_dir(name)?;
        if !new.contains(&name) {
            continue;
        }
        let spec = ClusterSpec {
            name: name.clone(),
            dir: layout.cluster_dir(name),
            ctld_port: next_port()?,
            dbd_port,
            slurm_user: current_user_name(),
            nodes: (1..=nodes)
                .map(|i| {
                    Ok(NodeSpec {
                        name: format!("{name}n{i}"),
                        port: next_port()?,
                    })
                })
                .collect::<Result<_, UpError>>()?,
            cpus: args.cpus.unwrap_or_else(host_cpus),
            select: args.select.unwrap_or_default(),
            real_memory_mb: share,
            cloud: match cloud_nodes {
                0 => None,
                n => Some(CloudSpec {
                    nodes: (1..=n)
                        .map(|i| {
                            Ok(NodeSpec {
                                name: cloud::node_name(i),
                                port: next_port()?,
                            })
                        })
                        .collect::<Result<_, UpError>>()?,
                    suspend_time,
                    dir: layout.cluster_dir(name),
                }),
            },
        };
        spec.write(&layout.cluster_conf(name), extra)?;
    }
    layout.write_clusters(&names)?;
    let clusters = names
        .iter()
        .map(|n| ClusterConf::read(&layout.cluster_conf(n)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        layout,
        key,
        clusters,
        notes,
    })
}

fn no_port() -> UpError {
    UpError::NoPort {
        source: std::io::Error::other("ran out of ports"),
    }
}

/// The host's CPUs: each local node offers all of them.
fn host_cpus() -> u32 {
    std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
        .unwrap_or(1)
}

/// Each of `nodes` local nodes gets an equal share of the host's memory (1 GB when unknown).
fn node_memory_mb(nodes: usize) -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(1024, |kb| kb / 1024);
    (total / nodes.max(1) as u64).max(1)
}

/// The user running `sluice up`: SlurmUser of the local daemons, so that user administers them.
pub fn current_user_name() -> String {
    let uid = nix::unistd::getuid();
    nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| uid.as_raw().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clusters_are_a_count_or_names() {
        assert_eq!(cluster_names(None).unwrap(), ["cluster"]);
        assert_eq!(cluster_names(Some("1")).unwrap(), ["cluster"]);
        assert_eq!(
            cluster_names(Some("3")).unwrap(),
            ["cluster1", "cluster2", "cluster3"]
        );
        assert_eq!(
            cluster_names(Some("Alpha, beta")).unwrap(),
            ["alpha", "beta"]
        );
        for bad in ["0", "64", "a,a", "a b", "1x", "", "a,,b"] {
            let e = cluster_names(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("bad --clusters"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_directory_is_planned_once_then_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let mut args = UpArgs::new(tmp.path().join("fed"));
        args.clusters = Some("a,b".into());
        args.nodes = Some(3);
        args.cpus = Some(8);
        args.select = Some(super::super::SelectMode::ConsTres);
        let plan = prepare(&args, &[]).unwrap();
        assert!(plan.notes.is_empty(), "{:?}", plan.notes);
        let names: Vec<&str> = plan.clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(plan.clusters[1].nodes, ["bn1", "bn2", "bn3"]);
        let (_, dbd_port) = plan.dbd_address();
        let mut ports = vec![dbd_port];
        for c in &plan.clusters {
            assert_eq!(c.dbd_port, dbd_port);
            ports.push(c.ctld_port);
            let (conf, _) = sluice_vocab::cluster_conf::CtldConf::load(&c.path).unwrap();
            assert!(conf.nodes.iter().all(|n| n.cpus == 8), "--cpus 8");
            let text = std::fs::read_to_string(&c.path).unwrap();
            assert!(
                text.contains("\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"),
                "--select cons_tres: {text}"
            );
            ports.extend(conf.nodes.iter().map(|n| n.port));
        }
        let count = ports.len();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), count, "every daemon has its own port");
        assert_eq!(count, 1 + 2 * 4);

        // An admin edit and the options of a second run: the files win.
        let conf_b = plan.layout.cluster_conf("b");
        let edited = std::fs::read_to_string(&conf_b).unwrap() + "# edited\n";
        std::fs::write(&conf_b, &edited).unwrap();
        args.clusters = Some("x".into());
        args.nodes = None;
        args.cpus = Some(4);
        args.select = Some(super::super::SelectMode::Linear);
        let again = prepare(&args, &[]).unwrap();
        assert_eq!(again.clusters, plan.clusters);
        assert_eq!(again.notes.len(), 3, "{:?}", again.notes);
        assert!(again.notes[0].contains("--clusters is ignored"));
        assert!(again.notes[1].contains("--cpus is ignored"));
        assert!(again.notes[2].contains("--select is ignored"));
        assert_eq!(std::fs::read_to_string(&conf_b).unwrap(), edited);
    }

    #[test]
    fn bad_options_create_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let mut args = UpArgs::new(tmp.path().join("fed"));
        args.nodes = Some(0);
        assert!(
            prepare(&args, &[])
                .unwrap_err()
                .to_string()
                .contains("--nodes")
        );
        args.nodes = None;
        for cpus in [0, MAX_CPUS + 1] {
            args.cpus = Some(cpus);
            let err = prepare(&args, &[]).unwrap_err().to_string();
            assert!(err.contains("--cpus"), "{err}");
        }
        args.cpus = None;
        args.clusters = Some("a/b".into());
        assert!(prepare(&args, &[]).is_err());
        assert!(!tmp.path().join("fed").exists());
    }
}
