//! Association limits (`sacctmgr ... set MaxJobs=... GrpTRES=...`) and
//! `AccountingStorageEnforce`: shared by the accounting daemon (which stores and inherits
//! them), `sacctmgr` (which parses and shows them) and the controller (which enforces them).
//!
//! TRES lists use Slurm's spelling, `cpu=4,mem=2G,node=1`; memory is kept in megabytes and
//! shown with an `M` suffix as sacctmgr shows it. A value of `-1` clears that resource.

use std::fmt;

/// The trackable resources a limit may name, in the order Slurm lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TresKind {
    /// `cpu`: CPUs.
    Cpu,
    /// `mem`: memory in megabytes.
    Mem,
    /// `node`: nodes.
    Node,
}

impl TresKind {
    /// Slurm's name of the resource.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Mem => "mem",
            Self::Node => "node",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Some(Self::Cpu),
            "mem" => Some(Self::Mem),
            "node" => Some(Self::Node),
            _ => None,
        }
    }
}

/// Per-resource limits; a resource without a value is not limited.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(default)]
pub struct Tres {
    /// CPUs.
    pub cpu: Option<u64>,
    /// Memory in megabytes.
    pub mem_mb: Option<u64>,
    /// Nodes.
    pub node: Option<u64>,
}

/// A change to a [`Tres`]: each named resource gets a value, or is cleared (`-1`).
pub type TresEdit = Vec<(TresKind, Option<u64>)>;

impl Tres {
    /// The value of `kind`.
    pub fn get(&self, kind: TresKind) -> Option<u64> {
        match kind {
            TresKind::Cpu => self.cpu,
            TresKind::Mem => self.mem_mb,
            TresKind::Node => self.node,
        }
    }

    fn slot(&mut self, kind: TresKind) -> &mut Option<u64> {
        match kind {
            TresKind::Cpu => &mut self.cpu,
            TresKind::Mem => &mut self.mem_mb,
            TresKind::Node => &mut self.node,
        }
    }

    /// Whether no resource is limited.
    pub fn is_empty(&self) -> bool {
        self.cpu.is_none() && self.mem_mb.is_none() && self.node.is_none()
    }

    /// Applies `edit`: named resources are set or cleared, the others kept.
    pub fn apply(&mut self, edit: &TresEdit) {
        for (kind, value) in edit {
            *self.slot(*kind) = *value;
        }
    }

    /// Parses a stored list (`cpu=4,mem=2048,node=1`, memory in plain megabytes); `None` on
    /// anything else, so a corrupted value is noticed.
    pub fn from_stored(s: &str) -> Option<Self> {
        let mut t = Self::default();
        t.apply(&parse_edit(s).ok()?);
        Some(t)
    }

    /// The stored form, memory in plain megabytes; `""` when nothing is limited.
    pub fn to_stored(&self) -> String {
        self.entries()
            .map(|(k, v)| format!("{}={v}", k.as_str()))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn entries(&self) -> impl Iterator<Item = (TresKind, u64)> + '_ {
        [TresKind::Cpu, TresKind::Mem, TresKind::Node]
            .into_iter()
            .filter_map(|k| self.get(k).map(|v| (k, v)))
    }
}

impl fmt::Display for Tres {
    /// sacctmgr's rendering: `cpu=4,mem=2048M,node=1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (k, v) in self.entries() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            match k {
                TresKind::Mem => write!(f, "mem={v}M")?,
                _ => write!(f, "{}={v}", k.as_str())?,
            }
        }
        Ok(())
    }
}

/// Parses a TRES list as sacctmgr takes it (`cpu=4,mem=2G,node=-1`): names Slurm knows,
/// whole numbers, memory with an optional `K`/`M`/`G`/`T` suffix (megabytes without one),
/// `-1` to clear. The error names the entry at fault.
pub fn parse_edit(s: &str) -> Result<TresEdit, String> {
    let mut edit = TresEdit::new();
    for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, value) = entry
            .split_once('=')
            .ok_or_else(|| format!("Invalid TRES entry '{entry}' (expected name=count)"))?;
        let kind =
            TresKind::parse(name.trim()).ok_or_else(|| format!("Invalid TRES name '{name}'"))?;
        let value = value.trim();
        let parsed = if value == "-1" {
            None
        } else {
            Some(tres_count(kind, value).ok_or_else(|| format!("Invalid TRES value '{entry}'"))?)
        };
        edit.retain(|(k, _)| *k != kind);
        edit.push((kind, parsed));
    }
    if edit.is_empty() {
        return Err(format!("Invalid TRES list '{s}'"));
    }
    Ok(edit)
}

fn tres_count(kind: TresKind, value: &str) -> Option<u64> {
    if kind != TresKind::Mem {
        return value.parse().ok();
    }
    let (digits, scale) = match value.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let scale = match c.to_ascii_uppercase() {
                'K' => return value[..i].parse::<u64>().ok().map(|k| k.div_ceil(1024)),
                'M' => 1,
                'G' => 1024,
                'T' => 1024 * 1024,
                _ => return None,
            };
            (&value[..i], scale)
        }
        _ => (value, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// The limits of one association, as stored (`None`: not set here).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AssocLimits {
    /// `MaxJobs`: running jobs of this association.
    pub max_jobs: Option<u32>,
    /// `MaxSubmitJobs`: pending and running jobs of this association.
    pub max_submit_jobs: Option<u32>,
    /// `MaxWall`: time limit of each job, in minutes.
    pub max_wall_minutes: Option<u32>,
    /// `MaxTRESPerJob` (`MaxCPUs`, `MaxNodes`): resources of each job.
    pub max_tres_per_job: Tres,
    /// `GrpJobs`: running jobs of this association and everything below it.
    pub grp_jobs: Option<u32>,
    /// `GrpSubmitJobs`: pending and running jobs of this association and everything below it.
    pub grp_submit_jobs: Option<u32>,
    /// `GrpTRES`: resources held by running jobs of this association and everything below it.
    pub grp_tres: Tres,
    /// `GrpTRESMins` (`GrpCPUMins`): TRES-minutes used by past and running jobs of this
    /// association and everything below it (decayed as fair-share usage is), memory in
    /// megabyte-minutes.
    pub grp_tres_mins: Tres,
}

