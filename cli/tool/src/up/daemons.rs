//! The daemons of a local federation: what each runs, and the names of its pid and log files
//! (`dbd`, `ctld-<cluster>`, `noded-<cluster>-<node>`), from which `down` also tells what a
//! pid file stands for.

use std::path::Path;

use super::cluster_conf::ClusterConf;
use super::layout::Layout;

/// The three kinds of daemons, in the order `down` stops them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A node daemon (stopped first: its jobs keep running and are adopted at the next start).
    Noded,
    /// A cluster's controller.
    Ctld,
    /// The accounting daemon (stopped last: the controllers ship their records to it).
    Dbd,
}

impl Kind {
    /// Its executable, next to `sluice`.
    pub fn program(self) -> &'static str {
        match self {
            Kind::Dbd => "sluice-dbd",
            Kind::Ctld => "sluice-ctld",
            Kind::Noded => "sluice-noded",
        }
    }

    /// The kind of the daemon whose pid file is named `id`.pid.
    pub fn of_id(id: &str) -> Option<Kind> {
        if id == "dbd" {
            Some(Kind::Dbd)
        } else if id.starts_with("ctld-") {
            Some(Kind::Ctld)
        } else if id.starts_with("noded-") {
            Some(Kind::Noded)
        } else {
            None
        }
    }
}

/// One daemon to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Daemon {
    /// What it is.
    pub kind: Kind,
    /// The stem of its pid and log files.
    pub id: String,
    /// Its arguments (always in the foreground, `-D`: `up` watches it).
    pub args: Vec<String>,
    /// Where it listens, for the status table.
    pub address: String,
    /// How the status table names it: `sluice-dbd`, `sluice-ctld (cluster c)`, `sluice-noded (node n)`.
    pub label: String,
}

impl Daemon {
    /// The accounting daemon, listening where the first cluster's configuration says.
    pub fn dbd(layout: &Layout, address: String) -> Self {
        Self {
            kind: Kind::Dbd,
            id: "dbd".to_string(),
            args: foreground(&layout.slurmdbd_conf()),
            address,
            label: Kind::Dbd.program().to_string(),
        }
    }

    /// The controller of `cluster`.
    pub fn ctld(cluster: &ClusterConf) -> Self {
        Self {
            kind: Kind::Ctld,
            id: format!("ctld-{}", cluster.name),
            args: foreground(&cluster.path),
            address: format!("{}:{}", cluster.ctld_host, cluster.ctld_port),
            label: format!("{} (cluster {})", Kind::Ctld.program(), cluster.name),
        }
    }

    /// The node daemon of `node` in `cluster`, listening on `address`.
    pub fn noded(cluster: &ClusterConf, node: &str, address: String) -> Self {
        let mut args = foreground(&cluster.path);
        args.extend(["-N".to_string(), node.to_string()]);
        Self {
            kind: Kind::Noded,
            id: format!("noded-{}-{node}", cluster.name),
            args,
            address,
            label: format!("{} (node {node})", Kind::Noded.program()),
        }
    }
}

fn foreground(conf: &Path) -> Vec<String> {
    vec!["-D".into(), "-f".into(), conf.display().to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_file_names_tell_the_kind_and_kinds_sort_in_stop_order() {
        let layout = Layout::new(Path::new("/f")).unwrap();
        let cluster = ClusterConf {
            path: "/f/c/slurm.conf".into(),
            name: "c".into(),
            ctld_host: "127.0.0.1".into(),
            ctld_port: 1,
            dbd_host: "127.0.0.1".into(),
            dbd_port: 2,
            nodes: vec!["cn1".into()],
            node_addresses: vec!["127.0.0.1:3".into()],
            cloud_nodes: Vec::new(),
        };
        let all = [
            Daemon::dbd(&layout, "127.0.0.1:2".into()),
            Daemon::ctld(&cluster),
            Daemon::noded(&cluster, "cn1", "127.0.0.1:3".into()),
        ];
        for d in &all {
            assert_eq!(Kind::of_id(&d.id), Some(d.kind), "{}", d.id);
        }
        assert_eq!(all[2].args, ["-D", "-f", "/f/c/slurm.conf", "-N", "cn1"]);
        assert_eq!(Kind::of_id("other"), None);
        let mut kinds = [Kind::Dbd, Kind::Noded, Kind::Ctld];
        kinds.sort();
        assert_eq!(kinds, [Kind::Noded, Kind::Ctld, Kind::Dbd]);
    }
}
