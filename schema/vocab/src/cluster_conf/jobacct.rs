//! `JobAcctGatherType` and `JobAcctGatherFrequency`: whether and how often the node daemons
//! sample what a job's processes use (Slurm's `jobacct_gather/linux`).

use crate::conf::{ConfError, ConfFile, Pair};

/// Slurm's default sampling interval, seconds.
pub const DEFAULT_FREQUENCY: u32 = 30;

/// How job usage is gathered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobAcctGather {
    /// `jobacct_gather/linux` (the default here): sample `/proc`; `jobacct_gather/none`: not.
    pub enabled: bool,
    /// Seconds between samples of a task (`task=N`, or a plain `N`); 0 samples only at the
    /// start and the end.
    pub frequency: u32,
}

impl Default for JobAcctGather {
    fn default() -> Self {
        Self {
            enabled: true,
            frequency: DEFAULT_FREQUENCY,
        }
    }
}

impl JobAcctGather {
    /// Applies `JobAcctGatherType` or `JobAcctGatherFrequency`; `false` for other keys.
    pub fn apply(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        match p.key.to_ascii_lowercase().as_str() {
            "jobacctgathertype" => {
                self.enabled = match p.value.trim().to_ascii_lowercase().as_str() {
                    "jobacct_gather/linux" => true,
                    "jobacct_gather/none" => false,
                    _ => {
                        return Err(file
                            .bad_value(p, "expected jobacct_gather/linux or jobacct_gather/none"));
                    }
                }
            }
            "jobacctgatherfrequency" => self.frequency = frequency(file, p)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// `N` or a list of `type=N` (`task=30,energy=0,...`): the task interval; other types are
/// for plugins Sluice does not have and are accepted as Slurm accepts them.
fn frequency(file: &ConfFile, p: &Pair) -> Result<u32, ConfError> {
    let bad = || file.bad_value(p, "expected N or task=N (seconds)");
    let mut task = DEFAULT_FREQUENCY;
    for item in p.value.split(',').map(str::trim) {
        match item.split_once('=') {
            None => task = item.parse().map_err(|_| bad())?,
            Some((kind, n)) => {
                let n: u32 = n.trim().parse().map_err(|_| bad())?;
                match kind.trim().to_ascii_lowercase().as_str() {
                    "task" => task = n,
                    "energy" | "network" | "filesystem" => {}
                    _ => return Err(bad()),
                }
            }
        }
    }
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(text: &str) -> Result<JobAcctGather, ConfError> {
        let file = ConfFile::parse(Path::new("slurm.conf"), text)?;
        let mut g = JobAcctGather::default();
        for line in &file.lines {
            for p in line {
                assert!(g.apply(&file, p)?, "{} is a gather key", p.key);
            }
        }
        Ok(g)
    }

    #[test]
    fn frequency_takes_the_task_interval_in_either_form() {
        assert_eq!(read("").unwrap(), JobAcctGather::default());
        assert_eq!(read("JobAcctGatherFrequency=5").unwrap().frequency, 5);
        let g =
            read("JobAcctGatherFrequency=energy=0,task=10\nJobAcctGatherType=jobacct_gather/none");
        assert_eq!(
            g.unwrap(),
            JobAcctGather {
                enabled: false,
                frequency: 10
            }
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = read("JobAcctGatherFrequency=task=x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("JobAcctGatherFrequency"), "{e}");
        assert!(read("JobAcctGatherFrequency=disk=3").is_err());
        assert!(read("JobAcctGatherType=jobacct_gather/cgroup").is_err());
    }
}
