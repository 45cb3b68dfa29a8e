//! Shared by the power save tests: a cluster with local and cloud nodes, and helpers to
//! register a node and read power state.

use sluice_ctld::core::{NodeRegistration, PowerCommand, PowerStatus, on_node_registered};
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};

/// Four local nodes `tux[1-4]` (partition `local`, default) and four cloud nodes `ec[1-4]`
/// (partition `cloud`), power save on with SuspendTime=300, plus `extra` lines.
pub fn cluster(extra: &[&str]) -> CoreFixture {
    builder(extra).build()
}

/// The description [`cluster`] builds.
pub fn builder(extra: &[&str]) -> ClusterBuilder {
    let mut b = ClusterBuilder::new()
        .conf("SuspendTime=300")
        .conf("SuspendTimeout=30")
        .conf("ResumeTimeout=60")
        .conf("SuspendProgram=/usr/sbin/suspend")
        .conf("ResumeProgram=/usr/sbin/resume")
        .conf("ResumeFailProgram=/usr/sbin/resume_fail")
        .conf("KillWait=0")
        // Nodes send no heartbeats here: only power save timers apply.
        .conf("SlurmdTimeout=0")
        .nodes("tux[1-4]", "CPUs=4")
        .nodes("ec[1-4]", "CPUs=4 State=CLOUD");
    for line in extra {
        b = b.conf(line);
    }
    b.partition("local", "Nodes=tux[1-4] Default=YES")
        .partition("cloud", "Nodes=ec[1-4]")
}

/// Registers node `name` now with its configured resources and no jobs.
pub fn register(fx: &mut CoreFixture, name: &str) {
    let n = fx.core.node(name).expect("node exists");
    let reg = NodeRegistration {
        name: name.to_string(),
        cpus: n.cpus,
        real_memory_mb: n.real_memory_mb,
        tmp_disk_mb: n.tmp_disk_mb,
        boot_time: fx.now,
        jobs: Vec::new(),
        pid: 0,
        again: false,
    };
    on_node_registered(&mut fx.core, &mut fx.out, fx.now, reg).expect("registered");
}

/// Registers `tux[1-4]`.
pub fn register_local(fx: &mut CoreFixture) {
    for i in 1..=4 {
        register(fx, &format!("tux{i}"));
    }
}

/// Node `name`'s power status.
pub fn status(fx: &CoreFixture, name: &str) -> PowerStatus {
    fx.core.node(name).expect("node exists").power.status
}

/// The hostlists of the programs asked for so far, as `resume:ec1`, `suspend:tux[1-2]`, ...
pub fn programs(fx: &CoreFixture) -> Vec<String> {
    fx.out
        .power_cmds
        .iter()
        .map(|c| match c {
            PowerCommand::Resume { hostlist, .. } => format!("resume:{hostlist}"),
            PowerCommand::Suspend { hostlist, .. } => format!("suspend:{hostlist}"),
            PowerCommand::ResumeFailed { hostlist, .. } => format!("resume_fail:{hostlist}"),
        })
        .collect()
}

/// Whether `name` is powering down (`%`).
pub fn powering_down(fx: &CoreFixture, name: &str) -> bool {
    matches!(status(fx, name), PowerStatus::PoweringDown { .. })
}

/// Whether `name` is powering up (`#`).
pub fn powering_up(fx: &CoreFixture, name: &str) -> bool {
    matches!(status(fx, name), PowerStatus::PoweringUp { .. })
}
