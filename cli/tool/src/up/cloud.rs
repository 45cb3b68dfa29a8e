//! `--cloud-nodes N`: cloud nodes on one machine. Each cluster gets nodes `cloud1..cloudN`
//! (`State=CLOUD`, powered down until a job needs them) in a partition `cloud` with a short
//! `SuspendTime`, and two programs in its directory: `resume.sh` starts the node daemon of
//! every host of its hostlist argument, `suspend.sh` stops them. Both expand the hostlist with
//! `scontrol show hostnames`, record pid files in `DIR/run` under the names `up` and `down`
//! use (`noded-<cluster>-<node>.pid`), so `sluice down` stops resumed nodes too, and exit at once.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::UpError;
use super::cluster_conf::{ClusterConf, NodeSpec};
use super::daemons::{Daemon, Kind};
use super::layout::{Layout, shell_quote};
use super::process;

/// `SuspendTime` of the cloud partition when `--suspend-time` is not given: short, for a demo.
pub const DEFAULT_SUSPEND_TIME: u32 = 60;
/// `SuspendTimeout`: the node daemon stops within a second; Slurm's default is 30.
pub const SUSPEND_TIMEOUT: u32 = 10;
/// `ResumeTimeout`: starting a node daemon and its registration, on a loaded host.
pub const RESUME_TIMEOUT: u32 = 120;
/// The name of the cloud partition.
pub const PARTITION: &str = "cloud";
/// The most cloud nodes per cluster.
pub const MAX_CLOUD_NODES: u32 = 128;

/// The cloud part of a new cluster's `slurm.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudSpec {
    /// The cloud nodes (`cloud1..cloudN`) and their ports.
    pub nodes: Vec<NodeSpec>,
    /// The cloud partition's `SuspendTime`, in seconds.
    pub suspend_time: u32,
    /// The cluster's directory, where the programs live.
    pub dir: PathBuf,
}

/// The ResumeProgram of the cluster whose directory is `dir`.
pub fn resume_program(dir: &Path) -> PathBuf {
    dir.join("resume.sh")
}

/// The SuspendProgram of the cluster whose directory is `dir`.
pub fn suspend_program(dir: &Path) -> PathBuf {
    dir.join("suspend.sh")
}

/// The name of cloud node `i` (from 1).
pub fn node_name(i: u32) -> String {
    format!("cloud{i}")
}

impl CloudSpec {
    /// The `slurm.conf` lines: node definitions, the partition and the power save keys.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "NodeName={} NodeAddr=127.0.0.1 Port={} State=CLOUD",
                    n.name, n.port
                )
            })
            .collect();
        let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        lines.extend([
            format!(
                "PartitionName={PARTITION} Nodes={} MaxTime=INFINITE State=UP SuspendTime={}",
                sluice_vocab::hostlist::compress(&names),
                self.suspend_time
            ),
            format!("ResumeProgram={}", resume_program(&self.dir).display()),
            format!("SuspendProgram={}", suspend_program(&self.dir).display()),
            format!("ResumeTimeout={RESUME_TIMEOUT}"),
            format!("SuspendTimeout={SUSPEND_TIMEOUT}"),
            // Powered-down cloud nodes are listed (idle~) only with `cloud` in PrivateData.
            "PrivateData=cloud".to_string(),
        ]);
        lines
    }
}

