//! Resource selection and gang scheduling keys: `SelectType`, `SelectTypeParameters`,
//! `DefMemPerCPU`, `DefMemPerNode`, `PreemptMode` and `SchedulerTimeSlice`.
//!
//! Without `SelectType`, Sluice allocates whole nodes (`select/linear`), as it always has.
//! `select/cons_tres` (and the older `select/cons_res`, read as the same) allocates CPUs or
//! cores; its default parameters are `CR_Core_Memory`. Nodes are described by CPU count only,
//! so a core is one CPU and a node is one socket (`CR_Socket` allocates whole nodes).

use crate::conf::{ConfError, ConfFile, Pair};

/// `SelectType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectType {
    /// `select/linear`: whole nodes per job.
    Linear,
    /// `select/cons_tres` (or `select/cons_res`): CPUs, cores or sockets per job.
    ConsTres,
}

/// The consumable resource of `select/cons_tres` (`CR_CPU`, `CR_Core`, `CR_Socket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrUnit {
    /// `CR_CPU`: CPUs are counted, interchangeable.
    Cpu,
    /// `CR_Core`: cores are allocated individually.
    Core,
    /// `CR_Socket`: whole sockets (here: whole nodes).
    Socket,
}

/// What `PreemptMode` asks for when a job preempts another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptAction {
    /// `OFF` (default).
    Off,
    /// `CANCEL`.
    Cancel,
    /// `REQUEUE`.
    Requeue,
    /// `SUSPEND` (only with `GANG`).
    Suspend,
}

/// `PreemptMode`: a preemption action and the `GANG` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreemptMode {
    /// The action taken on a preempted job.
    pub action: PreemptAction,
    /// `GANG`: timesliced gang scheduling of jobs sharing resources.
    pub gang: bool,
}

impl PreemptMode {
    /// Slurm's spelling (`scontrol show config`): `OFF`, `GANG`, `SUSPEND,GANG`, ...
    pub fn display(&self) -> String {
        let action = match self.action {
            PreemptAction::Off => None,
            PreemptAction::Cancel => Some("CANCEL"),
            PreemptAction::Requeue => Some("REQUEUE"),
            PreemptAction::Suspend => Some("SUSPEND"),
        };
        match (action, self.gang) {
            (None, false) => "OFF".into(),
            (None, true) => "GANG".into(),
            (Some(a), false) => a.into(),
            (Some(a), true) => format!("{a},GANG"),
        }
    }
}

/// The selection and gang scheduling settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectConf {
    /// `SelectType` (default: whole nodes, `select/linear`).
    pub select_type: SelectType,
    /// The consumable resource for `select/cons_tres` (default `CR_Core`).
    pub cr_unit: CrUnit,
    /// Whether memory is a consumable resource (`_Memory` variants, `CR_Memory` for linear):
    /// jobs share a node only when their memory fits together.
    pub cr_memory: bool,
    /// `DefMemPerCPU` in MB, for jobs without `--mem`.
    pub def_mem_per_cpu_mb: Option<u64>,
    /// `DefMemPerNode` in MB, for jobs without `--mem`. The two defaults exclude each other:
    /// the one given last wins, as in Slurm. With neither, a job without `--mem` takes the
    /// whole memory of its nodes (Slurm's unlimited `DefMemPerNode`).
    pub def_mem_per_node_mb: Option<u64>,
    /// `PreemptMode` (default `OFF`).
    pub preempt_mode: PreemptMode,
    /// `SchedulerTimeSlice` in seconds (default 30, at least 5).
    pub time_slice_secs: u32,
    /// Whether `SelectTypeParameters` was given (else cons_tres means `CR_Core_Memory`).
    params_given: bool,
}

impl Default for SelectConf {
    fn default() -> Self {
        Self {
            select_type: SelectType::Linear,
            cr_unit: CrUnit::Core,
            cr_memory: false,
            def_mem_per_cpu_mb: None,
            def_mem_per_node_mb: None,
            preempt_mode: PreemptMode {
                action: PreemptAction::Off,
                gang: false,
            },
            time_slice_secs: DEFAULT_TIME_SLICE,
            params_given: false,
        }
    }
}

