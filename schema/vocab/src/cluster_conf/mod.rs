//! The cluster's `slurm.conf`: controller keys, `NodeName=` and `PartitionName=` lines and
//! Slurm's time formats, read from the pairs of [`crate::conf::ConfFile`]. Shared by the
//! controller, the node daemons and the commands.
//!
//! Unknown keys are not errors: they come back as [`ConfWarning`]s naming file, line and key,
//! so a site can bring its Slurm file over and see what is ignored. A bad value is an error
//! naming file, line and key. `NodeName=` and `PartitionName=` lines are read by [`nodes`] and
//! [`partitions`]; every other pair is a top-level key and the last one given wins.

pub mod exclusions;
pub mod jobacct;
pub mod mail;
pub mod nodes;
pub mod partitions;
pub mod power;
pub mod priority;
pub mod prolog;
pub mod sched;
pub mod select;
pub mod srun;
pub mod timefmt;

pub use jobacct::JobAcctGather;
pub use nodes::{NodeConf, NodeConfState};
pub use partitions::{OverSubscribe, PartAccess, PartState, PartitionConf};
pub use power::{ExcNodes, ExcState, PartPower, PowerConf, SuspendTime};
pub use priority::{PriorityConf, PriorityType, TresKind, UsageReset};
pub use prolog::{PrologConf, PrologFlags};
pub use sched::{BackfillEvery, SchedParams};
pub use select::{CrUnit, PreemptAction, PreemptMode, SelectConf, SelectType};
pub use srun::SrunConf;
pub use timefmt::{TimeFmtError, TimeLimit, parse_time_limit};

use crate::auth_conf::AuthConf;
use crate::conf::{ConfError, ConfFile, Pair};
use crate::nonstop_conf::NonstopConf;
use crate::private_data::PrivateData;
use std::fmt;
use std::path::{Path, PathBuf};

/// Which scheduler runs (`SchedulerType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulerType {
    /// `sched/backfill` (Slurm's default): FIFO plus backfill.
    Backfill,
    /// `sched/builtin`: strict priority FIFO.
    Builtin,
}

/// How the controller's state store makes a commit durable (`SluiceStateSync`, a Sluice key):
/// SQLite's `synchronous` level under its write-ahead log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateSync {
    /// `normal` (the default): a commit is written to the log, fsynced at checkpoints; it
    /// survives any crash of the controller process, an OS crash or power loss may lose the
    /// last commits (never corrupting the store).
    #[default]
    Normal,
    /// `full`: every commit is fsynced before anyone is answered, so it survives power loss.
    Full,
}

impl StateSync {
    /// The key's value as written in `slurm.conf`.
    pub fn name(self) -> &'static str {
        match self {
            StateSync::Normal => "normal",
            StateSync::Full => "full",
        }
    }
}

/// One `SlurmctldHost` entry: `name` or `name(address)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtldHost {
    /// The host name.
    pub name: String,
    /// The address to reach it by, when it differs from the name.
    pub addr: Option<String>,
}

/// Slurm's default `UnkillableStepTimeout`, in seconds.
pub const UNKILLABLE_STEP_TIMEOUT: u32 = 60;

