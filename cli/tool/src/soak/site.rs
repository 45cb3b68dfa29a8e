//! The site a soak runs on: a `sluice up` directory with short failure timers, its daemons
//! (found through their pid files), and the commands run against it with a bounded wait.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::SoakError;
use crate::up::daemons::Kind;
use crate::up::layout::Layout;
use crate::up::{UpArgs, UpError, plan, process};

/// Lines appended to every cluster's `slurm.conf`: failures are noticed within seconds
/// (a node silent for 6 s is DOWN, a request unanswered for 5 s fails), kills end quickly.
pub const SITE_CONF: &[&str] = &["KillWait=1", "SlurmdTimeout=6", "MessageTimeout=5"];
/// `SlurmdTimeout` of [`SITE_CONF`]: a node daemon stopped longer than this is declared DOWN.
pub const SLURMD_TIMEOUT: Duration = Duration::from_secs(6);
/// `MessageTimeout` of [`SITE_CONF`]: a request unanswered this long fails at the client.
pub const MESSAGE_TIMEOUT: Duration = Duration::from_secs(5);
/// The federation a site of several clusters forms.
pub const FEDERATION: &str = "soakfed";
/// How long a command may run before the driver gives up on it (and kills it).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `sluice up` may take to bring every daemon back.
const UP_TIMEOUT: Duration = Duration::from_secs(240);

/// One daemon of the site: its pid file stem (`dbd`, `ctld-c`, `noded-c-n`) and kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DaemonId {
    /// The stem of its pid and log files.
    pub id: String,
    /// What it is.
    pub kind: Kind,
}

/// A prepared soak site.
#[derive(Debug, Clone)]
pub struct Site {
    /// The `sluice up` directory.
    pub layout: Layout,
    /// Where `sluice` and the commands live.
    pub bin_dir: PathBuf,
    /// Each cluster's name, `slurm.conf` and nodes.
    pub clusters: Vec<(String, PathBuf, Vec<String>)>,
    /// Where jobs run and write their run markers.
    pub work: PathBuf,
    /// The controllers' state directories mounted as small tmpfs, so a soak can fill them
    /// ([`super::faults::Blow::Fill`]); empty where mounting is not allowed (not root).
    pub state_tmpfs: Vec<PathBuf>,
}

/// The size of a controller's state directory tmpfs: room for a soak's state many times
/// over, small enough to fill in a moment.
const STATE_TMPFS_SIZE: &str = "64m";

