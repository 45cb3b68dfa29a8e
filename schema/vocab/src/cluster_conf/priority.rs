//! The job priority keys of `slurm.conf`: `PriorityType` (`priority/basic`, the default: the
//! queue in submission order; `priority/multifactor`: a weighted sum of factors), the
//! `PriorityWeight*` keys, `PriorityMaxAge`, `PriorityDecayHalfLife`,
//! `PriorityUsageResetPeriod`, `PriorityFavorSmall`, `PriorityCalcPeriod` and `PriorityFlags`.
//!
//! Durations take Slurm's time formats (`7-0` is seven days, a bare number is minutes,
//! `0:30` thirty seconds). A
//! flag Sluice does not implement is a warning naming it, so a site's file still loads.

use super::timefmt::parse_duration_secs;
use super::{ConfWarning, warning};
use crate::conf::{ConfError, ConfFile, Pair};

/// `PriorityType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PriorityType {
    /// `priority/basic` (default): first come, first served (`--nice` still orders).
    #[default]
    Basic,
    /// `priority/multifactor`: age, fair share, job size, partition and QOS factors.
    Multifactor,
}

impl PriorityType {
    /// The plugin name as `slurm.conf` and `scontrol show config` write it.
    pub fn name(self) -> &'static str {
        match self {
            PriorityType::Basic => "priority/basic",
            PriorityType::Multifactor => "priority/multifactor",
        }
    }
}

/// `PriorityUsageResetPeriod`: when the fair-share usage starts again from zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageReset {
    /// `NONE` (default): never; only the half-life decay forgets usage.
    #[default]
    None,
    /// `NOW`: usage before the controller's start does not count.
    Now,
    /// `DAILY`: at midnight (UTC).
    Daily,
    /// `WEEKLY`: Sunday midnight.
    Weekly,
    /// `MONTHLY`: the first of the month.
    Monthly,
    /// `QUARTERLY`: the first of January, April, July and October.
    Quarterly,
    /// `YEARLY`: the first of January.
    Yearly,
}

impl UsageReset {
    /// Slurm's spelling.
    pub fn name(self) -> &'static str {
        match self {
            UsageReset::None => "NONE",
            UsageReset::Now => "NOW",
            UsageReset::Daily => "DAILY",
            UsageReset::Weekly => "WEEKLY",
            UsageReset::Monthly => "MONTHLY",
            UsageReset::Quarterly => "QUARTERLY",
            UsageReset::Yearly => "YEARLY",
        }
    }
}

impl UsageReset {
    /// The last reset at or before `now` (unix seconds, UTC calendar): usage of runs before
    /// it does not count. `started` is when the controller started (`NOW`); 0 for `NONE`.
    pub fn since(self, now: i64, started: i64) -> i64 {
        use chrono::{Datelike, NaiveDate, TimeZone, Utc};
        let Some(today) = Utc.timestamp_opt(now, 0).single().map(|t| t.date_naive()) else {
            return 0;
        };
        let midnight = |d: NaiveDate| {
            d.and_hms_opt(0, 0, 0)
                .map_or(0, |t| t.and_utc().timestamp())
        };
        let first_of = |month: u32| NaiveDate::from_ymd_opt(today.year(), month, 1);
        match self {
            UsageReset::None => 0,
            UsageReset::Now => started,
            UsageReset::Daily => midnight(today),
            UsageReset::Weekly => {
                let back = today.weekday().num_days_from_sunday();
                midnight(today - chrono::Days::new(u64::from(back)))
            }
            UsageReset::Monthly => first_of(today.month()).map_or(0, midnight),
            UsageReset::Quarterly => first_of((today.month0() / 3) * 3 + 1).map_or(0, midnight),
            UsageReset::Yearly => first_of(1).map_or(0, midnight),
        }
    }
}

