//! `scontrol show config`: the configuration in force, i.e. the core's (as read at start, then
//! as `scontrol reconfigure` and `scontrol update SuspendExc*` left it), with Slurm's key
//! names and value spellings, sorted by key.

use super::ControllerService;
use crate::conf::exclusions::{exc_nodes_text, exc_states_text};
use crate::conf::{CtldConf, SchedulerType, SuspendTime};
use crate::core::SimTime;
use sluice_wire::proto::{ConfigReply, EnvVar, GetConfigRequest};
use tonic::{Request, Status};

/// `scontrol show config`.
pub async fn get_config(
    svc: &ControllerService,
    req: Request<GetConfigRequest>,
) -> Result<ConfigReply, Status> {
    svc.caller(&req)?;
    let conf = svc.core.query(|cx| cx.core.conf().clone()).await?;
    let mut entries = entries(&conf, svc.started);
    entries.extend(power_entries(&conf));
    entries.extend(prolog_entries(&conf));
    entries.extend(priority_entries(&conf));
    entries.sort_by_key(|e| e.0.to_ascii_lowercase());
    Ok(ConfigReply {
        entries: entries
            .into_iter()
            .map(|(k, v)| EnvVar {
                name: k.to_string(),
                value: v,
            })
            .collect(),
        now: chrono::Utc::now().timestamp(),
    })
}

fn path(p: &Option<std::path::PathBuf>) -> String {
    p.as_ref()
        .map_or_else(|| "(null)".to_string(), |p| p.display().to_string())
}

/// The controller's own keys.
fn entries(c: &CtldConf, started: SimTime) -> Vec<(&'static str, String)> {
    let slurm_uid = nix::unistd::User::from_name(&c.slurm_user)
        .ok()
        .flatten()
        .map_or_else(|| "?".to_string(), |u| u.uid.to_string());
    let hosts: Vec<String> = c
        .ctld_hosts
        .iter()
        .map(|h| match &h.addr {
            Some(a) => format!("{}({a})", h.name),
            None => h.name.clone(),
        })
        .collect();
    let mut entries: Vec<(&str, String)> = vec![
        ("AccountingStorageEnforce", c.acct_enforce.to_string()),
        (
            "AccountingStorageHost",
            c.accounting_storage_host
                .clone()
                .unwrap_or_else(|| "(null)".into()),
        ),
        (
            "AccountingStoragePort",
            c.accounting_storage_port.to_string(),
        ),
        (
            "AccountingStorageType",
            if c.accounting_storage_host.is_some() {
                "accounting_storage/slurmdbd"
            } else {
                "accounting_storage/none"
            }
            .into(),
        ),
        ("BOOT_TIME", started.secs().to_string()),
        ("ClusterName", c.cluster_name.clone()),
        (
            "EnforcePartLimits",
            if c.enforce_part_limits { "ALL" } else { "NO" }.into(),
        ),
        ("FirstJobId", c.first_job_id.to_string()),
        ("KillWait", format!("{} sec", c.kill_wait)),
        (
            "MailDomain",
            c.mail
                .mail_domain
                .clone()
                .unwrap_or_else(|| "(null)".into()),
        ),
        ("MailProg", c.mail.mail_prog.display().to_string()),
        ("MaxArraySize", c.max_array_size.to_string()),
        ("MaxJobCount", c.max_job_count.to_string()),
        ("MessageTimeout", format!("{} sec", c.message_timeout)),
        ("MinJobAge", format!("{} sec", c.min_job_age)),
        ("PrivateData", c.private_data.to_string()),
        ("ReturnToService", c.return_to_service.to_string()),
        (
            "SchedulerType",
            match c.scheduler {
                SchedulerType::Backfill => "sched/backfill",
                SchedulerType::Builtin => "sched/builtin",
            }
            .into(),
        ),
        (
            "SchedulerParameters",
            c.sched.text.clone().unwrap_or_else(|| "(null)".into()),
        ),
        ("PreemptMode", c.select.preempt_mode.display()),
        (
            "SchedulerTimeSlice",
            format!("{} sec", c.select.time_slice_secs),
        ),
        ("SelectType", c.select.select_type_name().into()),
        ("SelectTypeParameters", c.select.params_name()),
        ("SLURM_CONF", c.path.display().to_string()),
        ("SLURM_VERSION", env!("CARGO_PKG_VERSION").into()),
        ("SlurmUser", format!("{}({slurm_uid})", c.slurm_user)),
        ("SlurmctldHost", hosts.join(",")),
        ("SlurmctldLogFile", path(&c.slurmctld_log_file)),
        ("SlurmctldPidFile", path(&c.slurmctld_pid_file)),
        ("SlurmctldPort", c.ctld_port.to_string()),
        ("SlurmdPort", c.slurmd_port.to_string()),
        ("SlurmdSpoolDir", c.slurmd_spool_dir.display().to_string()),
        ("SlurmdTimeout", format!("{} sec", c.slurmd_timeout)),
        (
            "UnkillableStepTimeout",
            format!("{} sec", c.unkillable_step_timeout),
        ),
        (
            "StateSaveLocation",
            c.state_save_location.display().to_string(),
        ),
    ];
    // Slurm prints the default memory key in force: per CPU, else per node.
    entries.push(
        match (c.select.def_mem_per_cpu_mb, c.select.def_mem_per_node_mb) {
            (Some(m), _) => ("DefMemPerCPU", m.to_string()),
            (None, Some(m)) => ("DefMemPerNode", m.to_string()),
            (None, None) => ("DefMemPerNode", "UNLIMITED".into()),
        },
    );
    entries
}

