//! What one node daemon needs from `slurm.conf`: its own `NodeName=` entry, where the
//! controller is, its spool directory and who may command it.
//!
//! The cluster file is read by the shared [`CtldConf`] reader; the few keys only the node
//! daemon uses (`SlurmUser`, `SlurmdLogFile`, `SlurmdPidFile`) and whether a node line *gave*
//! its CPUs and memory (or left them to the hardware) come from the raw [`ConfFile`].

use std::path::{Path, PathBuf};

use sluice_vocab::auth_conf::AuthConf;
use sluice_vocab::cluster_conf::{ConfWarning, CtldConf, JobAcctGather, PrologConf, StateSync};
use sluice_vocab::conf::ConfFile;
use sluice_vocab::hostlist::Hostlist;

use crate::error::NodedError;
use crate::resources;

/// Keys the node daemon reads that the shared reader reports as unknown.
const NODED_KEYS: [&str; 3] = ["SlurmUser", "SlurmdLogFile", "SlurmdPidFile"];

/// The node daemon's configuration.
#[derive(Debug, Clone)]
pub struct NodedConfig {
    /// The `slurm.conf` it was read from (passed to jobs as `SLURM_CONF`).
    pub conf_path: PathBuf,
    /// `ClusterName`.
    pub cluster_name: String,
    /// This node's name (`-N`, else the short host name).
    pub node_name: String,
    /// The address to listen on and to register (`NodeAddr`, else the node name).
    pub addr: String,
    /// The port to listen on (`Port=`, else `SlurmdPort`); 0 picks a free one.
    pub port: u16,
    /// CPUs to register: the node line's, else the OS's.
    pub cpus: u32,
    /// Memory in MB to register: the node line's `RealMemory`, else the OS's.
    pub real_memory_mb: u64,
    /// Temporary disk in MB to register (`TmpDisk`).
    pub tmp_disk_mb: u64,
    /// This node's spool directory: `SlurmdSpoolDir` with `%n` expanded, else
    /// `SlurmdSpoolDir/<node name>`, so several daemons can share a host.
    pub spool_dir: PathBuf,
    /// The controller's address (`SlurmctldHost`'s address, else its name).
    pub ctld_host: String,
    /// `SlurmctldPort`.
    pub ctld_port: u16,
    /// `AuthType` and `AuthInfo`: how requests are authenticated.
    pub auth: AuthConf,
    /// Uids allowed to launch and signal jobs: root, `SlurmUser` and the daemon's own uid.
    pub admin_uids: Vec<u32>,
    /// `SlurmdLogFile` (with `%n`/`%h` expanded), else stderr.
    pub log_file: Option<PathBuf>,
    /// `SlurmdPidFile` (with `%n`/`%h` expanded).
    pub pid_file: Option<PathBuf>,
    /// `JobAcctGatherType`/`JobAcctGatherFrequency`: whether and how often job usage is sampled.
    pub jobacct: JobAcctGather,
    /// `Prolog`, `Epilog`, `TaskProlog`, `TaskEpilog`, `PrologFlags`, `PrologEpilogTimeout`.
    pub prolog: PrologConf,
    /// Keys of the file nobody reads, to log once started.
    pub warnings: Vec<ConfWarning>,
    /// The batch scripts' supervisor program (see [`crate::supervise`]).
    pub stepd: PathBuf,
    /// `UnkillableStepTimeout` in seconds (see [`crate::unkillable`]).
    pub unkillable_secs: u32,
    /// `SluiceStateSync`: whether the spool's records (launch requests, exit reports) are
    /// fsynced before they are renamed into place (`full`), or only renamed (`normal`: they
    /// survive a crash of this daemon, as the controller's commits do under `normal`).
    pub state_sync: StateSync,
}

impl NodedConfig {
    /// Reads `conf_path` for node `node_name` (`None`: this host's short name).
    pub fn load(conf_path: &Path, node_name: Option<&str>) -> Result<Self, NodedError> {
        let file = ConfFile::read(conf_path)?;
        let node_name = match node_name {
            Some(n) => n.to_string(),
            None => resources::short_hostname().map_err(NodedError::Hostname)?,
        };
        Self::from_file(&file, node_name)
    }

