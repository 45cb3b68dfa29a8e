//! The cluster the job-manager scenarios (`jobs.rs`, `dependencies.rs`) run on.

use sluice_ctld::core::SubmitRequest;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};

/// `nodes` registered nodes of 4 CPUs, a default partition `debug` (MaxTime 2 h, MaxNodes 3) and
/// a partition `closed` to group g77, partition limits enforced at submission
/// (`EnforcePartLimits=ALL`); `extra` is one more slurm.conf line.
pub fn cluster(nodes: u32, extra: &str) -> CoreFixture {
    let mut b = ClusterBuilder::new()
        .nodes(&format!("n[1-{nodes}]"), "CPUs=4 RealMemory=1000 Feature=x")
        .partition("debug", "Nodes=ALL Default=YES MaxTime=2:00:00 MaxNodes=3")
        .partition("closed", "Nodes=ALL AllowGroups=g77")
        .conf("KillWait=30")
        .conf("MinJobAge=300")
        .conf("SlurmdTimeout=0")
        .conf("EnforcePartLimits=ALL");
    if !extra.is_empty() {
        b = b.conf(extra);
    }
    let mut fx = b.build();
    fx.register_all();
    fx
}

/// A job of uid 1000 named `name`.
pub fn job(name: &str) -> SubmitRequest {
    SubmitRequest::new(1000, name)
}
