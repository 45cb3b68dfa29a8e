//! `nonstop.conf`: the failure management settings (Slurm's `slurmctld/nonstop` plugin), read
//! from the directory of `slurm.conf` when that file says `SlurmctldPlugin=slurmctld/nonstop`.
//!
//! Same syntax as `slurm.conf` ([`crate::conf::ConfFile`]); unlike `slurm.conf`, an unknown
//! key is an error (the file is small and entirely Slurm's), and so is a `HotSpareCount`
//! naming a partition `slurm.conf` does not define. Units follow `man nonstop.conf`:
//! `TimeLimitDelay`, `TimeLimitExtend` and `TimeLimitDrop` in minutes, `ReadTimeout` and
//! `WriteTimeout` in milliseconds.

use crate::conf::{ConfError, ConfFile, Pair};
use std::path::{Path, PathBuf};

/// The file's name, beside `slurm.conf`.
pub const FILE_NAME: &str = "nonstop.conf";

/// A user list (`UserDrainAllow`, `UserDrainDeny`): names or numeric ids, or `ALL`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserList {
    /// `ALL`: every user.
    pub all: bool,
    /// The names or numeric ids given, in order.
    pub users: Vec<String>,
}

impl UserList {
    /// Whether the list names nobody.
    pub fn is_empty(&self) -> bool {
        !self.all && self.users.is_empty()
    }

    fn parse(value: &str) -> Result<Self, String> {
        let mut list = UserList::default();
        for item in value.split(',').map(str::trim) {
            if item.is_empty() {
                return Err("empty user name in list".to_string());
            }
            if item.eq_ignore_ascii_case("ALL") {
                list.all = true;
            } else if item.contains(|c: char| c.is_whitespace() || c == ':') {
                return Err(format!("\"{item}\" is not a user name or id"));
            } else {
                list.users.push(item.to_string());
            }
        }
        Ok(list)
    }
}

/// The failure management settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonstopConf {
    /// The file it was read from.
    pub path: PathBuf,
    /// `HotSpareCount=part:N[,part:N]`: idle nodes each partition keeps out of ordinary jobs.
    pub hot_spare_count: Vec<(String, u32)>,
    /// `MaxSpareNodeCount`: most replacements one job may get (0, the default: no limit).
    pub max_spare_node_count: u32,
    /// `TimeLimitDelay` in minutes: the most a job's limit may grow while it waits for a spare.
    pub time_limit_delay_min: u32,
    /// `TimeLimitExtend` in minutes: the extension a job earns per replaced node.
    pub time_limit_extend_min: u32,
    /// `TimeLimitDrop` in minutes: the extension a job earns per dropped node.
    pub time_limit_drop_min: u32,
    /// `UserDrainAllow`: users who may drain nodes of their own running jobs.
    pub user_drain_allow: UserList,
    /// `UserDrainDeny`: users who may not, even when allowed.
    pub user_drain_deny: UserList,
    /// `ReadTimeout` in milliseconds (default 2000): bound on serving one request.
    pub read_timeout_ms: u32,
    /// `WriteTimeout` in milliseconds (default 2000): bound on writing one reply or event.
    pub write_timeout_ms: u32,
    /// `Port`: an extra port the controller serves failure management on (0 or absent: only
    /// the controller's own port).
    pub port: u16,
    /// `ControlAddr`: where clients reach the failure management of the primary controller.
    pub control_addr: Option<String>,
    /// `BackupAddr`: the same for the backup controller.
    pub backup_addr: Option<String>,
    /// `Debug`: how much more the failure management logs at info level (0 nothing more;
    /// 1 what it did to jobs; 2 also the health of their nodes; 3 and above also the spare
    /// pools).
    pub debug: u8,
}

impl NonstopConf {
    /// The defaults of `man nonstop.conf`, for a file at `path`.
    pub fn defaults(path: PathBuf) -> Self {
        Self {
            path,
            hot_spare_count: Vec::new(),
            max_spare_node_count: 0,
            time_limit_delay_min: 0,
            time_limit_extend_min: 0,
            time_limit_drop_min: 0,
            user_drain_allow: UserList::default(),
            user_drain_deny: UserList::default(),
            read_timeout_ms: 2000,
            write_timeout_ms: 2000,
            port: 0,
            control_addr: None,
            backup_addr: None,
            debug: 0,
        }
    }

