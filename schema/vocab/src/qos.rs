//! Quality of service (`sacctmgr add|modify|show qos`): a QOS's priority, flags and limits,
//! shared by the accounting daemon (which stores them), `sacctmgr` (which parses and shows
//! them) and the controller (which applies them to jobs).
//!
//! TRES lists use [`crate::assoc_limits::Tres`]. The default QOS is `normal`, id 1, as a fresh
//! Slurm database has it.

use std::fmt;

use crate::assoc_limits::{Tres, TresEdit};

/// The QOS every database starts with, and the one a job gets without another default.
pub const DEFAULT_QOS: &str = "normal";

/// Its description, as Slurm writes it.
pub const DEFAULT_QOS_DESCRIPTION: &str = "Normal QOS default";

/// QOS flags Sluice applies.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(default)]
pub struct QosFlags {
    /// `DenyOnLimit`: a job over a per-job or per-user limit of the QOS is refused at
    /// submission instead of pending.
    pub deny_on_limit: bool,
    /// `OverPartQOS`: this QOS's limits take precedence over those of the partition's QOS
    /// (`QOS=` on the partition), which otherwise come first.
    pub over_part_qos: bool,
}

impl QosFlags {
    /// Parses sacctmgr's `Flags=` list (`DenyOnLimit`, `-1` or empty for none); the error
    /// names a flag Sluice does not apply.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut f = Self::default();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "-1" | "none" => f = Self::default(),
                "denyonlimit" => f.deny_on_limit = true,
                "overpartqos" => f.over_part_qos = true,
                _ => return Err(format!("Unknown QOS flag {word}")),
            }
        }
        Ok(f)
    }
}

impl fmt::Display for QosFlags {
    /// As sacctmgr shows them (`DenyOnLimit,OverPartQOS`, blank for none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = [
            (self.deny_on_limit, "DenyOnLimit"),
            (self.over_part_qos, "OverPartQOS"),
        ];
        let mut sep = "";
        for (_, name) in set.iter().filter(|(on, _)| *on) {
            write!(f, "{sep}{name}")?;
            sep = ",";
        }
        Ok(())
    }
}

/// A QOS's limits (`None` or an empty TRES list: not limited).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct QosLimits {
    /// `MaxWall` (`MaxWallDurationPerJob`), in minutes.
    pub max_wall_minutes: Option<u32>,
    /// `MaxTRESPerJob`.
    pub max_tres_per_job: Tres,
    /// `MaxTRESPerUser`: resources held by one user's running jobs of this QOS.
    pub max_tres_per_user: Tres,
    /// `MaxJobsPerUser`: one user's running jobs of this QOS.
    pub max_jobs_per_user: Option<u32>,
    /// `MaxSubmitJobsPerUser`: one user's pending and running jobs of this QOS.
    pub max_submit_jobs_per_user: Option<u32>,
    /// `GrpTRES`: resources held by all running jobs of this QOS.
    pub grp_tres: Tres,
    /// `GrpJobs`: running jobs of this QOS.
    pub grp_jobs: Option<u32>,
    /// `GrpSubmitJobs`: pending and running jobs of this QOS.
    pub grp_submit_jobs: Option<u32>,
    /// `MaxTRESMinsPerJob`: what one job may ask for times its time limit, in TRES-minutes
    /// (CPU-minutes, megabyte-minutes, node-minutes).
    pub max_tres_mins_per_job: Tres,
    /// `MaxTRESPerAccount`: resources held by one account's running jobs of this QOS.
    pub max_tres_per_account: Tres,
    /// `MaxJobsPerAccount`: one account's running jobs of this QOS.
    pub max_jobs_per_account: Option<u32>,
    /// `MaxSubmitJobsPerAccount`: one account's pending and running jobs of this QOS.
    pub max_submit_jobs_per_account: Option<u32>,
    /// `MinTRESPerJob`: the least one job may ask for.
    pub min_tres_per_job: Tres,
    /// `MaxTRESPerNode`: the most one job may ask for on each of its nodes.
    pub max_tres_per_node: Tres,
    /// `GrpTRESMins`: what all jobs of this QOS may use, past and running, decayed, in
    /// TRES-minutes (CPU-minutes, megabyte-minutes, node-minutes).
    pub grp_tres_mins: Tres,
}

