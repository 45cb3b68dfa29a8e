//! `--cpu-freq={p1[-p2[:p3]]}`: the CPU frequency (kHz, or `low`, `medium`, `high`,
//! `highm1`) or governor a step's tasks run at, as a minimum-maximum range with an optional
//! governor.
//!
//! The checks and words are Slurm 22.05's srun's, as seen on a real cluster: words are read
//! without regard to case and shown capitalised in `SLURM_CPU_FREQ_REQ` (`Low-High:UserSpace`,
//! `OnDemand`, `1000-2000`); a value that is neither is `unrecognized --cpu-freq argument "X"`
//! (`1000-` and `-5` name the empty side); a governor after a single value is `gov on
//! cpu-frec (G) illegal without max`; a minimum not below the maximum is `min cpu-frec (A)
//! must be < max cpu-freq (B)`, the words counting above every number (`1000-high` is good,
//! `low-2000` is not); a governor outside `CpuFreqGovernors` (Slurm's default, the one here:
//! OnDemand, Performance, UserSpace) is `governor of G is not allowed in slurm.conf`; a third
//! value after a second `-` is dropped. Each error is followed by `Invalid --cpu-freq argument`
//! and srun exits 255.

/// A frequency: kHz, or one of Slurm's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    /// kHz.
    Khz(u32),
    /// The lowest available.
    Low,
    /// The middle of the available ones.
    Medium,
    /// The highest available.
    High,
    /// The one below the highest.
    HighM1,
}

impl Freq {
    /// The order Slurm compares them in: every word above every number.
    fn rank(self) -> u64 {
        const WORDS: u64 = 0x8000_0000;
        match self {
            Self::Khz(k) => u64::from(k),
            Self::Low => WORDS + 1,
            Self::Medium => WORDS + 2,
            Self::High => WORDS + 3,
            Self::HighM1 => WORDS + 4,
        }
    }

    fn show(self) -> String {
        match self {
            Self::Khz(k) => k.to_string(),
            Self::Low => "Low".into(),
            Self::Medium => "Medium".into(),
            Self::High => "High".into(),
            Self::HighM1 => "Highm1".into(),
        }
    }

    fn parse(word: &str) -> Option<Self> {
        Some(match word.to_ascii_lowercase().as_str() {
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            "highm1" => Self::HighM1,
            w => Self::Khz(w.parse::<u32>().ok().filter(|k| *k > 0)?),
        })
    }

    /// The frequency in kHz among `available` (ascending; empty: unknown).
    pub fn khz(self, available: &[u32]) -> Option<u32> {
        match self {
            Self::Khz(k) => Some(k),
            Self::Low => available.first().copied(),
            Self::Medium => available.get(available.len().checked_sub(1)? / 2).copied(),
            Self::High => available.last().copied(),
            Self::HighM1 => available
                .get(available.len().checked_sub(2)?)
                .or(available.last())
                .copied(),
        }
    }
}

/// A CPU frequency governor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Governor {
    Conservative,
    OnDemand,
    Performance,
    PowerSave,
    SchedUtil,
    UserSpace,
}

impl Governor {
    fn parse(word: &str) -> Option<Self> {
        Some(match word.to_ascii_lowercase().as_str() {
            "conservative" => Self::Conservative,
            "ondemand" => Self::OnDemand,
            "performance" => Self::Performance,
            "powersave" => Self::PowerSave,
            "schedutil" => Self::SchedUtil,
            "userspace" => Self::UserSpace,
            _ => return None,
        })
    }

    /// As `SLURM_CPU_FREQ_REQ` shows it.
    pub fn show(self) -> &'static str {
        match self {
            Self::Conservative => "Conservative",
            Self::OnDemand => "OnDemand",
            Self::Performance => "Performance",
            Self::PowerSave => "PowerSave",
            Self::SchedUtil => "SchedUtil",
            Self::UserSpace => "UserSpace",
        }
    }

    /// As the kernel names it (`scaling_governor`).
    pub fn sysfs(self) -> &'static str {
        match self {
            Self::Conservative => "conservative",
            Self::OnDemand => "ondemand",
            Self::Performance => "performance",
            Self::PowerSave => "powersave",
            Self::SchedUtil => "schedutil",
            Self::UserSpace => "userspace",
        }
    }

    /// Slurm's default `CpuFreqGovernors`.
    fn allowed(self) -> bool {
        matches!(self, Self::OnDemand | Self::Performance | Self::UserSpace)
    }
}

/// A parsed `--cpu-freq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuFreq {
    /// One frequency (run at it, under the `userspace` governor).
    One(Freq),
    /// Only a governor.
    Governor(Governor),
    /// A range, with an optional governor.
    Range(Freq, Freq, Option<Governor>),
}

/// A bad `--cpu-freq`, in srun's words (srun adds [`CpuFreqError::LAST`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuFreqError {
    #[error("unrecognized --cpu-freq argument \"{0}\"")]
    Unrecognized(String),
    #[error("gov on cpu-frec ({0}) illegal without max")]
    GovernorWithoutMax(String),
    #[error("min cpu-frec ({0}) must be < max cpu-freq ({1})")]
    MinNotBelowMax(String, String),
    #[error("governor of {0} is not allowed in slurm.conf")]
    GovernorNotAllowed(String),
}