/// The controller's configuration, as read from `slurm.conf`.
#[derive(Debug, Clone)]
pub struct CtldConf {
    /// The file it was read from (for messages).
    pub path: PathBuf,
    /// `ClusterName` (required).
    pub cluster_name: String,
    /// `SlurmctldHost` lines, primary first (at least one is required).
    pub ctld_hosts: Vec<CtldHost>,
    /// `SlurmctldPort` (default 6817).
    pub ctld_port: u16,
    /// `AuthType` and `AuthInfo`: how requests are authenticated.
    pub auth: AuthConf,
    /// `SlurmdPort` (default 6818), the port of nodes without their own `Port=`.
    pub slurmd_port: u16,
    /// `StateSaveLocation` (default `/var/spool/slurmctld`).
    pub state_save_location: PathBuf,
    /// `SlurmdSpoolDir` (default `/var/spool/slurmd`).
    pub slurmd_spool_dir: PathBuf,
    /// `AccountingStorageHost`; `None` runs without accounting.
    pub accounting_storage_host: Option<String>,
    /// `AccountingStoragePort` (default 6819).
    pub accounting_storage_port: u16,
    /// `SchedulerType` (default `sched/backfill`).
    pub scheduler: SchedulerType,
    /// `SchedulerParameters` (Slurm's defaults when not given).
    pub sched: SchedParams,
    /// `MinJobAge`: seconds a finished job stays in the controller (default 300).
    pub min_job_age: u32,
    /// `KillWait`: seconds between SIGTERM and SIGKILL (default 30).
    pub kill_wait: u32,
    /// `UnkillableStepTimeout`: seconds a job's processes may outlive their SIGKILL before the
    /// node is drained with reason `Kill task failed` (default 60, 1 to 65533).
    pub unkillable_step_timeout: u32,
    /// `SlurmdTimeout`: seconds of silence before a node is set DOWN; 0 disables (default 300).
    pub slurmd_timeout: u32,
    /// `MessageTimeout`: seconds a command's request (and a controller's request to a node)
    /// may wait for its reply (default 10).
    pub message_timeout: u32,
    /// `MaxJobCount`: most jobs the controller holds, finished ones included (default 10000).
    pub max_job_count: u32,
    /// `MaxArraySize`: array task ids must be below it (default 1001).
    pub max_array_size: u32,
    /// `EnforcePartLimits`: `ALL`, `ANY` or `YES` refuse at submission a job its partition's
    /// limits or nodes can never satisfy; `NO` (the default) queues it, pending with a
    /// reason (`PartitionConfig`, `PartitionNodeLimit`, `PartitionTimeLimit`).
    pub enforce_part_limits: bool,
    /// `ReturnToService` (0, 1 or 2; default 0), Slurm's rules for DOWN nodes that register.
    pub return_to_service: u8,
    /// `SlurmUser` as written (default `root`): with root, the controller's administrator.
    pub slurm_user: String,
    /// `PrivateData` (default none): what users who are not administrators see only of their own.
    pub private_data: PrivateData,
    /// `AccountingStorageEnforce` (default none): associations and their limits.
    pub acct_enforce: crate::assoc_limits::AcctEnforce,
    /// `SlurmctldLogFile`; `None` logs to stderr.
    pub slurmctld_log_file: Option<PathBuf>,
    /// `SlurmctldPidFile`, if the controller should write one.
    pub slurmctld_pid_file: Option<PathBuf>,
    /// `FirstJobId` (default 1): where a controller without an accounting daemon starts its ids.
    pub first_job_id: u32,
    /// `SluiceStateSync` (default `normal`): the state store's durability.
    pub state_sync: StateSync,
    /// Resource selection and gang scheduling (`SelectType`, `SelectTypeParameters`,
    /// `DefMemPerCPU`, `DefMemPerNode`, `PreemptMode`, `SchedulerTimeSlice`).
    pub select: SelectConf,
    /// Nodes, in file order.
    pub nodes: Vec<NodeConf>,
    /// Partitions, in file order.
    pub partitions: Vec<PartitionConf>,
    /// Power save and cloud settings.
    pub power: PowerConf,
    /// `JobAcctGatherType` and `JobAcctGatherFrequency` (read by the node daemons).
    pub jobacct: JobAcctGather,
    /// Prolog and epilog programs, `PrologFlags` and `PrologEpilogTimeout`.
    pub prolog: PrologConf,
    /// `MailProg` and `MailDomain`, for `--mail-type`.
    pub mail: mail::MailConf,
    /// Failure management: `SlurmctldPlugin=slurmctld/nonstop` and its `nonstop.conf`, read
    /// from beside this file (`None` without the plugin).
    pub nonstop: Option<NonstopConf>,
    /// Job priority: `PriorityType`, the weights and the fair-share settings.
    pub priority: PriorityConf,
}

/// A key Sluice does not know, ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfWarning {
    /// The file.
    pub path: PathBuf,
    /// The line the key is on.
    pub line: usize,
    /// The key as written.
    pub key: String,
    /// Why a known key is ignored; `None` for a key Sluice does not know.
    pub note: Option<&'static str>,
}

impl fmt::Display for ConfWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (path, line, key) = (self.path.display(), self.line, &self.key);
        match self.note {
            Some(note) => write!(f, "{path}:{line}: {key} ignored: {note}"),
            None => write!(f, "{path}:{line}: unknown key {key}, ignored"),
        }
    }
}

impl CtldConf {
    /// Reads `path` (as found through `SLURM_CONF` by the binary).
    pub fn load(path: &Path) -> Result<(Self, Vec<ConfWarning>), ConfError> {
        Self::from_file(&ConfFile::read(path)?)
    }

