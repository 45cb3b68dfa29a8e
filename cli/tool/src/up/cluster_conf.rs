//! Each cluster's `slurm.conf`: written once by `sluice up` for a controller and node daemons
//! on loopback, and read back (as an admin may have edited it) to know what to start.

use std::path::{Path, PathBuf};

use sluice_vocab::cluster_conf::{CtldConf, NodeConfState};

use super::UpError;
use super::cloud::CloudSpec;
use super::layout::{HEADER, write_new};

/// `KillWait` of a local cluster: short, so cancelled and timed-out jobs end quickly.
pub const KILL_WAIT: u32 = 5;
/// `MinJobAge` of a local cluster: finished jobs stay visible in squeue/scontrol this long.
pub const MIN_JOB_AGE: u32 = 300;

/// One node daemon of a new cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// Its node name.
    pub name: String,
    /// The loopback port it listens on.
    pub port: u16,
}

/// What a new cluster's `slurm.conf` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// `ClusterName`.
    pub name: String,
    /// The cluster's own directory (state, spool).
    pub dir: PathBuf,
    /// `SlurmctldPort`.
    pub ctld_port: u16,
    /// `AccountingStoragePort` (the dbd on 127.0.0.1).
    pub dbd_port: u16,
    /// `SlurmUser`: the controller's administrator.
    pub slurm_user: String,
    /// The node daemons.
    pub nodes: Vec<NodeSpec>,
    /// `CPUs` of every node.
    pub cpus: u32,
    /// `RealMemory` of every node, in MB.
    pub real_memory_mb: u64,
    /// How nodes are allocated (`SelectType`).
    pub select: super::SelectMode,
    /// Cloud nodes and their partition (`--cloud-nodes`).
    pub cloud: Option<CloudSpec>,
}

impl ClusterSpec {
    /// The lines of its `slurm.conf`, `extra` appended (a later top-level key wins).
    pub fn lines(&self, extra: &[String]) -> Vec<String> {
        let dir = self.dir.display();
        let mut lines = vec![
            HEADER.to_string(),
            format!("ClusterName={}", self.name),
            "SlurmctldHost=localhost(127.0.0.1)".into(),
            format!("SlurmctldPort={}", self.ctld_port),
            format!("SlurmUser={}", self.slurm_user),
            "AccountingStorageType=accounting_storage/slurmdbd".into(),
            "AccountingStorageHost=127.0.0.1".into(),
            format!("AccountingStoragePort={}", self.dbd_port),
            format!("StateSaveLocation={dir}/state"),
            format!("SlurmdSpoolDir={dir}/spool/%n"),
            format!("MinJobAge={MIN_JOB_AGE}"),
            format!("KillWait={KILL_WAIT}"),
            // A node that was DOWN (e.g. stopped longer than SlurmdTimeout) returns when it registers.
            "ReturnToService=2".into(),
            format!(
                "NodeName=DEFAULT CPUs={} RealMemory={}",
                self.cpus, self.real_memory_mb
            ),
        ];
        lines.extend(
            self.nodes
                .iter()
                .map(|n| format!("NodeName={} NodeAddr=127.0.0.1 Port={}", n.name, n.port)),
        );
        // The default partition holds the nodes that are always up, so that only jobs sent
        // to the cloud partition resume cloud nodes.
        let debug_nodes = match &self.cloud {
            None => "ALL".to_string(),
            Some(_) => {
                let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
                sluice_vocab::hostlist::compress(&names)
            }
        };
        lines.push(format!(
            "PartitionName=debug Nodes={debug_nodes} Default=YES MaxTime=INFINITE State=UP"
        ));
        lines.extend(self.select.conf_lines());
        if let Some(cloud) = &self.cloud {
            lines.extend(cloud.lines());
        }
        lines.extend(extra.iter().cloned());
        lines
    }

    /// Writes it to `path` unless that file exists. Returns whether it wrote.
    pub fn write(&self, path: &Path, extra: &[String]) -> Result<bool, UpError> {
        write_new(path, &self.lines(extra), 0o644)
    }
}

/// What `up` needs from a cluster's `slurm.conf` (as written, or as an admin edited it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConf {
    /// The file.
    pub path: PathBuf,
    /// `ClusterName`.
    pub name: String,
    /// Where the controller listens: `SlurmctldHost`'s address and `SlurmctldPort`.
    pub ctld_host: String,
    /// `SlurmctldPort`.
    pub ctld_port: u16,
    /// `AccountingStorageHost`, where the controller and commands find the dbd.
    pub dbd_host: String,
    /// `AccountingStoragePort`.
    pub dbd_port: u16,
    /// Its nodes that `up` starts (all but the cloud nodes), in file order.
    pub nodes: Vec<String>,
    /// Where each node's daemon listens (`NodeAddr:Port`), in the same order.
    pub node_addresses: Vec<String>,
    /// Its cloud nodes (`State=CLOUD`): started by its ResumeProgram, not by `up`.
    pub cloud_nodes: Vec<String>,
}