/// The power save keys, as Slurm's `scontrol show config` spells them.
fn power_entries(c: &CtldConf) -> Vec<(&'static str, String)> {
    let p = &c.power;
    let null = || "(null)".to_string();
    vec![
        ("ResumeFailProgram", path(&p.resume_fail_program)),
        ("ResumeProgram", path(&p.resume_program)),
        ("ResumeRate", format!("{} nodes/min", p.resume_rate)),
        ("ResumeTimeout", format!("{} sec", p.resume_timeout)),
        (
            "SuspendExcNodes",
            exc_nodes_text(&p.suspend_exc_nodes).unwrap_or_else(null),
        ),
        (
            "SuspendExcParts",
            Some(p.suspend_exc_parts.join(","))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(null),
        ),
        (
            "SuspendExcStates",
            exc_states_text(&p.suspend_exc_states).unwrap_or_else(null),
        ),
        ("SuspendProgram", path(&p.suspend_program)),
        ("SuspendRate", format!("{} nodes/min", p.suspend_rate)),
        (
            "SuspendTime",
            match p.suspend_time {
                Some(SuspendTime::Secs(s)) => format!("{s} sec"),
                Some(SuspendTime::Infinite) | None => "INFINITE".into(),
            },
        ),
        ("SuspendTimeout", format!("{} sec", p.suspend_timeout)),
    ]
}

/// The prolog and epilog keys, as Slurm's `scontrol show config` spells them.
fn prolog_entries(c: &CtldConf) -> Vec<(&'static str, String)> {
    let p = &c.prolog;
    let flags = match (p.flags.alloc, p.flags.contain) {
        (_, true) => "Alloc,Contain",
        (true, false) => "Alloc",
        (false, false) => "(null)",
    };
    vec![
        ("Epilog", path(&p.epilog)),
        ("EpilogSlurmctld", path(&p.epilog_slurmctld)),
        ("Prolog", path(&p.prolog)),
        (
            "PrologEpilogTimeout",
            p.timeout_secs.unwrap_or(65534).to_string(),
        ),
        ("PrologFlags", flags.into()),
        ("PrologSlurmctld", path(&p.prolog_slurmctld)),
        ("TaskEpilog", path(&p.task_epilog)),
        ("TaskProlog", path(&p.task_prolog)),
    ]
}

/// `PriorityWeightTRES` as Slurm shows it (`CPU=1000,Mem=20`), `(null)` when unset.
fn tres_weights(w: &[(sluice_vocab::cluster_conf::TresKind, u32)]) -> String {
    use sluice_vocab::cluster_conf::TresKind;
    if w.is_empty() {
        return "(null)".into();
    }
    w.iter()
        .map(|(k, n)| {
            let name = match k {
                TresKind::Cpu => "CPU",
                TresKind::Mem => "Mem",
                TresKind::Node => "Node",
            };
            format!("{name}={n}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The priority keys: `PriorityType` alone under `priority/basic`, every multifactor key
/// otherwise, as Slurm prints them.
fn priority_entries(c: &CtldConf) -> Vec<(&'static str, String)> {
    use sluice_vocab::cluster_conf::PriorityType;
    let p = &c.priority;
    let mut out = vec![("PriorityType", p.kind.name().to_string())];
    if p.kind == PriorityType::Basic {
        return out;
    }
    let dur = |secs: u64| {
        let (d, rest) = (secs / 86_400, secs % 86_400);
        format!(
            "{d}-{:02}:{:02}:{:02}",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )
    };
    let hms = |secs: u64| {
        format!(
            "{:02}:{:02}:{:02}",
            secs / 3600,
            secs % 3600 / 60,
            secs % 60
        )
    };
    out.extend([
        ("PriorityCalcPeriod", hms(p.calc_period_secs)),
        ("PriorityDecayHalfLife", dur(p.decay_half_life_secs)),
        (
            "PriorityFavorSmall",
            if p.favor_small { "Yes" } else { "No" }.to_string(),
        ),
        ("PriorityFlags", p.flags_text.clone()),
        ("PriorityMaxAge", dur(p.max_age_secs)),
        ("PriorityUsageResetPeriod", p.usage_reset.name().to_string()),
        ("PriorityWeightAge", p.weight_age.to_string()),
        ("PriorityWeightAssoc", "0".to_string()),
        ("PriorityWeightFairShare", p.weight_fairshare.to_string()),
        ("PriorityWeightJobSize", p.weight_job_size.to_string()),
        ("PriorityWeightPartition", p.weight_partition.to_string()),
        ("PriorityWeightQOS", p.weight_qos.to_string()),
        ("PriorityWeightTRES", tres_weights(&p.weight_tres)),
    ]);
    out
}