impl CpuFreqError {
    /// srun's line after any of these.
    pub const LAST: &'static str = "Invalid --cpu-freq argument";
}

impl CpuFreq {
    /// Parses the option's value.
    pub fn parse(spec: &str) -> Result<Self, CpuFreqError> {
        let (range, gov) = match spec.split_once(':') {
            Some((r, g)) => (r, Some(g)),
            None => (spec, None),
        };
        let mut sides = range.split('-');
        let first = sides.next().unwrap_or_default();
        let second = sides.next();
        let unrecognized = |w: &str| CpuFreqError::Unrecognized(w.to_string());
        let Some(max_word) = second else {
            if let Some(g) = gov {
                return Err(CpuFreqError::GovernorWithoutMax(g.to_string()));
            }
            if let Some(g) = Governor::parse(first) {
                return if g.allowed() {
                    Ok(Self::Governor(g))
                } else {
                    Err(CpuFreqError::GovernorNotAllowed(first.to_string()))
                };
            }
            return Freq::parse(first)
                .map(Self::One)
                .ok_or_else(|| unrecognized(first));
        };
        let min = Freq::parse(first).ok_or_else(|| unrecognized(first))?;
        let max = Freq::parse(max_word).ok_or_else(|| unrecognized(max_word))?;
        if min.rank() >= max.rank() {
            return Err(CpuFreqError::MinNotBelowMax(
                first.to_string(),
                max_word.to_string(),
            ));
        }
        let gov = match gov {
            None => None,
            Some(g) => {
                let parsed = Governor::parse(g).ok_or_else(|| unrecognized(g))?;
                if !parsed.allowed() {
                    return Err(CpuFreqError::GovernorNotAllowed(g.to_string()));
                }
                Some(parsed)
            }
        };
        Ok(Self::Range(min, max, gov))
    }

    /// `SLURM_CPU_FREQ_REQ`'s value; parses back to itself.
    pub fn env_value(&self) -> String {
        match self {
            Self::One(f) => f.show(),
            Self::Governor(g) => g.show().to_string(),
            Self::Range(min, max, gov) => {
                let mut s = format!("{}-{}", min.show(), max.show());
                if let Some(g) = gov {
                    s.push(':');
                    s.push_str(g.show());
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values and what Slurm 22.05's srun showed for them.
    #[test]
    fn shown_as_slurm_shows_them() {
        for (spec, shown) in [
            ("high", "High"),
            ("1000-2000:performance", "1000-2000:Performance"),
            ("2000000", "2000000"),
            ("low-high", "Low-High"),
            ("ondemand", "OnDemand"),
            ("highm1", "Highm1"),
            ("userspace", "UserSpace"),
            ("low-high:UserSpace", "Low-High:UserSpace"),
            ("medium-highm1", "Medium-Highm1"),
            ("1000-2000-3000", "1000-2000"),
            ("1000-high", "1000-High"),
        ] {
            let f = CpuFreq::parse(spec).unwrap();
            assert_eq!(f.env_value(), shown, "{spec}");
            assert_eq!(CpuFreq::parse(&f.env_value()), Ok(f));
        }
    }

    #[test]
    fn refused_in_slurms_words() {
        for (spec, words) in [
            ("bogus", "unrecognized --cpu-freq argument \"bogus\""),
            ("1000-", "unrecognized --cpu-freq argument \"\""),
            ("-5", "unrecognized --cpu-freq argument \"\""),
            ("0", "unrecognized --cpu-freq argument \"0\""),
            (
                "medium:userspace",
                "gov on cpu-frec (userspace) illegal without max",
            ),
            ("1000:2000", "gov on cpu-frec (2000) illegal without max"),
            (
                "low-2000:powersave",
                "min cpu-frec (low) must be < max cpu-freq (2000)",
            ),
            (
                "high-low",
                "min cpu-frec (high) must be < max cpu-freq (low)",
            ),
            (
                "2000-1000",
                "min cpu-frec (2000) must be < max cpu-freq (1000)",
            ),
            (
                "schedutil",
                "governor of schedutil is not allowed in slurm.conf",
            ),
            (
                "powersave",
                "governor of powersave is not allowed in slurm.conf",
            ),
        ] {
            assert_eq!(
                CpuFreq::parse(spec).unwrap_err().to_string(),
                words,
                "{spec}"
            );
        }
    }

    #[test]
    fn words_pick_among_the_available_frequencies() {
        let avail = [800_000, 1_200_000, 1_600_000, 2_000_000];
        assert_eq!(Freq::Low.khz(&avail), Some(800_000));
        assert_eq!(Freq::Medium.khz(&avail), Some(1_200_000));
        assert_eq!(Freq::High.khz(&avail), Some(2_000_000));
        assert_eq!(Freq::HighM1.khz(&avail), Some(1_600_000));
        assert_eq!(Freq::Khz(5).khz(&[]), Some(5));
        assert_eq!(Freq::High.khz(&[]), None);
    }
}