impl AssocLimits {
    /// These limits with the per-job and per-association (`Max*`) limits not set here taken
    /// from `parent`, as an association inherits them from its account; `Grp*` limits apply
    /// at the level that sets them and are not copied.
    pub fn inherit(&self, parent: &AssocLimits) -> AssocLimits {
        let mut out = self.clone();
        out.max_jobs = self.max_jobs.or(parent.max_jobs);
        out.max_submit_jobs = self.max_submit_jobs.or(parent.max_submit_jobs);
        out.max_wall_minutes = self.max_wall_minutes.or(parent.max_wall_minutes);
        for kind in [TresKind::Cpu, TresKind::Mem, TresKind::Node] {
            if out.max_tres_per_job.get(kind).is_none() {
                *out.max_tres_per_job.slot(kind) = parent.max_tres_per_job.get(kind);
            }
        }
        out
    }
}

/// A change to [`AssocLimits`]: `None` leaves a limit alone, `Some(None)` clears it (`-1`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssocLimitsEdit {
    /// `MaxJobs`.
    pub max_jobs: Option<Option<u32>>,
    /// `MaxSubmitJobs`.
    pub max_submit_jobs: Option<Option<u32>>,
    /// `MaxWall`, in minutes.
    pub max_wall_minutes: Option<Option<u32>>,
    /// `MaxTRESPerJob`, `MaxCPUs`, `MaxNodes`.
    pub max_tres_per_job: TresEdit,
    /// `GrpJobs`.
    pub grp_jobs: Option<Option<u32>>,
    /// `GrpSubmitJobs`.
    pub grp_submit_jobs: Option<Option<u32>>,
    /// `GrpTRES`, `GrpCPUs`, `GrpNodes`, `GrpMem`.
    pub grp_tres: TresEdit,
    /// `GrpTRESMins`, `GrpCPUMins`.
    pub grp_tres_mins: TresEdit,
}

impl AssocLimitsEdit {
    /// Whether the edit changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `limits` with this edit applied.
    pub fn applied(&self, limits: &AssocLimits) -> AssocLimits {
        let mut out = limits.clone();
        let set = |slot: &mut Option<u32>, v: Option<Option<u32>>| {
            if let Some(v) = v {
                *slot = v;
            }
        };
        set(&mut out.max_jobs, self.max_jobs);
        set(&mut out.max_submit_jobs, self.max_submit_jobs);
        set(&mut out.max_wall_minutes, self.max_wall_minutes);
        set(&mut out.grp_jobs, self.grp_jobs);
        set(&mut out.grp_submit_jobs, self.grp_submit_jobs);
        out.max_tres_per_job.apply(&self.max_tres_per_job);
        out.grp_tres.apply(&self.grp_tres);
        out.grp_tres_mins.apply(&self.grp_tres_mins);
        out
    }
}

/// `AccountingStorageEnforce`: what the controller checks against the accounting daemon's
/// associations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AcctEnforce {
    /// `associations`: a job needs an association (user, account, cluster).
    pub associations: bool,
    /// `limits`: association and QOS limits are enforced (implies `associations`).
    pub limits: bool,
    /// `qos`: a job's QOS must be one its association may use (implies `associations`).
    pub qos: bool,
    /// `safe`: a job under a `GrpTRESMins` limit starts only when its whole time limit fits
    /// in what is left of it (implies `limits`).
    pub safe: bool,
}

impl AcctEnforce {
    /// Parses Slurm's comma-separated list (`associations,limits,safe`, `none`). Values Sluice
    /// does not enforce (`qos`, `wckeys`, `nojobs`, `nosteps`) are refused by name rather
    /// than accepted and ignored.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut e = Self::default();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "none" | "0" => {}
                "associations" | "association" => e.associations = true,
                "limits" | "limit" => {
                    e.associations = true;
                    e.limits = true;
                }
                "qos" => {
                    e.associations = true;
                    e.qos = true;
                }
                "safe" => {
                    e.associations = true;
                    e.limits = true;
                    e.safe = true;
                }
                "all" | "wckeys" | "wckey" | "nojobs" | "nosteps" => {
                    return Err(format!(
                        "AccountingStorageEnforce value {word} is not supported \
                         (Sluice enforces associations, limits, qos and safe)"
                    ));
                }
                _ => return Err(format!("unknown AccountingStorageEnforce value {word}")),
            }
        }
        Ok(e)
    }
}

impl fmt::Display for AcctEnforce {
    /// As `scontrol show config` prints it: `associations,limits,qos,safe` (those set) or
    /// `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<&str> = [
            (self.associations, "associations"),
            (self.limits, "limits"),
            (self.qos, "qos"),
            (self.safe, "safe"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect();
        match words.is_empty() {
            true => f.write_str("none"),
            false => f.write_str(&words.join(",")),
        }
    }
}

#[cfg(test)]
#[path = "assoc_limits_tests.rs"]
mod tests;