/// Slurm's default `SchedulerTimeSlice`.
pub const DEFAULT_TIME_SLICE: u32 = 30;
/// Slurm's smallest `SchedulerTimeSlice`.
pub const MIN_TIME_SLICE: u32 = 5;

impl SelectConf {
    /// Whether gang scheduling is on (`PreemptMode` includes `GANG`).
    pub fn gang(&self) -> bool {
        self.preempt_mode.gang
    }

    /// `SelectType` as `scontrol show config` prints it.
    pub fn select_type_name(&self) -> &'static str {
        match self.select_type {
            SelectType::Linear => "select/linear",
            SelectType::ConsTres => "select/cons_tres",
        }
    }

    /// `SelectTypeParameters` as `scontrol show config` prints it (`CR_CORE_MEMORY`, `NONE`).
    pub fn params_name(&self) -> String {
        let unit = match (self.select_type, self.cr_unit) {
            (SelectType::Linear, _) => None,
            (SelectType::ConsTres, CrUnit::Cpu) => Some("CR_CPU"),
            (SelectType::ConsTres, CrUnit::Core) => Some("CR_CORE"),
            (SelectType::ConsTres, CrUnit::Socket) => Some("CR_SOCKET"),
        };
        match (unit, self.cr_memory) {
            (None, false) => "NONE".into(),
            (None, true) => "CR_MEMORY".into(),
            (Some(u), false) => u.into(),
            (Some(u), true) => format!("{u}_MEMORY"),
        }
    }

    /// Applies one top-level pair; `false` when the key is not one of these.
    pub(crate) fn apply(&mut self, file: &ConfFile, p: &Pair) -> Result<bool, ConfError> {
        let upper = p.value.trim().to_ascii_uppercase();
        match p.key.to_ascii_lowercase().as_str() {
            "selecttype" => {
                self.select_type = match upper.as_str() {
                    "SELECT/LINEAR" => SelectType::Linear,
                    "SELECT/CONS_TRES" | "SELECT/CONS_RES" => SelectType::ConsTres,
                    _ => {
                        return Err(file.bad_value(p, "expected select/linear or select/cons_tres"));
                    }
                };
                if self.select_type == SelectType::ConsTres && !self.params_given {
                    self.cr_memory = true;
                }
            }
            "selecttypeparameters" => self.apply_params(file, p, &upper)?,
            "defmempercpu" => {
                self.def_mem_per_cpu_mb = Some(file.number(p)?);
                self.def_mem_per_node_mb = None;
            }
            "defmempernode" => {
                self.def_mem_per_node_mb = Some(file.number(p)?);
                self.def_mem_per_cpu_mb = None;
            }
            "preemptmode" => self.preempt_mode = preempt_mode(file, p, &upper)?,
            "schedulertimeslice" => {
                let secs: u32 = file.number(p)?;
                if secs < MIN_TIME_SLICE {
                    return Err(file.bad_value(p, "SchedulerTimeSlice must be at least 5 seconds"));
                }
                self.time_slice_secs = secs;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn apply_params(&mut self, file: &ConfFile, p: &Pair, upper: &str) -> Result<(), ConfError> {
        let mut unit = None;
        let mut memory = false;
        for word in upper.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "CR_CPU" => unit = Some(CrUnit::Cpu),
                "CR_CPU_MEMORY" => (unit, memory) = (Some(CrUnit::Cpu), true),
                "CR_CORE" => unit = Some(CrUnit::Core),
                "CR_CORE_MEMORY" => (unit, memory) = (Some(CrUnit::Core), true),
                "CR_SOCKET" => unit = Some(CrUnit::Socket),
                "CR_SOCKET_MEMORY" => (unit, memory) = (Some(CrUnit::Socket), true),
                "CR_MEMORY" => memory = true,
                // Task placement hints: accepted, no effect on what is allocated here.
                "CR_ONE_TASK_PER_CORE"
                | "CR_CORE_DEFAULT_DIST_BLOCK"
                | "CR_PACK_NODES"
                | "CR_LLN"
                | "MULTIPLE_SHARING_GRES_PJ"
                | "ENFORCE_BINDING_GRES"
                | "ONE_TASK_PER_SHARING_GRES" => {}
                _ => {
                    return Err(file.bad_value(
                        p,
                        format!("unknown parameter {word}: expected CR_CPU, CR_Core, CR_Socket (with _Memory) or CR_Memory"),
                    ));
                }
            }
        }
        self.cr_unit = unit.unwrap_or(CrUnit::Core);
        self.cr_memory = memory;
        self.params_given = true;
        Ok(())
    }
}

