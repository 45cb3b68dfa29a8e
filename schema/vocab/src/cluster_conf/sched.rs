//! `SchedulerParameters`: the scheduler's options, a comma-separated list of `name=value`
//! (and bare) options with Slurm's names, units and defaults:
//!
//! - `bf_window=#`: minutes into the future backfill plans reservations (default 1440, one day;
//!   1 to 43200);
//! - `bf_max_job_test=#`: most jobs backfill tries per pass (default 500; 1 to 1,000,000);
//! - `bf_interval=#`: seconds between backfill passes (1 to 10800, or -1 for none);
//! - `default_queue_depth=#`: jobs a pass considers for starting, the whole queue being tested
//!   every 60 s (Slurm's `sched_interval` default);
//! - `sbatch_wait_nodes`: a batch script starts only once every node of its allocation is up
//!   (booted), not as soon as its batch host is; `sbatch --wait-all-nodes` overrides it;
//! - `salloc_wait_nodes`: salloc's allocation is granted only once every node is up, not at
//!   once; `salloc --wait-all-nodes` overrides it.
//!
//! Their defaults differ from Slurm's (30 s, 100 jobs): without them Sluice backfills within
//! every scheduling pass and every pass considers the whole queue (it schedules on events and
//! can afford it); given, they apply as in Slurm. A bad value is an error naming file, line and
//! key; an option Sluice does not know is a warning naming it (`SchedulerParameters=defer`), as
//! for `SlurmctldParameters`. The last `SchedulerParameters` line wins, as in Slurm.

use super::exclusions::comma_list as list;
use super::{ConfWarning, warning};
use crate::conf::{ConfError, ConfFile, Pair};

/// The scheduler's options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedParams {
    /// `bf_window`: minutes into the future backfill plans (default 1440).
    pub bf_window_min: u32,
    /// `bf_max_job_test`: most jobs backfill tries per pass (default 500).
    pub bf_max_job_test: u32,
    /// `bf_interval`: how often backfill runs (default: within every pass).
    pub bf_interval: BackfillEvery,
    /// `default_queue_depth`: jobs a pass considers for starting (default: all of them).
    pub default_queue_depth: Option<u32>,
    /// `sbatch_wait_nodes`: batch scripts wait for every node of their allocation to be up.
    pub sbatch_wait_nodes: bool,
    /// `salloc_wait_nodes`: salloc's allocations are granted once every node is up.
    pub salloc_wait_nodes: bool,
    /// The value as written, for `scontrol show config` (`None` when not given).
    pub text: Option<String>,
}

impl Default for SchedParams {
    fn default() -> Self {
        Self {
            bf_window_min: 1440,
            bf_max_job_test: 500,
            bf_interval: BackfillEvery::Pass,
            default_queue_depth: None,
            sbatch_wait_nodes: false,
            salloc_wait_nodes: false,
            text: None,
        }
    }
}

/// How often backfill runs (`bf_interval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackfillEvery {
    /// Within every scheduling pass (Sluice's default).
    Pass,
    /// At most once in this many seconds.
    Secs(u32),
    /// Never (`bf_interval=-1`).
    Never,
}

impl SchedParams {
    /// How far ahead backfill plans, in seconds.
    pub fn bf_window_secs(&self) -> u64 {
        u64::from(self.bf_window_min) * 60
    }

    /// Applies one top-level pair; `false` when the key is not `SchedulerParameters`.
    pub(crate) fn apply(
        &mut self,
        file: &ConfFile,
        p: &Pair,
        warnings: &mut Vec<ConfWarning>,
    ) -> Result<bool, ConfError> {
        if !p.is("SchedulerParameters") {
            return Ok(false);
        }
        let mut next = SchedParams {
            text: Some(p.value.trim().to_string()).filter(|t| !t.is_empty()),
            ..SchedParams::default()
        };
        for opt in list(&p.value) {
            let (name, value) = match opt.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim())),
                None => (opt, None),
            };
            let number = |min: i64, max: i64| -> Result<i64, ConfError> {
                let v = value.ok_or_else(|| file.bad_value(p, format!("{name} needs a value")))?;
                match v.parse::<i64>() {
                    Ok(n) if (min..=max).contains(&n) => Ok(n),
                    _ => Err(file.bad_value(
                        p,
                        format!("{name}={v}: expected a number from {min} to {max}"),
                    )),
                }
            };
            match name.to_ascii_lowercase().as_str() {
                "bf_window" => next.bf_window_min = narrow(number(1, 43_200)?),
                "bf_max_job_test" => next.bf_max_job_test = narrow(number(1, 1_000_000)?),
                "bf_interval" => {
                    next.bf_interval = match value {
                        Some("-1") => BackfillEvery::Never,
                        _ => BackfillEvery::Secs(narrow(number(1, 10_800)?)),
                    };
                }
                "default_queue_depth" => {
                    next.default_queue_depth = Some(narrow(number(0, i64::from(u32::MAX))?));
                }
                "sbatch_wait_nodes" if value.is_none() => next.sbatch_wait_nodes = true,
                "salloc_wait_nodes" if value.is_none() => next.salloc_wait_nodes = true,
                _ => warnings.push(ConfWarning {
                    key: format!("{}={name}", p.key),
                    ..warning(file, p)
                }),
            }
        }
        *self = next;
        Ok(true)
    }
}