/// What a command did: its exit code (`None`: killed after [`COMMAND_TIMEOUT`]) and output.
#[derive(Debug, Clone)]
pub struct Output {
    /// The exit code, `None` if the driver had to kill it.
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl Site {
    /// Writes the site's configuration into `dir` unless it is there (`clusters` clusters of
    /// `nodes` nodes, a federation when more than one), taking ports from `ports`.
    pub fn prepare(
        dir: &Path,
        clusters: usize,
        nodes: u32,
        bin_dir: PathBuf,
        ports: &mut dyn FnMut(usize) -> Result<Vec<u16>, UpError>,
    ) -> Result<Site, SoakError> {
        let args = UpArgs {
            clusters: Some(clusters.to_string()),
            nodes: Some(nodes),
            federation: (clusters > 1).then(|| FEDERATION.to_string()),
            ..UpArgs::new(dir.to_path_buf())
        };
        let lines: Vec<String> = SITE_CONF.iter().map(|l| l.to_string()).collect();
        let plan = plan::prepare_with(&args, &lines, ports)?;
        let work = plan.layout.dir.join("work");
        std::fs::create_dir_all(work.join("runs")).map_err(|source| SoakError::Io {
            path: work.clone(),
            source,
        })?;
        let mut site = Site {
            clusters: plan
                .clusters
                .iter()
                .map(|c| (c.name.clone(), c.path.clone(), c.nodes.clone()))
                .collect(),
            layout: plan.layout,
            bin_dir,
            work,
            state_tmpfs: Vec::new(),
        };
        site.mount_states()?;
        Ok(site)
    }

    /// Mounts each controller's state directory as a tmpfs of [`STATE_TMPFS_SIZE`] (as root
    /// only; others soak without disk-full faults). Undone by [`Site::release`].
    fn mount_states(&mut self) -> Result<(), SoakError> {
        if !nix::unistd::geteuid().is_root() {
            return Ok(());
        }
        for (name, _, _) in &self.clusters {
            let dir = self.layout.cluster_dir(name).join("state");
            std::fs::create_dir_all(&dir).map_err(|source| SoakError::Io {
                path: dir.clone(),
                source,
            })?;
            let mounted = Command::new("mountpoint")
                .arg("-q")
                .arg(&dir)
                .status()
                .is_ok_and(|s| s.success());
            if !mounted {
                let out = Command::new("mount")
                    .args(["-t", "tmpfs", "-o"])
                    .arg(format!("size={STATE_TMPFS_SIZE},mode=0700"))
                    .arg("sluice-soak-state")
                    .arg(&dir)
                    .output()
                    .map_err(|source| SoakError::Io {
                        path: "mount".into(),
                        source,
                    })?;
                if !out.status.success() {
                    // A container may forbid mounts even to root: soak without the fault.
                    self.release();
                    self.state_tmpfs.clear();
                    return Ok(());
                }
            }
            self.state_tmpfs.push(dir);
        }
        Ok(())
    }

    /// Unmounts the controllers' state directories [`Site::prepare`] mounted (after
    /// [`Site::down`]: what the controllers saved there goes with them).
    pub fn release(&self) {
        for dir in &self.state_tmpfs {
            let _ = Command::new("umount").arg("-l").arg(dir).status();
        }
    }

    /// The tmpfs state directory of controller `daemon`, if it has one.
    pub fn state_dir(&self, daemon: &DaemonId) -> Option<&Path> {
        if daemon.kind != Kind::Ctld {
            return None;
        }
        let name = daemon.id.strip_prefix("ctld-")?;
        let dir = self.layout.cluster_dir(name).join("state");
        self.state_tmpfs
            .iter()
            .find(|d| **d == dir)
            .map(PathBuf::as_path)
    }

    /// Whether the clusters form a federation.
    pub fn federated(&self) -> bool {
        self.clusters.len() > 1
    }

    /// `sluice up --detach`: starts whatever daemon is missing and waits until all answer.
    pub fn up(&self) -> Result<(), SoakError> {
        let mut cmd = Command::new(self.bin_dir.join("sluice"));
        cmd.args(["up", "--detach", "--dir"]).arg(&self.layout.dir);
        if self.federated() {
            cmd.args(["--federation", FEDERATION]);
        }
        let out = run(cmd, UP_TIMEOUT)?;
        match out.code {
            Some(0) => Ok(()),
            _ => Err(SoakError::Start {
                detail: format!("{:?}: {}{}", out.code, out.stdout, out.stderr),
            }),
        }
    }

    /// `sluice down`.
    pub fn down(&self) -> Result<(), SoakError> {
        let mut cmd = Command::new(self.bin_dir.join("sluice"));
        cmd.args(["down", "--dir"]).arg(&self.layout.dir);
        run(cmd, UP_TIMEOUT).map(|_| ())
    }

    /// Runs `program args…` against cluster `i` in the work directory.
    pub fn cmd(&self, i: usize, program: &str, args: &[&str]) -> Result<Output, SoakError> {
        let mut cmd = Command::new(self.bin_dir.join(program));
        cmd.args(args)
            .current_dir(&self.work)
            .env("SLURM_CONF", &self.clusters[i].1)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin_dir.display()));
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") {
                cmd.env_remove(name);
            }
        }
        cmd.env("SLURM_CONF", &self.clusters[i].1);
        run(cmd, COMMAND_TIMEOUT)
    }

    /// Every daemon of the site: the dbd, each controller, each node daemon.
    pub fn daemons(&self) -> Vec<DaemonId> {
        let mut all = vec![DaemonId {
            id: "dbd".into(),
            kind: Kind::Dbd,
        }];
        for (name, _, nodes) in &self.clusters {
            all.push(DaemonId {
                id: format!("ctld-{name}"),
                kind: Kind::Ctld,
            });
            all.extend(nodes.iter().map(|n| DaemonId {
                id: format!("noded-{name}-{n}"),
                kind: Kind::Noded,
            }));
        }
        all
    }

    /// The pid of `daemon` if it is running.
    pub fn pid(&self, daemon: &DaemonId) -> Option<i32> {
        process::live_pid(&self.layout.pid_file(&daemon.id), daemon.kind.program())
    }

    /// Sends `signal` to `daemon`; false if it was not running.
    pub fn signal(&self, daemon: &DaemonId, signal: Signal) -> bool {
        self.pid(daemon)
            .is_some_and(|pid| kill(Pid::from_raw(pid), signal).is_ok())
    }

    /// The last lines of `daemon`'s log, for a report.
    pub fn log_tail(&self, daemon: &DaemonId) -> String {
        process::tail(&self.layout.log_file(&daemon.id), 15)
    }
}

/// Runs `cmd` (stdin closed), killing it after `timeout`.
fn run(mut cmd: Command, timeout: Duration) -> Result<Output, SoakError> {
    let program = format!("{:?}", cmd.get_program());
    let spawn_err = |source| SoakError::Io {
        path: PathBuf::from(&program),
        source,
    };
    let out_file = tempfile::tempfile().map_err(spawn_err)?;
    let err_file = tempfile::tempfile().map_err(spawn_err)?;
    cmd.stdin(Stdio::null())
        .stdout(out_file.try_clone().map_err(spawn_err)?)
        .stderr(err_file.try_clone().map_err(spawn_err)?);
    let mut child = cmd.spawn().map_err(spawn_err)?;
    let deadline = Instant::now() + timeout;
    let code = loop {
        if let Some(status) = child.try_wait().map_err(spawn_err)? {
            break Some(crate::soak::exit_code(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        code,
        stdout: read_all(out_file),
        stderr: read_all(err_file),
    })
}

fn read_all(mut file: std::fs::File) -> String {
    use std::io::{Read, Seek};
    let mut text = String::new();
    let _ = file.rewind();
    let _ = file.read_to_string(&mut text);
    text
}