/// The priority settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityConf {
    /// `PriorityType`.
    pub kind: PriorityType,
    /// `PriorityWeightAge`.
    pub weight_age: u32,
    /// `PriorityWeightFairshare`.
    pub weight_fairshare: u32,
    /// `PriorityWeightJobSize`.
    pub weight_job_size: u32,
    /// `PriorityWeightPartition`.
    pub weight_partition: u32,
    /// `PriorityWeightQOS`.
    pub weight_qos: u32,
    /// `PriorityWeightTRES`: a weight per TRES Sluice counts (`cpu`, `mem`, `node`), in
    /// Slurm's TRES order.
    pub weight_tres: Vec<(TresKind, u32)>,
    /// `PriorityMaxAge` in seconds (default 7 days): age at which the age factor is 1.
    pub max_age_secs: u64,
    /// `PriorityDecayHalfLife` in seconds (default 7 days; 0: usage never decays).
    pub decay_half_life_secs: u64,
    /// `PriorityUsageResetPeriod` (default `NONE`).
    pub usage_reset: UsageReset,
    /// `PriorityFavorSmall`: smaller jobs get the larger job size factor (default `NO`).
    pub favor_small: bool,
    /// `PriorityCalcPeriod` in seconds (default 5 minutes): how often priorities are
    /// recomputed.
    pub calc_period_secs: u64,
    /// `PriorityFlags=ACCRUE_ALWAYS`: age counts from submission even while the job may not
    /// start (held, dependent, before `--begin`).
    pub accrue_always: bool,
    /// The fair-share algorithm: Fair Tree unless `PriorityFlags=NO_FAIR_TREE`.
    pub fairshare_algorithm: crate::fairshare::Algorithm,
    /// `PriorityFlags` as written, for `scontrol show config`.
    pub flags_text: String,
}

impl Default for PriorityConf {
    fn default() -> Self {
        Self {
            kind: PriorityType::Basic,
            weight_age: 0,
            weight_fairshare: 0,
            weight_job_size: 0,
            weight_partition: 0,
            weight_qos: 0,
            weight_tres: Vec::new(),
            max_age_secs: 7 * 86_400,
            decay_half_life_secs: 7 * 86_400,
            usage_reset: UsageReset::None,
            favor_small: false,
            calc_period_secs: 300,
            accrue_always: false,
            fairshare_algorithm: crate::fairshare::Algorithm::FairTree,
            flags_text: String::new(),
        }
    }
}

/// A TRES the priority's TRES factor counts, in Slurm's TRES order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TresKind {
    /// CPUs.
    Cpu,
    /// Memory.
    Mem,
    /// Nodes.
    Node,
}

impl TresKind {
    /// Slurm's name of the TRES (`cpu`, `mem`, `node`).
    pub fn name(self) -> &'static str {
        match self {
            TresKind::Cpu => "cpu",
            TresKind::Mem => "mem",
            TresKind::Node => "node",
        }
    }
}

/// `PriorityWeightTRES=CPU=1000,Mem=2000`: the TRES Sluice counts with their weights; other
/// TRES (GRES, licenses, billing) are said to be ignored.
fn tres_weights(
    file: &ConfFile,
    p: &Pair,
    warnings: &mut Vec<ConfWarning>,
) -> Result<Vec<(TresKind, u32)>, ConfError> {
    let mut out: Vec<(TresKind, u32)> = Vec::new();
    for item in p.value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((name, weight)) = item.split_once('=') else {
            return Err(file.bad_value(p, format!("expected TRES=weight, not {item}")));
        };
        let weight: u32 = weight
            .trim()
            .parse()
            .map_err(|_| file.bad_value(p, format!("bad weight for {name}: {weight}")))?;
        let kind = match name.trim().to_ascii_lowercase().as_str() {
            "cpu" => TresKind::Cpu,
            "mem" => TresKind::Mem,
            "node" => TresKind::Node,
            _ => {
                warnings.push(ConfWarning {
                    key: format!("{}={}", p.key, name.trim()),
                    note: Some("not implemented by Sluice"),
                    ..warning(file, p)
                });
                continue;
            }
        };
        out.retain(|(k, _)| *k != kind);
        out.push((kind, weight));
    }
    out.sort();
    Ok(out)
}