    /// Interprets an already read file for node `node_name`.
    pub fn from_file(file: &ConfFile, node_name: String) -> Result<Self, NodedError> {
        let (conf, warnings) = CtldConf::from_file(file)?;
        let node = conf
            .nodes
            .iter()
            .find(|n| n.name == node_name)
            .ok_or_else(|| NodedError::UnknownNode {
                path: file.path.clone(),
                node: node_name.clone(),
            })?;
        let given = given_resources(file, &node_name);
        let host = resources::short_hostname().unwrap_or_default();
        let expand = |p: &str| PathBuf::from(p.replace("%n", &node_name).replace("%h", &host));
        let spool = conf.slurmd_spool_dir.to_string_lossy().into_owned();
        let spool_dir = if spool.contains("%n") {
            expand(&spool)
        } else {
            conf.slurmd_spool_dir.join(&node_name)
        };
        let ctld = conf.ctld_hosts.first();
        let ctld_host = ctld
            .map(|h| h.addr.clone().unwrap_or_else(|| h.name.clone()))
            .unwrap_or_default();
        Ok(Self {
            conf_path: file.path.clone(),
            cluster_name: conf.cluster_name.clone(),
            addr: node.addr.clone(),
            port: node.port,
            cpus: if given.cpus {
                node.cpus
            } else {
                resources::os_cpus()
            },
            real_memory_mb: if given.memory {
                node.real_memory_mb
            } else {
                resources::os_memory_mb().unwrap_or(node.real_memory_mb)
            },
            tmp_disk_mb: node.tmp_disk_mb,
            spool_dir,
            ctld_host,
            ctld_port: conf.ctld_port,
            auth: conf.auth.clone(),
            jobacct: conf.jobacct,
            prolog: conf.prolog.clone(),
            admin_uids: admin_uids(file)?,
            log_file: file.get("SlurmdLogFile").map(|p| expand(p.value.trim())),
            pid_file: file.get("SlurmdPidFile").map(|p| expand(p.value.trim())),
            warnings: warnings
                .into_iter()
                .filter(|w| !NODED_KEYS.iter().any(|k| w.key.eq_ignore_ascii_case(k)))
                .collect(),
            node_name,
            stepd: crate::supervise::default_program(),
            unkillable_secs: conf.unkillable_step_timeout,
            state_sync: conf.state_sync,
        })
    }

    /// Whether the spool's records are fsynced before their rename (`SluiceStateSync=full`).
    pub fn fsync(&self) -> bool {
        self.state_sync == StateSync::Full
    }

    /// The shared key, `slurm.key` next to `slurm.conf`.
    pub fn key_path(&self) -> PathBuf {
        let dir = self.conf_path.parent().unwrap_or(Path::new("."));
        dir.join(sluice_wire::auth::KEY_FILE)
    }

    /// The local credential service's socket, `sack.socket` next to `slurm.conf`.
    pub fn credential_socket(&self) -> PathBuf {
        let dir = self.conf_path.parent().unwrap_or(Path::new("."));
        sluice_wire::auth::sack::socket_path(dir)
    }
}

/// Which resources a node's lines (its own and the `NodeName=DEFAULT` lines before it) set.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Given {
    cpus: bool,
    memory: bool,
}

fn given_resources(file: &ConfFile, node: &str) -> Given {
    const CPU_KEYS: [&str; 6] = [
        "CPUs",
        "Procs",
        "Boards",
        "Sockets",
        "CoresPerSocket",
        "ThreadsPerCore",
    ];
    let mut defaults = Given::default();
    for line in &file.lines {
        let Some((head, rest)) = line.split_first() else {
            continue;
        };
        if !head.is("NodeName") {
            continue;
        }
        let mut given = defaults;
        given.cpus |= rest.iter().any(|p| CPU_KEYS.iter().any(|k| p.is(k)));
        given.memory |= rest.iter().any(|p| p.is("RealMemory"));
        if head.value.eq_ignore_ascii_case("DEFAULT") {
            defaults = given;
        } else if Hostlist::parse(&head.value).is_ok_and(|h| h.contains(node)) {
            return given;
        }
    }
    defaults
}