    /// Interprets `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<(Self, Vec<ConfWarning>), ConfError> {
        Self::from_file(&ConfFile::parse(path, text)?)
    }

    /// Interprets an already split file.
    pub fn from_file(file: &ConfFile) -> Result<(Self, Vec<ConfWarning>), ConfError> {
        let mut warnings = Vec::new();
        let mut conf = Self::defaults(file.path.clone());
        let mut node_lines = Vec::new();
        let mut part_lines = Vec::new();
        for line in &file.lines {
            match line.first() {
                Some(p) if p.is("NodeName") => node_lines.push(line.as_slice()),
                Some(p) if p.is("PartitionName") => part_lines.push(line.as_slice()),
                _ => {
                    for pair in line {
                        if !conf.apply_top(file, pair)?
                            && !conf.power.apply(file, pair, &mut warnings)?
                            && !conf.sched.apply(file, pair, &mut warnings)?
                            && !conf.prolog.apply(file, pair, &mut warnings)?
                            && !conf.priority.apply(file, pair, &mut warnings)?
                            && !conf.mail.apply(file, pair)?
                            // srun's keys: checked here, read by srun alone.
                            && !SrunConf::default().apply(file, pair)?
                        {
                            warnings.push(warning(file, pair));
                        }
                    }
                }
            }
        }
        conf.nodes = nodes::read(file, &node_lines, conf.slurmd_port, &mut warnings)?;
        conf.partitions = partitions::read(file, &part_lines, &conf.nodes, &mut warnings)?;
        conf.power.check(file, &conf.nodes, &conf.partitions)?;
        if conf.nonstop.is_some() {
            let names: Vec<&str> = conf.partitions.iter().map(|p| p.name.as_str()).collect();
            let path = NonstopConf::path_beside(&file.path);
            conf.nonstop = Some(NonstopConf::load(&path, &names)?);
        }
        if conf.cluster_name.is_empty() {
            return Err(missing(file, "ClusterName"));
        }
        if conf.ctld_hosts.is_empty() {
            return Err(missing(file, "SlurmctldHost"));
        }
        Ok((conf, warnings))
    }

    fn defaults(path: PathBuf) -> Self {
        Self {
            path,
            cluster_name: String::new(),
            ctld_hosts: Vec::new(),
            ctld_port: 6817,
            auth: AuthConf::default(),
            slurmd_port: 6818,
            state_save_location: PathBuf::from("/var/spool/slurmctld"),
            slurmd_spool_dir: PathBuf::from("/var/spool/slurmd"),
            accounting_storage_host: None,
            accounting_storage_port: 6819,
            scheduler: SchedulerType::Backfill,
            sched: SchedParams::default(),
            min_job_age: 300,
            kill_wait: 30,
            unkillable_step_timeout: UNKILLABLE_STEP_TIMEOUT,
            slurmd_timeout: 300,
            message_timeout: 10,
            max_job_count: 10_000,
            max_array_size: 1001,
            enforce_part_limits: false,
            return_to_service: 0,
            slurm_user: "root".to_string(),
            private_data: PrivateData::default(),
            acct_enforce: crate::assoc_limits::AcctEnforce::default(),
            slurmctld_log_file: None,
            slurmctld_pid_file: None,
            first_job_id: 1,
            state_sync: StateSync::Normal,
            select: SelectConf::default(),
            nodes: Vec::new(),
            partitions: Vec::new(),
            power: PowerConf::default(),
            jobacct: JobAcctGather::default(),
            prolog: PrologConf::default(),
            mail: mail::MailConf::default(),
            nonstop: None,
            priority: PriorityConf::default(),
        }
    }

    /// Applies one top-level pair; `false` when the key is unknown.
    fn apply_top(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        let key = p.key.to_ascii_lowercase();
        match key.as_str() {
            "clustername" => self.cluster_name = non_empty(file, p)?.to_ascii_lowercase(),
            "slurmctldhost" => self.ctld_hosts.push(ctld_host(file, p)?),
            "slurmctldport" => self.ctld_port = file.number(p)?,
            "authtype" | "authinfo" => self.auth = AuthConf::from_file(file)?,
            "slurmdport" => self.slurmd_port = file.number(p)?,
            "statesavelocation" => self.state_save_location = non_empty(file, p)?.into(),
            "slurmdspooldir" => self.slurmd_spool_dir = non_empty(file, p)?.into(),
            "accountingstoragehost" => {
                self.accounting_storage_host = Some(non_empty(file, p)?.to_string())
            }
            "accountingstorageport" => self.accounting_storage_port = file.number(p)?,
            "schedulertype" => {
                self.scheduler = match p.value.to_ascii_lowercase().as_str() {
                    "sched/backfill" => SchedulerType::Backfill,
                    "sched/builtin" => SchedulerType::Builtin,
                    _ => return Err(file.bad_value(p, "expected sched/backfill or sched/builtin")),
                }
            }
            "minjobage" => self.min_job_age = file.number(p)?,
            "killwait" => self.kill_wait = file.number(p)?,
            "unkillablesteptimeout" => {
                self.unkillable_step_timeout = match file.number::<u32>(p)? {
                    n @ 1..=65533 => n,
                    _ => return Err(file.bad_value(p, "expected seconds from 1 to 65533")),
                }
            }
            "slurmdtimeout" => self.slurmd_timeout = file.number(p)?,
            "messagetimeout" => self.message_timeout = positive(file, p)?,
            "maxjobcount" => self.max_job_count = positive(file, p)?,
            "maxarraysize" => self.max_array_size = file.number(p)?,
            "enforcepartlimits" => {
                self.enforce_part_limits = match p.value.trim().to_ascii_uppercase().as_str() {
                    "ALL" | "ANY" | "YES" => true,
                    "NO" => false,
                    _ => return Err(file.bad_value(p, "expected ALL, ANY, NO or YES")),
                }
            }
            "slurmuser" => self.slurm_user = non_empty(file, p)?.to_string(),
            "privatedata" => {
                self.private_data =
                    PrivateData::parse(&p.value).map_err(|e| file.bad_value(p, e))?
            }
            "accountingstorageenforce" => {
                self.acct_enforce = crate::assoc_limits::AcctEnforce::parse(&p.value)
                    .map_err(|e| file.bad_value(p, e))?
            }
            "slurmctldlogfile" => self.slurmctld_log_file = Some(non_empty(file, p)?.into()),
            "slurmctldpidfile" => self.slurmctld_pid_file = Some(non_empty(file, p)?.into()),
            "firstjobid" => self.first_job_id = positive(file, p)?,
            "sluicestatesync" => {
                self.state_sync = match p.value.to_ascii_lowercase().as_str() {
                    "normal" => StateSync::Normal,
                    "full" => StateSync::Full,
                    _ => return Err(file.bad_value(p, "expected normal or full")),
                }
            }
            "slurmctldplugin" => {
                self.nonstop = None;
                for plugin in p.value.split(',').map(str::trim) {
                    if plugin.eq_ignore_ascii_case("slurmctld/nonstop") {
                        self.nonstop = Some(NonstopConf::defaults(PathBuf::new()));
                    } else {
                        return Err(file.bad_value(
                            p,
                            format!(
                                "unsupported plugin \"{plugin}\" (Sluice has slurmctld/nonstop)"
                            ),
                        ));
                    }
                }
            }
            "returntoservice" => {
                self.return_to_service = file.number(p)?;
                if self.return_to_service > 2 {
                    return Err(file.bad_value(p, "expected 0, 1 or 2"));
                }
            }
            // Keys other programs read (the node daemons' files) or that only name the
            // accounting plugin (AccountingStorageHost decides): known, so not warned about.
            "accountingstoragetype" | "slurmdlogfile" | "slurmdpidfile" => {}
            _ if self.select.apply(file, p)? => {}
            _ if self.jobacct.apply(file, p)? => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The default partition (`Default=YES`; the last one marked wins, as in Slurm).
    pub fn default_partition(&self) -> Option<&PartitionConf> {
        self.partitions.iter().rev().find(|p| p.default)
    }
}

pub(crate) fn warning(file: &ConfFile, pair: &Pair) -> ConfWarning {
    ConfWarning {
        path: file.path.clone(),
        line: pair.line,
        key: pair.key.clone(),
        note: None,
    }
}

fn missing(file: &ConfFile, key: &str) -> ConfError {
    ConfError::Missing {
        path: file.path.clone(),
        key: key.to_string(),
    }
}

pub(crate) fn non_empty<'a>(file: &ConfFile, p: &'a Pair) -> Result<&'a str, ConfError> {
    let v = p.value.trim();
    if v.is_empty() {
        Err(file.bad_value(p, "empty value"))
    } else {
        Ok(v)
    }
}

pub(crate) fn positive(file: &ConfFile, p: &Pair) -> Result<u32, ConfError> {
    match file.number::<u32>(p)? {
        0 => Err(file.bad_value(p, "must be at least 1")),
        n => Ok(n),
    }
}

fn ctld_host(file: &ConfFile, p: &Pair) -> Result<CtldHost, ConfError> {
    let v = non_empty(file, p)?;
    match v.split_once('(') {
        None => Ok(CtldHost {
            name: v.to_string(),
            addr: None,
        }),
        Some((name, rest)) => match rest.strip_suffix(')') {
            Some(addr) if !name.is_empty() && !addr.is_empty() => Ok(CtldHost {
                name: name.to_string(),
                addr: Some(addr.to_string()),
            }),
            _ => Err(file.bad_value(p, "expected host or host(address)")),
        },
    }
}

#[cfg(test)]
mod access_tests;
#[cfg(test)]
mod priority_tests;
#[cfg(test)]
mod tests;