impl ClusterConf {
    /// Reads `path` with the reader the controller uses, so what the controller would refuse
    /// is refused here, before anything starts.
    pub fn read(path: &Path) -> Result<Self, UpError> {
        let (conf, _warnings) = CtldConf::load(path)?;
        let ctld_host = conf
            .ctld_hosts
            .first()
            .map_or("localhost".to_string(), |h| {
                h.addr.clone().unwrap_or_else(|| h.name.clone())
            });
        let (cloud, nodes): (Vec<_>, Vec<_>) = conf
            .nodes
            .into_iter()
            .partition(|n| n.state == NodeConfState::Cloud);
        Ok(Self {
            path: path.to_path_buf(),
            name: conf.cluster_name,
            ctld_host,
            ctld_port: conf.ctld_port,
            dbd_host: conf
                .accounting_storage_host
                .unwrap_or_else(|| "localhost".to_string()),
            dbd_port: conf.accounting_storage_port,
            node_addresses: nodes
                .iter()
                .map(|n| format!("{}:{}", n.addr, n.port))
                .collect(),
            nodes: nodes.into_iter().map(|n| n.name).collect(),
            cloud_nodes: cloud.into_iter().map(|n| n.name).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path) -> ClusterSpec {
        ClusterSpec {
            name: "alpha".into(),
            dir: dir.join("alpha"),
            ctld_port: 7001,
            dbd_port: 7000,
            slurm_user: "root".into(),
            nodes: vec![
                NodeSpec {
                    name: "alphan1".into(),
                    port: 7002,
                },
                NodeSpec {
                    name: "alphan2".into(),
                    port: 7003,
                },
            ],
            cpus: 4,
            select: super::super::SelectMode::default(),
            real_memory_mb: 2000,
            cloud: None,
        }
    }

    #[test]
    fn a_written_conf_reads_back_as_the_controller_reads_it() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("slurm.conf");
        let spec = spec(tmp.path());
        assert!(spec.write(&path, &["KillWait=1".to_string()]).unwrap());
        assert!(!spec.write(&path, &[]).unwrap(), "an existing file is kept");

        let conf = ClusterConf::read(&path).unwrap();
        assert_eq!(conf.name, "alpha");
        assert_eq!(
            (conf.ctld_host.as_str(), conf.ctld_port),
            ("127.0.0.1", 7001)
        );
        assert_eq!((conf.dbd_host.as_str(), conf.dbd_port), ("127.0.0.1", 7000));
        assert_eq!(conf.nodes, ["alphan1", "alphan2"]);
        assert_eq!(conf.node_addresses, ["127.0.0.1:7002", "127.0.0.1:7003"]);

        let (full, warnings) = CtldConf::load(&path).unwrap();
        let unknown: Vec<&str> = warnings.iter().map(|w| w.key.as_str()).collect();
        assert!(unknown.is_empty(), "{unknown:?}");
        assert_eq!(full.kill_wait, 1, "extra lines win");
        assert_eq!(full.min_job_age, MIN_JOB_AGE);
        assert_eq!(full.return_to_service, 2);
        assert_eq!(
            full.state_save_location,
            tmp.path().join("alpha").join("state")
        );
        let ports: Vec<(u16, u32, u64)> = full
            .nodes
            .iter()
            .map(|n| (n.port, n.cpus, n.real_memory_mb))
            .collect();
        assert_eq!(ports, [(7002, 4, 2000), (7003, 4, 2000)]);
        let part = full.default_partition().unwrap();
        assert_eq!(part.name, "debug");
        assert!(conf.cloud_nodes.is_empty());
    }

    #[test]
    fn cloud_nodes_are_not_started_by_up_and_not_in_the_default_partition() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("slurm.conf");
        let mut spec = spec(tmp.path());
        spec.cloud = Some(CloudSpec {
            nodes: vec![NodeSpec {
                name: "cloud1".into(),
                port: 7004,
            }],
            suspend_time: 30,
            dir: spec.dir.clone(),
        });
        spec.write(&path, &[]).unwrap();
        let conf = ClusterConf::read(&path).unwrap();
        assert_eq!(conf.nodes, ["alphan1", "alphan2"]);
        assert_eq!(conf.node_addresses, ["127.0.0.1:7002", "127.0.0.1:7003"]);
        assert_eq!(conf.cloud_nodes, ["cloud1"]);

        let (full, warnings) = CtldConf::load(&path).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(full.power.enabled(&full.partitions));
        let part = full.default_partition().unwrap();
        assert_eq!(part.nodes, ["alphan1", "alphan2"]);
        let cloud = full.partitions.iter().find(|p| p.name == "cloud").unwrap();
        assert_eq!(cloud.nodes, ["cloud1"]);
    }
}
