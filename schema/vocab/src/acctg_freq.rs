//! `--acctg-freq` and `JobAcctGatherFrequency`: `<type>=<seconds>[,...]` (a bare number is
//! `task`), how often a step's usage is sampled (`task`) and, in Slurm, its energy, network
//! and file system counters.
//!
//! As Slurm 22.05's srun checks it (seen on a real cluster): the types are `task`, `energy`,
//! `network` and `filesystem`, each with a whole number of seconds (0: sampling only at the
//! end); any other item is `Invalid --acctg-freq specification: ITEM` and srun exits 255.
//! Only `task` means anything here: Sluice has no energy, network or file system gatherer
//! (as Slurm with `AcctGatherEnergyType`, `AcctGatherInterconnectType` and
//! `AcctGatherFilesystemType` unset), so those intervals are checked and kept only.

/// A parsed `--acctg-freq`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcctgFreq {
    /// Seconds between usage samples of a task (0: only at its end).
    pub task: Option<u32>,
}

/// A bad item, in Slurm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid --acctg-freq specification: {0}")]
pub struct AcctgFreqError(pub String);

impl AcctgFreq {
    /// Parses the option's (or `JobAcctGatherFrequency`'s) value.
    pub fn parse(spec: &str) -> Result<Self, AcctgFreqError> {
        let mut out = Self::default();
        for item in spec.split(',') {
            let bad = || AcctgFreqError(item.to_string());
            let (kind, secs) = item.split_once('=').unwrap_or(("task", item));
            let secs = secs
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|_| secs.trim().bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(bad)?;
            match kind.trim().to_ascii_lowercase().as_str() {
                "task" => out.task = Some(secs),
                "energy" | "network" | "filesystem" => {}
                _ => return Err(bad()),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_as_slurm_reads_them() {
        assert_eq!(AcctgFreq::parse("5").unwrap().task, Some(5));
        assert_eq!(AcctgFreq::parse("task=0").unwrap().task, Some(0));
        assert_eq!(AcctgFreq::parse("5,task=3").unwrap().task, Some(3));
        assert_eq!(AcctgFreq::parse("energy=5").unwrap().task, None);
        assert_eq!(
            AcctgFreq::parse("network=1,filesystem=2").unwrap().task,
            None
        );
        for (bad, item) in [
            ("bogus", "bogus"),
            ("task=-1", "task=-1"),
            ("task=x", "task=x"),
            ("task=5,energy", "energy"),
        ] {
            assert_eq!(
                AcctgFreq::parse(bad).unwrap_err().to_string(),
                format!("Invalid --acctg-freq specification: {item}")
            );
        }
    }
}
