//! `sluice up` / `sluice down`: a local federation in one directory, in one command.
//!
//! `up` writes what is missing (configurations, key), then starts the accounting daemon, one
//! controller per cluster and that cluster's node daemons, each waited for before the next
//! (the dbd answers, the controller answers, every node has registered). `down` stops them in
//! the reverse order: node daemons, controllers, the dbd.
//!
//! * [`layout`]: the files of the directory; [`cluster_conf`]: each cluster's `slurm.conf`;
//!   [`cloud`]: `--cloud-nodes` (cloud nodes, their partition, Resume/SuspendProgram).
//! * [`plan`]: what the directory holds or gets (clusters, nodes, ports), first written once;
//!   [`ports`]: choosing free ports.
//! * [`storage`]: the `--storage` option.
//! * [`daemons`]: the daemons of a plan; [`process`]: starting, probing and stopping them.
//! * [`dbd`]: waiting for the dbd, registering clusters and the federation.
//! * [`ctld`]: waiting for a controller and for its nodes to register.
//! * [`scripts`]: `DIR/bin/nonstop.sh`, installed for the failure management.
//! * [`start`]: the `up` sequence; [`stop`]: `down` and the foreground run; [`status`]: what
//!   it prints.

pub mod cloud;
pub mod cluster_conf;
pub mod ctld;
pub mod daemons;
pub mod dbd;
pub mod error;
pub mod layout;
pub mod plan;
pub mod ports;
pub mod process;
pub mod scripts;
pub mod start;
pub mod status;
pub mod stop;
pub mod storage;

use std::path::PathBuf;

pub use error::UpError;
pub use start::up;
pub use stop::down;

/// Where `sluice up` works when `--dir` is not given.
pub const DEFAULT_DIR: &str = "./sluice-local";

/// Options of `sluice up`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpArgs {
    /// The directory holding configuration, key, database, state, logs and pid files.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
    /// The clusters: a number N (named cluster, or cluster1..clusterN) or comma-separated
    /// names. Used only when the directory is first set up. [default: 1]
    #[arg(long, alias = "cluster", value_name = "NAMES|N")]
    pub clusters: Option<String>,
    /// Node daemons per cluster. Used only when the directory is first set up. [default: 2]
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// `CPUs` of every node (the node daemons offer what the file says, so more than the
    /// host has oversubscribes it: for throughput tests shaped like another site). Used only
    /// when the directory is first set up. [default: the host's CPUs]
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
    /// How the clusters allocate nodes: `linear` (whole nodes: Slurm 22.05's default
    /// `select/linear`) or `cons_tres` (CPUs: `select/cons_tres` with `CR_CPU`, as most sites
    /// and the oracle's Slurm run). Used only when the directory is first set up.
    /// [default: linear]
    #[arg(long, value_enum, value_name = "linear|cons_tres")]
    pub select: Option<SelectMode>,
    /// Also put every cluster into this federation (in the accounting daemon).
    #[arg(long, value_name = "NAME")]
    pub federation: Option<String>,
    /// The accounting database: sqlite, sqlite:///PATH, mysql://USER:PASS@HOST:PORT/DB or
    /// postgres://USER:PASS@HOST:PORT/DB. Used only when DIR/slurmdbd.conf is first written.
    /// [default: sqlite]
    #[arg(long)]
    pub storage: Option<String>,
    /// Return once everything answers instead of staying in the foreground.
    #[arg(long)]
    pub detach: bool,
    /// Start only the accounting daemon (the clusters' configurations are written all the same).
    #[arg(long)]
    pub dbd_only: bool,
    /// Also give each cluster N cloud nodes (cloud1..cloudN, State=CLOUD) in a partition
    /// `cloud`, powered up and down by programs that start and stop their node daemons. Used
    /// only when the directory is first set up. [default: 0]
    #[arg(long, value_name = "N")]
    pub cloud_nodes: Option<u32>,
    /// `SuspendTime` of the cloud partition, in seconds: how long a cloud node stays idle
    /// before it is powered down. Used only when the directory is first set up. [default: 60]
    #[arg(long, value_name = "SECONDS")]
    pub suspend_time: Option<u32>,
    /// How requests are authenticated: `slurm` (slurm.key tokens, and the local credential
    /// service for users who cannot read the key) or `munge` (the MUNGE daemon running on this
    /// host). Used only when the directory is first set up. [default: slurm]
    #[arg(long, value_enum, value_name = "slurm|munge")]
    pub auth: Option<AuthMode>,
    /// With `--auth munge`: munged's socket, when not libmunge's default
    /// (`AuthInfo=socket=PATH`).
    #[arg(long, value_name = "PATH", requires = "auth")]
    pub munge_socket: Option<PathBuf>,
}

/// `sluice up --select`: how the clusters' `slurm.conf` allocate nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SelectMode {
    /// Whole nodes: no `SelectType` line (Slurm 22.05's default, `select/linear`).
    #[default]
    Linear,
    /// CPUs: `SelectType=select/cons_tres`, `SelectTypeParameters=CR_CPU`.
    #[value(name = "cons_tres")]
    ConsTres,
}

impl SelectMode {
    /// Its `slurm.conf` lines.
    pub fn conf_lines(self) -> Vec<String> {
        match self {
            Self::Linear => Vec::new(),
            Self::ConsTres => vec![
                "SelectType=select/cons_tres".to_string(),
                "SelectTypeParameters=CR_CPU".to_string(),
            ],
        }
    }
}

/// `sluice up --auth`: the `AuthType` written into the configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// `AuthType=auth/slurm`.
    Slurm,
    /// `AuthType=auth/munge`.
    Munge,
}

impl AuthMode {
    /// The configuration lines of this mode (slurm.conf and slurmdbd.conf alike), with
    /// munged's `socket` if given.
    pub fn conf_lines(self, socket: Option<&std::path::Path>) -> Vec<String> {
        match self {
            Self::Slurm => Vec::new(),
            Self::Munge => std::iter::once("AuthType=auth/munge".to_string())
                .chain(socket.map(|s| format!("AuthInfo=socket={}", s.display())))
                .collect(),
        }
    }
}

impl UpArgs {
    /// The options of a plain `sluice up --dir DIR`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            clusters: None,
            nodes: None,
            cpus: None,
            select: None,
            federation: None,
            storage: None,
            detach: false,
            dbd_only: false,
            cloud_nodes: None,
            suspend_time: None,
            auth: None,
            munge_socket: None,
        }
    }
}

/// Options of `sluice down`.
#[derive(Debug, Clone, clap::Args)]
pub struct DownArgs {
    /// The directory given to `sluice up`.
    #[arg(long, default_value = DEFAULT_DIR)]
    pub dir: PathBuf,
}
