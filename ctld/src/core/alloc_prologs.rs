//! `PrologFlags=Alloc` for batch jobs: every node of the allocation runs its `Prolog` when the
//! job is allocated, and the batch script starts only once each of them has reported its
//! prolog's success (Slurm's job stays CONFIGURING meanwhile). The batch host runs its own
//! prolog within the launch, before the script, so the launch waits for the other nodes only.
//! A failed prolog is reported as any failed prolog is ([`super::node_scripts`]): the node is
//! drained and the job requeued held, and the held launch is dropped with the run.
//!
//! The nodes still waited for are saved with the job: a restarted controller holds the
//! launch again and asks those nodes anew; a node whose prolog ran or runs already answers
//! with its outcome instead of running it twice.

use super::outbox::{NodeCommand, Outbox, SaveHint};
use super::power::{Configuring, PowerStatus};
use super::{Core, SimTime};
use sluice_vocab::{FedJobId, NodeIdx};

/// Holds `id`'s batch launch until the prologs of its nodes but the first (the batch host)
/// have succeeded, and asks those nodes to run them now. Nothing for a job on one node.
pub(crate) fn hold_for_node_prologs(
    core: &mut Core,
    out: &mut impl Outbox,
    id: FedJobId,
    nodes: &[NodeIdx],
) {
    if !core.conf.prolog.flags.alloc {
        return;
    }
    let Some(job) = core.jobs.map.get(&id) else {
        return;
    };
    // The job's nodes are not set on it yet while it starts.
    let others: Vec<NodeIdx> = nodes.iter().skip(1).copied().collect();
    if others.is_empty() || !job.runs_batch_script() {
        return;
    }
    let run = job.restarts;
    // Nodes still powering up are asked once they are up ([`ask_when_up`]).
    let up = nodes
        .iter()
        .all(|&n| core.nodes.get(n).power.status == PowerStatus::On);
    let c = core.power.configuring.entry(id).or_insert(Configuring {
        run,
        launch: None,
        prolog_running: false,
        node_prologs: Default::default(),
        prologs_asked: false,
        launched: false,
        cloud_boot: false,
    });
    c.node_prologs.extend(others.iter().copied());
    c.prologs_asked = up;
    if up {
        out.node(NodeCommand::AllocProlog {
            job: id,
            nodes: others,
        });
    }
}

/// Asks the nodes of a CONFIGURING job (now all up) for the prologs it waits for, once.
pub(crate) fn ask_when_up(c: &mut Configuring, out: &mut impl Outbox, id: FedJobId) {
    if c.prologs_asked || c.node_prologs.is_empty() {
        return;
    }
    c.prologs_asked = true;
    out.node(NodeCommand::AllocProlog {
        job: id,
        nodes: c.node_prologs.iter().copied().collect(),
    });
}

/// Node `node` ran the allocation prolog of run `run` of `id` successfully; the batch script
/// starts once no other node's is pending. A report about another run, or one that is not
/// waited for (repeated, or about a job on one node), changes nothing.
pub fn on_node_prolog_done(
    core: &mut Core,
    out: &mut impl Outbox,
    now: SimTime,
    id: FedJobId,
    node: &str,
    run: u32,
) {
    let Ok(i) = core.nodes.lookup(node) else {
        tracing::warn!(node, job = %id, "prolog done reported by an unknown node");
        return;
    };
    let Some(c) = core.power.configuring.get_mut(&id) else {
        return;
    };
    if c.run != run || !c.node_prologs.remove(&i) {
        return;
    }
    // Saved: a restarted controller waits for the other nodes only.
    out.save(SaveHint::Job(id));
    if c.node_prologs.is_empty() {
        super::power::boot::release_ready(core, out, now);
    }
}
