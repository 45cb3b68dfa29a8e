//! Power save and cloud keys: `SuspendTime`, `SuspendTimeout`, `ResumeTimeout`, the three
//! programs, the `SuspendExc*` exclusions, the rates, `SlurmctldParameters` options and
//! `ReconfigFlags`, plus the partition keys (`SuspendTime`, `SuspendTimeout`, `ResumeTimeout`,
//! `PowerDownOnIdle`).
//!
//! Names in `SuspendExcNodes` and `SuspendExcParts` are checked once nodes and partitions are
//! read ([`PowerConf::check`]), so an unknown one is an error naming file, line and key.

use super::exclusions::{comma_list as list, parse_exc_nodes, parse_exc_states};
use super::{ConfWarning, NodeConf, PartitionConf, non_empty, warning};
use crate::conf::{ConfError, ConfFile, Pair};
use std::path::PathBuf;

/// A `SuspendTime`: seconds of idleness before a node is powered down, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuspendTime {
    /// After this many seconds idle.
    Secs(u32),
    /// `INFINITE` or `-1`: never.
    Infinite,
}

impl SuspendTime {
    /// Seconds, with `u64::MAX` for never (so that "the higher value wins" is a `max`).
    pub fn as_secs(self) -> u64 {
        match self {
            Self::Secs(s) => u64::from(s),
            Self::Infinite => u64::MAX,
        }
    }
}

/// One `SuspendExcNodes` element: a hostlist, with `:count` the number of its usable nodes to
/// keep powered up (without a count, every node of the list is excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExcNodes {
    /// The node names.
    pub nodes: Vec<String>,
    /// How many of them to keep up; `None` keeps all.
    pub count: Option<u32>,
}

/// A node state `SuspendExcStates` may name: nodes in it are not powered down automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExcState {
    Cloud,
    Down,
    Drain,
    DynamicFuture,
    DynamicNorm,
    Fail,
    InvalidReg,
    Maintenance,
    NotResponding,
    Perfctrs,
    Planned,
    Reserved,
}

/// The cluster-wide power save settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerConf {
    /// `SuspendTime`; `None` when not given (power save off unless a partition sets one).
    pub suspend_time: Option<SuspendTime>,
    /// `SuspendTimeout` in seconds (default 30).
    pub suspend_timeout: u32,
    /// `ResumeTimeout` in seconds (default 60).
    pub resume_timeout: u32,
    /// `SuspendProgram`.
    pub suspend_program: Option<PathBuf>,
    /// `ResumeProgram`.
    pub resume_program: Option<PathBuf>,
    /// `ResumeFailProgram`.
    pub resume_fail_program: Option<PathBuf>,
    /// `SuspendExcNodes`.
    pub suspend_exc_nodes: Vec<ExcNodes>,
    /// `SuspendExcParts`.
    pub suspend_exc_parts: Vec<String>,
    /// `SuspendExcStates`.
    pub suspend_exc_states: Vec<ExcState>,
    /// `ResumeRate`: nodes per minute (default 300, 0 = unlimited).
    pub resume_rate: u32,
    /// `SuspendRate`: nodes per minute (default 60, 0 = unlimited).
    pub suspend_rate: u32,
    /// `SlurmctldParameters=cloud_reg_addrs`: a registering cloud node sets its address.
    pub cloud_reg_addrs: bool,
    /// `SlurmctldParameters=idle_on_node_suspend`: suspended nodes become IDLE (DOWN/DRAIN cleared).
    pub idle_on_node_suspend: bool,
    /// `ReconfigFlags=KeepPowerSaveSettings`: a reconfiguration keeps the `SuspendExc*` values.
    pub keep_power_save_settings: bool,
    exc_nodes_pair: Option<Pair>,
    exc_parts_pair: Option<Pair>,
}

impl Default for PowerConf {
    fn default() -> Self {
        Self {
            suspend_time: None,
            suspend_timeout: 30,
            resume_timeout: 60,
            suspend_program: None,
            resume_program: None,
            resume_fail_program: None,
            suspend_exc_nodes: Vec::new(),
            suspend_exc_parts: Vec::new(),
            suspend_exc_states: Vec::new(),
            resume_rate: 300,
            suspend_rate: 60,
            cloud_reg_addrs: false,
            idle_on_node_suspend: false,
            keep_power_save_settings: false,
            exc_nodes_pair: None,
            exc_parts_pair: None,
        }
    }
}