/// A value already checked to be within `u32`.
fn narrow(n: i64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster_conf::CtldConf;
    use std::path::Path;

    const BASE: &str = "ClusterName=a\nSlurmctldHost=ctl\n";

    fn read(extra: &str) -> Result<(SchedParams, Vec<ConfWarning>), ConfError> {
        let text = format!("{BASE}{extra}");
        CtldConf::parse(Path::new("slurm.conf"), &text).map(|(c, w)| (c.sched, w))
    }

    #[test]
    fn slurms_defaults_without_the_key() {
        let (s, w) = read("").unwrap();
        assert!(w.is_empty());
        assert_eq!(s, SchedParams::default());
        assert_eq!(
            (s.bf_window_secs(), s.bf_max_job_test, s.bf_interval),
            (86_400, 500, BackfillEvery::Pass)
        );
        assert_eq!((s.default_queue_depth, s.text), (None, None));
    }

    #[test]
    fn reads_the_backfill_options_in_slurms_units() {
        let (s, w) = read("SchedulerParameters=bf_window=60,BF_MAX_JOB_TEST=7\n").unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((s.bf_window_min, s.bf_window_secs()), (60, 3600));
        assert_eq!(s.bf_max_job_test, 7);
        assert_eq!(s.text.as_deref(), Some("bf_window=60,BF_MAX_JOB_TEST=7"));
        assert!(!s.sbatch_wait_nodes);
        let (s, w) = read("SchedulerParameters=sbatch_wait_nodes,salloc_wait_nodes\n").unwrap();
        assert!(
            s.sbatch_wait_nodes && s.salloc_wait_nodes && w.is_empty(),
            "{w:?}"
        );
    }

    #[test]
    fn the_last_line_wins_whole() {
        let (s, _) =
            read("SchedulerParameters=bf_window=60\nSchedulerParameters=bf_max_job_test=9\n")
                .unwrap();
        assert_eq!((s.bf_window_min, s.bf_max_job_test), (1440, 9));
    }

    #[test]
    fn interval_and_depth_are_read_and_unknown_options_are_warnings() {
        let text = "SchedulerParameters=bf_interval=60,default_queue_depth=10,defer,bf_continue\n";
        let (s, w) = read(text).unwrap();
        assert_eq!(
            (s.bf_interval, s.default_queue_depth),
            (BackfillEvery::Secs(60), Some(10))
        );
        let keys: Vec<&str> = w.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "SchedulerParameters=defer",
                "SchedulerParameters=bf_continue"
            ]
        );
        assert!(w.iter().all(|w| w.line == 3));
        let (s, _) = read("SchedulerParameters=bf_interval=-1\n").unwrap();
        assert_eq!(s.bf_interval, BackfillEvery::Never);
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for bad in [
            "bf_window=0",
            "bf_window=43201",
            "bf_max_job_test=0",
            "bf_max_job_test=x",
            "bf_interval=0",
            "bf_interval=10801",
            "default_queue_depth=-5",
            "bf_window",
        ] {
            let e = read(&format!("SchedulerParameters=defer,{bad}\n"))
                .map(|_| ())
                .unwrap_err();
            let text = e.to_string();
            assert!(
                text.starts_with("slurm.conf:3: invalid value for SchedulerParameters: "),
                "{bad}: {text}"
            );
            let name = bad.split('=').next().unwrap();
            assert!(text.contains(&format!("({name}")), "{bad}: {text}");
        }
    }
}
