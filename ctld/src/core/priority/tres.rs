//! The TRES factor (`PriorityWeightTRES=CPU=1000,Mem=2000,Node=10`): for each TRES Sluice
//! counts, the job's request over the total of its partition's nodes (0..1). Each is weighted
//! on its own and the weighted values added to the priority; `sprio` shows them per TRES.
//!
//! A job asks `-n × -c` CPUs, `--mem` on each of its `-N` nodes and `-N` nodes.

use super::super::Core;
use super::super::jobs::Job;
use sluice_vocab::cluster_conf::TresKind;

/// Every TRES the factor counts, in Slurm's TRES order.
pub const KINDS: [TresKind; 3] = [TresKind::Cpu, TresKind::Mem, TresKind::Node];

/// Where `kind`'s factor sits in [`TresFactors`].
pub fn slot(kind: TresKind) -> usize {
    match kind {
        TresKind::Cpu => 0,
        TresKind::Mem => 1,
        TresKind::Node => 2,
    }
}

/// The normalized factor of each TRES of [`KINDS`], in that order.
pub type TresFactors = [f64; 3];

/// The job's TRES factors; all 0 when no TRES has a weight (nothing to compute).
pub fn factors(core: &Core, job: &Job) -> TresFactors {
    if core.conf.priority.weight_tres.is_empty() {
        return [0.0; 3];
    }
    let Some(part) = core.conf.partitions.get(job.partition.get()) else {
        return [0.0; 3];
    };
    let (mut cpus, mut mem, mut nodes) = (0.0, 0.0, 0.0);
    for name in &part.nodes {
        if let Ok(i) = core.nodes.lookup(name) {
            let n = core.nodes.get(i);
            cpus += f64::from(n.cpus);
            mem += n.real_memory_mb as f64;
            nodes += 1.0;
        }
    }
    let req = &job.req;
    let asked_nodes = f64::from(req.min_nodes.max(1));
    let asked = [
        f64::from(req.ntasks.max(1)) * f64::from(req.cpus_per_task.max(1)),
        req.mem_per_node_mb as f64 * asked_nodes,
        asked_nodes,
    ];
    let part_of = |asked: f64, total: f64| {
        if total > 0.0 {
            (asked / total).min(1.0)
        } else {
            0.0
        }
    };
    [
        part_of(asked[0], cpus),
        part_of(asked[1], mem),
        part_of(asked[2], nodes),
    ]
}