/// A partition's power save settings; unset values fall back to the global ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartPower {
    /// `SuspendTime` (setting it enables power save even without a global one).
    pub suspend_time: Option<SuspendTime>,
    /// `SuspendTimeout`.
    pub suspend_timeout: Option<u32>,
    /// `ResumeTimeout`.
    pub resume_timeout: Option<u32>,
    /// `PowerDownOnIdle=YES`: nodes are asked to power down as soon as they become idle.
    pub power_down_on_idle: bool,
}

impl PowerConf {
    /// Applies one top-level pair; `false` when the key is not a power save key.
    pub(crate) fn apply(
        &mut self,
        file: &ConfFile,
        p: &Pair,
        warnings: &mut Vec<ConfWarning>,
    ) -> Result<bool, ConfError> {
        match p.key.to_ascii_lowercase().as_str() {
            "suspendtime" => self.suspend_time = Some(suspend_time(file, p)?),
            "suspendtimeout" => self.suspend_timeout = super::positive(file, p)?,
            "resumetimeout" => self.resume_timeout = super::positive(file, p)?,
            "suspendprogram" => self.suspend_program = Some(non_empty(file, p)?.into()),
            "resumeprogram" => self.resume_program = Some(non_empty(file, p)?.into()),
            "resumefailprogram" => self.resume_fail_program = Some(non_empty(file, p)?.into()),
            "suspendexcnodes" => {
                self.suspend_exc_nodes = exc_nodes(file, p)?;
                self.exc_nodes_pair = Some(p.clone());
            }
            "suspendexcparts" => {
                self.suspend_exc_parts = list(&p.value).map(str::to_string).collect();
                self.exc_parts_pair = Some(p.clone());
            }
            "suspendexcstates" => self.suspend_exc_states = exc_states(file, p)?,
            "resumerate" => self.resume_rate = file.number(p)?,
            "suspendrate" => self.suspend_rate = file.number(p)?,
            "slurmctldparameters" => {
                for opt in list(&p.value) {
                    match opt.to_ascii_lowercase().as_str() {
                        "cloud_reg_addrs" => self.cloud_reg_addrs = true,
                        "idle_on_node_suspend" => self.idle_on_node_suspend = true,
                        _ => warnings.push(ConfWarning {
                            key: format!("{}={opt}", p.key),
                            ..warning(file, p)
                        }),
                    }
                }
            }
            "reconfigflags" => {
                for flag in list(&p.value) {
                    match flag.to_ascii_lowercase().as_str() {
                        "keeppowersavesettings" => self.keep_power_save_settings = true,
                        // These keep runtime partition and FUTURE-node changes across a
                        // reconfigure; Sluice has no runtime updates of either to keep.
                        "keeppartinfo" | "keeppartstate" | "keepnodestatefuture" => {
                            warnings.push(ConfWarning {
                                key: format!("{}={flag}", p.key),
                                note: Some(
                                    "Sluice has no runtime partition or FUTURE node updates to keep",
                                ),
                                ..warning(file, p)
                            })
                        }
                        _ => {
                            return Err(file.bad_value(
                                p,
                                format!(
                                    "unknown flag {flag} (expected KeepPartInfo, KeepPartState, \
                                     KeepPowerSaveSettings or KeepNodeStateFuture)"
                                ),
                            ));
                        }
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks the names of `SuspendExcNodes` and `SuspendExcParts` against the nodes and
    /// partitions read.
    pub(crate) fn check(
        &self,
        file: &ConfFile,
        nodes: &[NodeConf],
        parts: &[PartitionConf],
    ) -> Result<(), ConfError> {
        if let Some(p) = &self.exc_nodes_pair {
            let known: std::collections::HashSet<&str> =
                nodes.iter().map(|n| n.name.as_str()).collect();
            for set in &self.suspend_exc_nodes {
                if let Some(n) = set.nodes.iter().find(|n| !known.contains(n.as_str())) {
                    return Err(file.bad_value(p, format!("unknown node {n}")));
                }
            }
        }
        if let Some(p) = &self.exc_parts_pair
            && let Some(name) = self
                .suspend_exc_parts
                .iter()
                .find(|name| !parts.iter().any(|q| &q.name == *name))
        {
            return Err(file.bad_value(p, format!("unknown partition {name}")));
        }
        Ok(())
    }

    /// Whether power save runs: a `SuspendTime` is set globally or on a partition (not
    /// INFINITE), and both `SuspendProgram` and `ResumeProgram` are given, as Slurm requires.
    pub fn enabled(&self, parts: &[PartitionConf]) -> bool {
        let set = |t: Option<SuspendTime>| matches!(t, Some(SuspendTime::Secs(_)));
        (set(self.suspend_time) || parts.iter().any(|p| set(p.power.suspend_time)))
            && self.suspend_program.is_some()
            && self.resume_program.is_some()
    }

    /// The settings after a reconfiguration to `new`: with `KeepPowerSaveSettings` (in the new
    /// file) the current `SuspendExcNodes`, `SuspendExcParts` and `SuspendExcStates` are kept.
    pub fn reconfigured(&self, new: &PowerConf) -> PowerConf {
        let mut next = new.clone();
        if new.keep_power_save_settings {
            next.suspend_exc_nodes = self.suspend_exc_nodes.clone();
            next.suspend_exc_parts = self.suspend_exc_parts.clone();
            next.suspend_exc_states = self.suspend_exc_states.clone();
            next.exc_nodes_pair = self.exc_nodes_pair.clone();
            next.exc_parts_pair = self.exc_parts_pair.clone();
        }
        next
    }
}

impl PartPower {
    /// Applies one key of a partition line; `false` when it is not a power save key.
    pub(crate) fn apply(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        match p.key.to_ascii_lowercase().as_str() {
            "suspendtime" => self.suspend_time = Some(suspend_time(file, p)?),
            "suspendtimeout" => self.suspend_timeout = Some(super::positive(file, p)?),
            "resumetimeout" => self.resume_timeout = Some(super::positive(file, p)?),
            "powerdownonidle" => {
                self.power_down_on_idle = match p.value.trim().to_ascii_uppercase().as_str() {
                    "YES" => true,
                    "NO" => false,
                    _ => return Err(file.bad_value(p, "expected YES or NO")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn suspend_time(file: &ConfFile, p: &Pair) -> Result<SuspendTime, ConfError> {
    let v = p.value.trim();
    if v.eq_ignore_ascii_case("INFINITE") || v.eq_ignore_ascii_case("UNLIMITED") || v == "-1" {
        return Ok(SuspendTime::Infinite);
    }
    v.parse::<u32>()
        .map(SuspendTime::Secs)
        .map_err(|_| file.bad_value(p, "expected seconds, INFINITE or -1"))
}

/// `SuspendExcNodes`: see [`parse_exc_nodes`].
fn exc_nodes(file: &ConfFile, p: &Pair) -> Result<Vec<ExcNodes>, ConfError> {
    parse_exc_nodes(&p.value).map_err(|e| file.bad_value(p, e))
}

fn exc_states(file: &ConfFile, p: &Pair) -> Result<Vec<ExcState>, ConfError> {
    parse_exc_states(&p.value).map_err(|e| file.bad_value(p, e))
}

#[cfg(test)]
mod tests {
    use crate::cluster_conf::{CtldConf, ExcNodes, ExcState, SuspendTime};
    use crate::conf::ConfError;
    use std::path::Path;

    const BASE: &str = "ClusterName=c\nSlurmctldHost=h\nNodeName=tux[0-9] CPUs=2\n\
                        NodeName=ec[0-9] CPUs=2 State=CLOUD\n";

    fn parse(extra: &str) -> Result<CtldConf, ConfError> {
        CtldConf::parse(Path::new("slurm.conf"), &format!("{BASE}{extra}")).map(|(c, _)| c)
    }

    #[test]
    fn reads_every_power_key() {
        let c = parse(
            "SuspendTime=600\nSuspendTimeout=45\nResumeTimeout=120\n\
             SuspendProgram=/sbin/s\nResumeProgram=/sbin/r\nResumeFailProgram=/sbin/f\n\
             SuspendExcNodes=tux[0-4]:2,tux[8-9]\nSuspendExcParts=local\n\
             SuspendExcStates=down,Drain\nResumeRate=10\nSuspendRate=0\n\
             SlurmctldParameters=cloud_reg_addrs,idle_on_node_suspend\n\
             ReconfigFlags=KeepPowerSaveSettings,KeepPartState\n\
             PartitionName=local Nodes=tux[0-9] SuspendTime=INFINITE\n\
             PartitionName=cloud Nodes=ec[0-9] SuspendTime=300 ResumeTimeout=90 \
             SuspendTimeout=20 PowerDownOnIdle=YES\n",
        )
        .unwrap();
        let p = &c.power;
        assert_eq!(p.suspend_time, Some(SuspendTime::Secs(600)));
        assert_eq!((p.suspend_timeout, p.resume_timeout), (45, 120));
        assert_eq!(p.resume_fail_program.as_deref(), Some(Path::new("/sbin/f")));
        assert_eq!(
            p.suspend_exc_nodes,
            [
                ExcNodes {
                    nodes: (0..5).map(|i| format!("tux{i}")).collect(),
                    count: Some(2)
                },
                ExcNodes {
                    nodes: vec!["tux8".into(), "tux9".into()],
                    count: None
                }
            ]
        );
        assert_eq!(p.suspend_exc_parts, ["local"]);
        assert_eq!(p.suspend_exc_states, [ExcState::Down, ExcState::Drain]);
        assert_eq!((p.resume_rate, p.suspend_rate), (10, 0));
        assert!(p.cloud_reg_addrs && p.idle_on_node_suspend && p.keep_power_save_settings);
        let local = &c.partitions[0].power;
        assert_eq!(local.suspend_time, Some(SuspendTime::Infinite));
        let cloud = &c.partitions[1].power;
        assert_eq!(cloud.suspend_time, Some(SuspendTime::Secs(300)));
        assert_eq!(
            (cloud.resume_timeout, cloud.suspend_timeout),
            (Some(90), Some(20))
        );
        assert!(cloud.power_down_on_idle && !local.power_down_on_idle);
        assert!(p.enabled(&c.partitions));
    }

    #[test]
    fn defaults_leave_power_save_off() {
        let c = parse("").unwrap();
        assert_eq!(c.power.suspend_time, None);
        assert_eq!((c.power.suspend_timeout, c.power.resume_timeout), (30, 60));
        assert_eq!((c.power.resume_rate, c.power.suspend_rate), (300, 60));
        assert!(!c.power.enabled(&c.partitions));
        // A partition SuspendTime enables it when both programs are given.
        let c = parse(
            "SuspendTime=-1\nSuspendProgram=/s\nResumeProgram=/r\n\
             PartitionName=cloud Nodes=ec[0-9] SuspendTime=60\n",
        )
        .unwrap();
        assert_eq!(c.power.suspend_time, Some(SuspendTime::Infinite));
        assert!(c.power.enabled(&c.partitions));
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (text, key) in [
            ("SuspendTime=soon\n", "SuspendTime"),
            ("SuspendTimeout=0\n", "SuspendTimeout"),
            ("ResumeRate=-3\n", "ResumeRate"),
            ("SuspendExcStates=IDLE\n", "SuspendExcStates"),
            ("SuspendExcNodes=tux[0-4]:x\n", "SuspendExcNodes"),
            ("SuspendExcNodes=nosuch[1-2]\n", "SuspendExcNodes"),
            ("SuspendExcParts=nosuch\n", "SuspendExcParts"),
            ("ReconfigFlags=KeepEverything\n", "ReconfigFlags"),
            (
                "PartitionName=p Nodes=ec0 PowerDownOnIdle=maybe\n",
                "PowerDownOnIdle",
            ),
            (
                "PartitionName=p Nodes=ec0 SuspendTime=later\n",
                "SuspendTime",
            ),
        ] {
            match parse(text) {
                Err(ConfError::BadValue { line, key: k, .. }) => {
                    assert_eq!((line, k.as_str()), (5, key), "{text}");
                }
                other => panic!("{text}: expected a bad value, got {other:?}"),
            }
        }
    }

    #[test]
    fn unknown_controller_parameters_are_warnings() {
        let text = format!("{BASE}SlurmctldParameters=cloud_dns,idle_on_node_suspend\n");
        let (c, w) = CtldConf::parse(Path::new("slurm.conf"), &text).unwrap();
        assert!(c.power.idle_on_node_suspend && !c.power.cloud_reg_addrs);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].key, "SlurmctldParameters=cloud_dns");
    }

    #[test]
    fn reconfig_flags_without_effect_are_warned_about_with_the_reason() {
        let text = format!("{BASE}ReconfigFlags=KeepPowerSaveSettings,KeepPartInfo\n");
        let (c, w) = CtldConf::parse(Path::new("slurm.conf"), &text).unwrap();
        assert!(c.power.keep_power_save_settings);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].key, "ReconfigFlags=KeepPartInfo");
        assert!(
            w[0].to_string()
                .contains("KeepPartInfo ignored: Sluice has no runtime")
        );
    }

    #[test]
    fn reconfiguration_keeps_exclusions_only_when_asked() {
        let old = parse("SuspendExcNodes=tux1\nSuspendExcStates=DOWN\n")
            .unwrap()
            .power;
        let new = parse("SuspendExcNodes=tux2\n").unwrap().power;
        assert_eq!(old.reconfigured(&new).suspend_exc_nodes[0].nodes, ["tux2"]);
        let keep = parse("SuspendExcNodes=tux2\nReconfigFlags=KeepPowerSaveSettings\n")
            .unwrap()
            .power;
        let next = old.reconfigured(&keep);
        assert_eq!(next.suspend_exc_nodes[0].nodes, ["tux1"]);
        assert_eq!(next.suspend_exc_states, [ExcState::Down]);
    }
}