/// Flags Sluice reads and ignores, with why.
const IGNORED_FLAGS: &[&str] = &[
    "CALCULATE_RUNNING",
    "DEPTH_OBLIVIOUS",
    "INCR_ONLY",
    "MAX_TRES",
    "NO_NORMAL_ALL",
    "NO_NORMAL_ASSOC",
    "NO_NORMAL_PART",
    "NO_NORMAL_QOS",
    "NO_NORMAL_TRES",
    "SMALL_RELATIVE_TO_TIME",
];

impl PriorityConf {
    /// Applies one top-level pair; `false` when the key is not a priority key.
    pub(crate) fn apply(
        &mut self,
        file: &ConfFile,
        p: &Pair,
        warnings: &mut Vec<ConfWarning>,
    ) -> Result<bool, ConfError> {
        let secs = |p: &Pair| -> Result<u64, ConfError> {
            parse_duration_secs(&p.value).map_err(|e| file.bad_value(p, e))
        };
        match p.key.to_ascii_lowercase().as_str() {
            "prioritytype" => {
                self.kind = match p.value.trim().to_ascii_lowercase().as_str() {
                    "priority/basic" => PriorityType::Basic,
                    "priority/multifactor" => PriorityType::Multifactor,
                    _ => {
                        return Err(
                            file.bad_value(p, "expected priority/basic or priority/multifactor")
                        );
                    }
                }
            }
            "priorityweightage" => self.weight_age = file.number(p)?,
            "priorityweightfairshare" => self.weight_fairshare = file.number(p)?,
            "priorityweightjobsize" => self.weight_job_size = file.number(p)?,
            "priorityweightpartition" => self.weight_partition = file.number(p)?,
            "priorityweightqos" => self.weight_qos = file.number(p)?,
            "prioritymaxage" => self.max_age_secs = secs(p)?,
            "prioritydecayhalflife" => self.decay_half_life_secs = secs(p)?,
            "prioritycalcperiod" => self.calc_period_secs = secs(p)?.max(1),
            "priorityfavorsmall" => {
                self.favor_small = match p.value.trim().to_ascii_uppercase().as_str() {
                    "YES" => true,
                    "NO" => false,
                    _ => return Err(file.bad_value(p, "expected YES or NO")),
                }
            }
            "priorityusageresetperiod" => {
                self.usage_reset = match p.value.trim().to_ascii_uppercase().as_str() {
                    "NONE" => UsageReset::None,
                    "NOW" => UsageReset::Now,
                    "DAILY" => UsageReset::Daily,
                    "WEEKLY" => UsageReset::Weekly,
                    "MONTHLY" => UsageReset::Monthly,
                    "QUARTERLY" => UsageReset::Quarterly,
                    "YEARLY" => UsageReset::Yearly,
                    _ => {
                        return Err(file.bad_value(
                            p,
                            "expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY",
                        ));
                    }
                }
            }
            "priorityflags" => self.flags(file, p, warnings)?,
            "priorityweighttres" => self.weight_tres = tres_weights(file, p, warnings)?,
            // Association priorities and site factors: Sluice has neither; known, read, and
            // said to be ignored.
            "priorityweightassoc" | "prioritysitefactorplugin" => {
                warnings.push(ConfWarning {
                    note: Some("not implemented by Sluice"),
                    ..warning(file, p)
                });
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn flags(
        &mut self,
        file: &ConfFile,
        p: &Pair,
        warnings: &mut Vec<ConfWarning>,
    ) -> Result<(), ConfError> {
        self.accrue_always = false;
        self.fairshare_algorithm = crate::fairshare::Algorithm::FairTree;
        self.flags_text = p.value.trim().to_string();
        for flag in p.value.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match flag.to_ascii_uppercase().as_str() {
                "ACCRUE_ALWAYS" => self.accrue_always = true,
                "NO_FAIR_TREE" => {
                    self.fairshare_algorithm = crate::fairshare::Algorithm::Classic;
                }
                f if IGNORED_FLAGS.contains(&f) => warnings.push(ConfWarning {
                    key: format!("{}={flag}", p.key),
                    note: Some("not implemented by Sluice"),
                    ..warning(file, p)
                }),
                _ => return Err(file.bad_value(p, format!("unknown flag {flag}"))),
            }
        }
        Ok(())
    }
}