fn preempt_mode(file: &ConfFile, p: &Pair, upper: &str) -> Result<PreemptMode, ConfError> {
    let mut mode = PreemptMode {
        action: PreemptAction::Off,
        gang: false,
    };
    for word in upper.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match word {
            "OFF" => mode.action = PreemptAction::Off,
            "CANCEL" => mode.action = PreemptAction::Cancel,
            "REQUEUE" => mode.action = PreemptAction::Requeue,
            "SUSPEND" => mode.action = PreemptAction::Suspend,
            "GANG" => mode.gang = true,
            "WITHIN" | "PRIORITY" => {}
            _ => {
                return Err(file.bad_value(
                    p,
                    "expected OFF, CANCEL, GANG, REQUEUE or SUSPEND (comma separated)",
                ));
            }
        }
    }
    if mode.action == PreemptAction::Suspend && !mode.gang {
        return Err(file.bad_value(p, "PreemptMode=SUSPEND requires GANG"));
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn read(lines: &str) -> Result<SelectConf, ConfError> {
        let file = ConfFile::parse(Path::new("slurm.conf"), lines)?;
        let mut conf = SelectConf::default();
        for pair in file.lines.iter().flatten() {
            assert!(conf.apply(&file, pair)?, "{} not taken", pair.key);
        }
        Ok(conf)
    }

    #[test]
    fn defaults_are_whole_nodes_without_gang() {
        let c = SelectConf::default();
        assert_eq!(c.select_type, SelectType::Linear);
        assert!(!c.gang() && !c.cr_memory);
        assert_eq!(c.time_slice_secs, 30);
        assert_eq!(c.preempt_mode.display(), "OFF");
        assert_eq!(
            (c.select_type_name(), c.params_name().as_str()),
            ("select/linear", "NONE")
        );
    }

    #[test]
    fn reads_cons_tres_with_parameters_and_gang() {
        let c = read(
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU_Memory,CR_LLN\n\
             PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=10\nDefMemPerCPU=100\n",
        )
        .unwrap();
        assert_eq!(c.select_type, SelectType::ConsTres);
        assert_eq!(c.cr_unit, CrUnit::Cpu);
        assert!(c.cr_memory && c.gang());
        assert_eq!(c.preempt_mode.display(), "SUSPEND,GANG");
        assert_eq!(c.params_name(), "CR_CPU_MEMORY");
        assert_eq!(c.select_type_name(), "select/cons_tres");
        assert_eq!((c.time_slice_secs, c.def_mem_per_cpu_mb), (10, Some(100)));
    }

    #[test]
    fn cons_tres_alone_tracks_cores_and_memory() {
        let c = read("SelectType=select/cons_res\n").unwrap();
        assert_eq!((c.cr_unit, c.cr_memory), (CrUnit::Core, true));
        let c = read("SelectTypeParameters=CR_Core\nSelectType=select/cons_tres\n").unwrap();
        assert_eq!((c.cr_unit, c.cr_memory), (CrUnit::Core, false));
        let c = read("SelectType=select/linear\nSelectTypeParameters=CR_Memory\n").unwrap();
        assert_eq!((c.select_type, c.cr_memory), (SelectType::Linear, true));
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = read("SchedulerTimeSlice=2\n").unwrap_err().to_string();
        assert!(
            e.contains("SchedulerTimeSlice") && e.contains("at least 5"),
            "{e}"
        );
        let e = read("PreemptMode=SUSPEND\n").unwrap_err().to_string();
        assert!(e.contains("requires GANG"), "{e}");
        let e = read("SelectTypeParameters=CR_Foo\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("CR_FOO"), "{e}");
        assert!(read("SelectType=select/magic\n").is_err());
    }
}
