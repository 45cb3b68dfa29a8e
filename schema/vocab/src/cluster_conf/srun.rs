//! The `slurm.conf` keys only `srun` reads: `KillOnBadExit` (end a step once one of its tasks
//! fails), `WaitTime` (how long the other tasks may run on once the first has ended),
//! `SrunProlog` and `SrunEpilog` (programs srun runs itself before and after each step) and
//! `KillWait` (how long srun's SIGTERM is given before SIGKILL when it ends a step itself).
//! The daemons know the keys (so they do not warn about them) and leave them to srun.

use super::non_empty;
use crate::conf::{ConfError, ConfFile, Pair};

/// Slurm's default `KillWait`, in seconds.
pub const KILL_WAIT: u32 = 30;

/// srun's settings from `slurm.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrunConf {
    /// `KillOnBadExit` (0 or 1, default 0).
    pub kill_on_bad_exit: bool,
    /// `WaitTime` in seconds (0, the default: wait for every task).
    pub wait_time: u32,
    /// `SrunProlog`.
    pub prolog: Option<String>,
    /// `SrunEpilog`.
    pub epilog: Option<String>,
    /// `KillWait` (default 30).
    pub kill_wait: u32,
}

impl Default for SrunConf {
    fn default() -> Self {
        Self {
            kill_on_bad_exit: false,
            wait_time: 0,
            prolog: None,
            epilog: None,
            kill_wait: KILL_WAIT,
        }
    }
}

impl SrunConf {
    /// Reads srun's keys of `file` (the last of each wins).
    pub fn from_file(file: &ConfFile) -> Result<Self, ConfError> {
        let mut conf = Self::default();
        for pair in file.pairs() {
            conf.apply(file, pair)?;
        }
        Ok(conf)
    }

    /// Applies one pair; `false` when it is not one of srun's keys. `KillWait` is also the
    /// controller's: it is read here but not claimed.
    pub fn apply(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        match p.key.to_ascii_lowercase().as_str() {
            "killonbadexit" => {
                self.kill_on_bad_exit = match file.number::<u32>(p)? {
                    0 => false,
                    1 => true,
                    _ => return Err(file.bad_value(p, "expected 0 or 1")),
                }
            }
            "waittime" => self.wait_time = file.number(p)?,
            "srunprolog" => self.prolog = Some(non_empty(file, p)?.to_string()),
            "srunepilog" => self.epilog = Some(non_empty(file, p)?.to_string()),
            "killwait" => {
                self.kill_wait = file.number(p)?;
                return Ok(false);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str) -> Result<SrunConf, ConfError> {
        let file = ConfFile::parse(Path::new("slurm.conf"), text)?;
        SrunConf::from_file(&file)
    }

    #[test]
    fn srun_keys_and_their_defaults() {
        assert_eq!(read("ClusterName=c\n").unwrap(), SrunConf::default());
        let c = read("KillOnBadExit=1\nWaitTime=5\nSrunProlog=/p\nSrunEpilog=/e\nKillWait=7\n")
            .unwrap();
        assert!(c.kill_on_bad_exit);
        assert_eq!((c.wait_time, c.kill_wait), (5, 7));
        assert_eq!(
            (c.prolog.as_deref(), c.epilog.as_deref()),
            (Some("/p"), Some("/e"))
        );
        let e = read("KillOnBadExit=2\n").unwrap_err().to_string();
        assert!(e.contains("KillOnBadExit"), "{e}");
        assert!(read("WaitTime=soon\n").is_err());
    }
}