/// One QOS (the controller saves the dbd's with its state, hence serde).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Qos {
    /// Its name (lower case, as Slurm stores it).
    pub name: String,
    /// `Description`.
    pub description: String,
    /// `Priority`: feeds the multifactor QOS factor.
    pub priority: u32,
    /// `Flags`.
    pub flags: QosFlags,
    /// Its limits.
    pub limits: QosLimits,
    /// `UsageFactor`: what a second of its jobs counts for in the usage charged to their
    /// associations and to the QOS (fair share, `GrpTRESMins`).
    pub usage_factor: UsageFactor,
}

/// A QOS's `UsageFactor`, in millionths (Slurm shows six decimals): 1.0 unless set; 0 charges
/// nothing.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct UsageFactor(u32);

impl UsageFactor {
    /// Slurm's default, 1.0.
    pub const ONE: Self = Self(1_000_000);
    /// The largest factor taken (a thousand; Slurm's are small multipliers).
    pub const MAX: f64 = 1000.0;

    /// `value` as a factor: a number from 0 to [`Self::MAX`], to six decimals; `None` for
    /// anything else (negative, not a number, too large).
    pub fn from_f64(value: f64) -> Option<Self> {
        (value.is_finite() && (0.0..=Self::MAX).contains(&value))
            .then(|| Self((value * 1_000_000.0).round() as u32))
    }

    /// The stored form: millionths.
    pub fn millionths(self) -> u32 {
        self.0
    }

    /// A factor from its stored form (`None`: out of range).
    pub fn from_millionths(m: i64) -> Option<Self> {
        u32::try_from(m)
            .ok()
            .filter(|&m| f64::from(m) <= Self::MAX * 1_000_000.0)
            .map(Self)
    }

    /// As a multiplier.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 1_000_000.0
    }
}

impl Default for UsageFactor {
    fn default() -> Self {
        Self::ONE
    }
}

impl std::fmt::Display for UsageFactor {
    /// As sacctmgr shows it: `1.000000`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:06}", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

/// A change to a QOS: `None` leaves a value alone, `Some(None)` clears a limit (`-1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosEdit {
    /// `Description`.
    pub description: Option<String>,
    /// `Priority` (`-1` sets 0).
    pub priority: Option<u32>,
    /// `Flags`.
    pub flags: Option<QosFlags>,
    /// `MaxWall`.
    pub max_wall_minutes: Option<Option<u32>>,
    /// `MaxTRESPerJob`.
    pub max_tres_per_job: TresEdit,
    /// `MaxTRESPerUser`.
    pub max_tres_per_user: TresEdit,
    /// `MaxJobsPerUser`.
    pub max_jobs_per_user: Option<Option<u32>>,
    /// `MaxSubmitJobsPerUser`.
    pub max_submit_jobs_per_user: Option<Option<u32>>,
    /// `GrpTRES`.
    pub grp_tres: TresEdit,
    /// `GrpJobs`.
    pub grp_jobs: Option<Option<u32>>,
    /// `GrpSubmitJobs`.
    pub grp_submit_jobs: Option<Option<u32>>,
    /// `MaxTRESMinsPerJob`.
    pub max_tres_mins_per_job: TresEdit,
    /// `MaxTRESPerAccount`.
    pub max_tres_per_account: TresEdit,
    /// `MaxJobsPerAccount`.
    pub max_jobs_per_account: Option<Option<u32>>,
    /// `MaxSubmitJobsPerAccount`.
    pub max_submit_jobs_per_account: Option<Option<u32>>,
    /// `MinTRESPerJob`.
    pub min_tres_per_job: TresEdit,
    /// `MaxTRESPerNode`.
    pub max_tres_per_node: TresEdit,
    /// `GrpTRESMins`.
    pub grp_tres_mins: TresEdit,
    /// `UsageFactor` (`-1` sets 1.0).
    pub usage_factor: Option<UsageFactor>,
}