fn admin_uids(file: &ConfFile) -> Result<Vec<u32>, NodedError> {
    let mut uids = vec![0, nix::unistd::geteuid().as_raw()];
    if let Some(p) = file.get("SlurmUser") {
        let name = p.value.trim();
        let uid = match nix::unistd::User::from_name(name) {
            Ok(Some(u)) => u.uid.as_raw(),
            _ => name.parse().map_err(|_| NodedError::UnknownSlurmUser {
                path: file.path.clone(),
                user: name.to_string(),
            })?,
        };
        uids.push(uid);
    }
    uids.sort_unstable();
    uids.dedup();
    Ok(uids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(text: &str, node: &str) -> Result<NodedConfig, NodedError> {
        let file = ConfFile::parse(Path::new("/etc/sl/slurm.conf"), text).unwrap();
        NodedConfig::from_file(&file, node.to_string())
    }

    const BASE: &str = "ClusterName=c1\nSlurmctldHost=ctl(127.0.0.1)\nSlurmctldPort=7000\n";

    #[test]
    fn node_lines_give_address_port_and_resources() {
        let text = format!(
            "{BASE}SlurmdSpoolDir=/sp\nNodeName=DEFAULT RealMemory=2000\n\
             NodeName=n[1-2] NodeAddr=127.0.0.1,127.0.0.2 Port=0 CPUs=64\nNodeName=n3\n"
        );
        let c = conf(&text, "n2").unwrap();
        assert_eq!((c.addr.as_str(), c.port, c.cpus), ("127.0.0.2", 0, 64));
        assert_eq!(c.real_memory_mb, 2000);
        assert_eq!(c.spool_dir, PathBuf::from("/sp/n2"));
        assert_eq!((c.ctld_host.as_str(), c.ctld_port), ("127.0.0.1", 7000));
        assert_eq!(c.key_path(), PathBuf::from("/etc/sl/slurm.key"));
        // n3 gives no CPUs: the OS's count; memory comes from the DEFAULT line.
        let c = conf(&text, "n3").unwrap();
        assert_eq!(c.cpus, resources::os_cpus());
        assert_eq!(
            (c.real_memory_mb, c.port, c.addr.as_str()),
            (2000, 6818, "n3")
        );
    }

    #[test]
    fn the_spool_is_fsynced_only_under_full_state_sync() {
        let normal = conf(&format!("{BASE}NodeName=a1\n"), "a1").unwrap();
        assert!(!normal.fsync(), "normal is the default");
        let full = conf(&format!("{BASE}SluiceStateSync=full\nNodeName=a1\n"), "a1").unwrap();
        assert!(full.fsync());
        assert!(full.warnings.is_empty(), "{:?}", full.warnings);
    }

    #[test]
    fn spool_dir_expands_the_node_name() {
        let text = format!("{BASE}SlurmdSpoolDir=/sp/%n/d\nNodeName=a1\n");
        assert_eq!(
            conf(&text, "a1").unwrap().spool_dir,
            PathBuf::from("/sp/a1/d")
        );
    }

    #[test]
    fn a_missing_node_is_an_error_naming_it() {
        let e = conf(&format!("{BASE}NodeName=a1\n"), "zz").unwrap_err();
        assert!(
            e.to_string().contains("no NodeName line for node zz"),
            "{e}"
        );
    }

    #[test]
    fn slurm_user_is_an_admin_and_unknown_ones_are_errors() {
        let c = conf(&format!("{BASE}SlurmUser=nobody\nNodeName=a1\n"), "a1").unwrap();
        assert!(c.admin_uids.contains(&0) && c.admin_uids.contains(&65534));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        let e = conf(
            &format!("{BASE}SlurmUser=no-such-user-x\nNodeName=a1\n"),
            "a1",
        );
        assert!(matches!(e, Err(NodedError::UnknownSlurmUser { .. })));
    }
}