/// Writes (again: they name the binaries being run) the two programs of `cluster`, whose cloud
/// node daemons run the binaries of `bin_dir`.
pub fn write_programs(
    layout: &Layout,
    cluster: &ClusterConf,
    bin_dir: &Path,
) -> Result<(), UpError> {
    let dir = layout.cluster_dir(&cluster.name);
    let q = |p: &Path| shell_quote(&p.display().to_string());
    let head = format!(
        "#!/bin/sh\n\
         # Written by `sluice up` at every start (it names the binaries being run).\n\
         run={run}\nlog={log}\nprefix={prefix}\n",
        run = q(&layout.run_dir()),
        log = q(&layout.log_dir()),
        prefix = shell_quote(&format!("noded-{}-", cluster.name)),
    );
    let hosts = format!(
        "hosts=$({scontrol} show hostnames \"$1\") || exit 1\n",
        scontrol = q(&bin_dir.join("scontrol"))
    );
    let resume = format!(
        "{head}# ResumeProgram: starts the node daemon of every host of the hostlist $1.\n\
         conf={conf}\n{hosts}\
         detach=\ncommand -v setsid >/dev/null 2>&1 && detach=setsid\n\
         for host in $hosts; do\n\
         \x20 pid_file=\"$run/$prefix$host.pid\"\n\
         \x20 if [ -f \"$pid_file\" ] && kill -0 \"$(cat \"$pid_file\")\" 2>/dev/null; then continue; fi\n\
         \x20 NO_COLOR=1 $detach {noded} -D -f \"$conf\" -N \"$host\" </dev/null \\\n\
         \x20   >>\"$log/$prefix$host.log\" 2>&1 &\n\
         \x20 echo $! >\"$pid_file\"\n\
         done\n",
        conf = q(&cluster.path),
        noded = q(&bin_dir.join("sluice-noded")),
    );
    let suspend = format!(
        "{head}# SuspendProgram: stops the node daemon of every host of the hostlist $1.\n\
         {hosts}\
         for host in $hosts; do\n\
         \x20 pid_file=\"$run/$prefix$host.pid\"\n\
         \x20 [ -f \"$pid_file\" ] || continue\n\
         \x20 pid=$(cat \"$pid_file\")\n\
         \x20 case \"$(tr '\\000' ' ' <\"/proc/$pid/cmdline\" 2>/dev/null)\" in\n\
         \x20   *sluice-noded*) kill \"$pid\" 2>/dev/null ;;\n\
         \x20 esac\n\
         \x20 rm -f \"$pid_file\"\n\
         done\n"
    );
    write_script(&resume_program(&dir), &resume)?;
    write_script(&suspend_program(&dir), &suspend)
}

/// Stops the node daemons the ResumeProgram of `clusters` started (when a foreground `up`
/// ends: it did not start them, so it does not watch them).
pub async fn stop_resumed(layout: &Layout, clusters: &[ClusterConf]) {
    let program = Kind::Noded.program();
    for cluster in clusters {
        for node in &cluster.cloud_nodes {
            let id = Daemon::noded(cluster, node, String::new()).id;
            let pid_file = layout.pid_file(&id);
            let Some(pid) = process::live_pid(&pid_file, program) else {
                continue;
            };
            match process::stop(pid, program, process::STOP_TIMEOUT).await {
                Ok(()) => {
                    let _ = std::fs::remove_file(&pid_file);
                }
                Err(e) => eprintln!("sluice: {e}"),
            }
        }
    }
}

fn write_script(path: &Path, text: &str) -> Result<(), UpError> {
    let err = |source| UpError::Write {
        path: path.to_path_buf(),
        source,
    };
    // A new file, renamed over the old one: the controller may be running the old one.
    let tmp = path.with_extension("sh.new");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloud_lines_name_the_nodes_the_partition_and_the_programs() {
        let spec = CloudSpec {
            nodes: (1..=3)
                .map(|i| NodeSpec {
                    name: node_name(i),
                    port: 9000 + i as u16,
                })
                .collect(),
            suspend_time: 7,
            dir: "/f/c".into(),
        };
        let lines = spec.lines();
        assert_eq!(
            lines[0],
            "NodeName=cloud1 NodeAddr=127.0.0.1 Port=9001 State=CLOUD"
        );
        assert!(
            lines.contains(
                &"PartitionName=cloud Nodes=cloud[1-3] MaxTime=INFINITE State=UP SuspendTime=7"
                    .to_string()
            ),
            "{lines:?}"
        );
        assert!(lines.contains(&"ResumeProgram=/f/c/resume.sh".to_string()));
        assert!(lines.contains(&"SuspendProgram=/f/c/suspend.sh".to_string()));
    }
}