impl QosEdit {
    /// Whether the edit changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `qos` with this edit applied.
    pub fn applied(&self, qos: &Qos) -> Qos {
        let mut out = qos.clone();
        if let Some(d) = &self.description {
            out.description.clone_from(d);
        }
        if let Some(p) = self.priority {
            out.priority = p;
        }
        if let Some(f) = self.flags {
            out.flags = f;
        }
        if let Some(u) = self.usage_factor {
            out.usage_factor = u;
        }
        let set = |slot: &mut Option<u32>, v: Option<Option<u32>>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        let l = &mut out.limits;
        set(&mut l.max_wall_minutes, self.max_wall_minutes);
        set(&mut l.max_jobs_per_user, self.max_jobs_per_user);
        set(
            &mut l.max_submit_jobs_per_user,
            self.max_submit_jobs_per_user,
        );
        set(&mut l.grp_jobs, self.grp_jobs);
        set(&mut l.grp_submit_jobs, self.grp_submit_jobs);
        l.max_tres_per_job.apply(&self.max_tres_per_job);
        l.max_tres_per_user.apply(&self.max_tres_per_user);
        l.grp_tres.apply(&self.grp_tres);
        l.max_tres_mins_per_job.apply(&self.max_tres_mins_per_job);
        set(&mut l.max_jobs_per_account, self.max_jobs_per_account);
        set(
            &mut l.max_submit_jobs_per_account,
            self.max_submit_jobs_per_account,
        );
        l.max_tres_per_account.apply(&self.max_tres_per_account);
        l.min_tres_per_job.apply(&self.min_tres_per_job);
        l.max_tres_per_node.apply(&self.max_tres_per_node);
        l.grp_tres_mins.apply(&self.grp_tres_mins);
        out
    }
}

/// Whether `name` can be a QOS name: not empty, no separators Slurm's lists use.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assoc_limits::TresKind;

    #[test]
    fn flags_parse_and_show() {
        assert!(QosFlags::parse("DenyOnLimit").unwrap().deny_on_limit);
        assert!(!QosFlags::parse("-1").unwrap().deny_on_limit);
        assert_eq!(
            QosFlags::parse("denyonlimit").unwrap().to_string(),
            "DenyOnLimit"
        );
        let both = QosFlags::parse("OverPartQOS,DenyOnLimit").unwrap();
        assert!(both.over_part_qos && both.deny_on_limit);
        assert_eq!(both.to_string(), "DenyOnLimit,OverPartQOS");
        assert_eq!(QosFlags::parse(&both.to_string()).unwrap(), both);
        assert!(
            QosFlags::parse("NoReserve")
                .unwrap_err()
                .contains("NoReserve")
        );
    }

    #[test]
    fn an_edit_sets_and_clears() {
        let q = Qos {
            name: "high".into(),
            priority: 5,
            limits: QosLimits {
                max_jobs_per_user: Some(2),
                ..QosLimits::default()
            },
            ..Qos::default()
        };
        let e = QosEdit {
            priority: Some(10),
            max_jobs_per_user: Some(None),
            grp_tres: vec![(TresKind::Cpu, Some(8))],
            ..QosEdit::default()
        };
        let out = e.applied(&q);
        assert_eq!(out.priority, 10);
        assert_eq!(out.limits.max_jobs_per_user, None);
        assert_eq!(out.limits.grp_tres.cpu, Some(8));
        assert!(QosEdit::default().is_empty());
    }

    #[test]
    fn usage_factors_are_six_decimals_from_zero_to_a_thousand() {
        assert_eq!(UsageFactor::default().to_string(), "1.000000");
        let half = UsageFactor::from_f64(0.5).unwrap();
        assert_eq!(
            (half.to_string(), half.millionths()),
            ("0.500000".into(), 500_000)
        );
        assert_eq!(UsageFactor::from_f64(2.25).unwrap().as_f64(), 2.25);
        assert_eq!(UsageFactor::from_f64(0.0).unwrap().to_string(), "0.000000");
        for bad in [-0.1, f64::NAN, f64::INFINITY, 1000.5] {
            assert_eq!(UsageFactor::from_f64(bad), None, "{bad}");
        }
        assert_eq!(UsageFactor::from_millionths(-1), None);
        assert_eq!(
            UsageFactor::from_millionths(2_000_000),
            UsageFactor::from_f64(2.0)
        );
        let edit = QosEdit {
            usage_factor: Some(half),
            ..Default::default()
        };
        assert_eq!(edit.applied(&Qos::default()).usage_factor, half);
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_name("high-prio_1"));
        assert!(!valid_name(""));
        assert!(!valid_name("a,b"));
        assert!(!valid_name("a b"));
    }
}