    /// The file beside `slurm_conf`.
    pub fn path_beside(slurm_conf: &Path) -> PathBuf {
        slurm_conf
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(FILE_NAME)
    }

    /// Reads `path`; `partitions` are the partition names of `slurm.conf`.
    pub fn load(path: &Path, partitions: &[&str]) -> Result<Self, ConfError> {
        Self::from_file(&ConfFile::read(path)?, partitions)
    }

    /// Interprets `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str, partitions: &[&str]) -> Result<Self, ConfError> {
        Self::from_file(&ConfFile::parse(path, text)?, partitions)
    }

    /// Interprets an already split file (the last value of a key wins).
    pub fn from_file(file: &ConfFile, partitions: &[&str]) -> Result<Self, ConfError> {
        let mut conf = Self::defaults(file.path.clone());
        for pair in file.pairs() {
            conf.apply(file, pair, partitions)?;
        }
        Ok(conf)
    }

    /// The spares `partition` keeps (0 when not named).
    pub fn spares_of(&self, partition: &str) -> u32 {
        self.hot_spare_count
            .iter()
            .filter(|(p, _)| p == partition)
            .map(|(_, n)| *n)
            .next_back()
            .unwrap_or(0)
    }

    fn apply(&mut self, file: &ConfFile, p: &Pair, partitions: &[&str]) -> Result<(), ConfError> {
        let bad = |reason: String| file.bad_value(p, reason);
        match p.key.to_ascii_lowercase().as_str() {
            "hotsparecount" => self.hot_spare_count = spares(&p.value, partitions).map_err(bad)?,
            "maxsparenodecount" => self.max_spare_node_count = file.number(p)?,
            "timelimitdelay" => self.time_limit_delay_min = file.number(p)?,
            "timelimitextend" => self.time_limit_extend_min = file.number(p)?,
            "timelimitdrop" => self.time_limit_drop_min = file.number(p)?,
            "userdrainallow" => self.user_drain_allow = UserList::parse(&p.value).map_err(bad)?,
            "userdraindeny" => self.user_drain_deny = UserList::parse(&p.value).map_err(bad)?,
            "readtimeout" => self.read_timeout_ms = positive_ms(file, p)?,
            "writetimeout" => self.write_timeout_ms = positive_ms(file, p)?,
            "port" => self.port = file.number(p)?,
            "controladdr" => self.control_addr = Some(address(file, p)?),
            "backupaddr" => self.backup_addr = Some(address(file, p)?),
            "debug" => self.debug = file.number(p)?,
            _ => {
                return Err(ConfError::Syntax {
                    path: file.path.clone(),
                    line: p.line,
                    message: format!("unknown key {}", p.key),
                });
            }
        }
        Ok(())
    }
}

fn spares(value: &str, partitions: &[&str]) -> Result<Vec<(String, u32)>, String> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for item in value.split(',').map(str::trim) {
        let (part, count) = item
            .split_once(':')
            .ok_or_else(|| format!("expected partition:count, found \"{item}\""))?;
        if !partitions.contains(&part) {
            return Err(format!("no partition named \"{part}\" in slurm.conf"));
        }
        let count: u32 = count
            .parse()
            .map_err(|_| format!("\"{count}\" is not a node count"))?;
        out.retain(|(p, _)| p != part);
        out.push((part.to_string(), count));
    }
    Ok(out)
}

fn positive_ms(file: &ConfFile, p: &Pair) -> Result<u32, ConfError> {
    match file.number::<u32>(p)? {
        0 => Err(file.bad_value(p, "must be at least 1 millisecond")),
        n => Ok(n),
    }
}

fn address(file: &ConfFile, p: &Pair) -> Result<String, ConfError> {
    let v = p.value.trim();
    if v.is_empty() || v.contains(|c: char| c.is_whitespace() || c == ',') {
        Err(file.bad_value(p, "expected one host name or address"))
    } else {
        Ok(v.to_string())
    }
}

#[cfg(test)]
mod tests;
