//! Where tasks run and how their ends add up: the `--distribution` of the step's tasks over
//! its nodes (on the controller's per-node counts when it gives them), Slurm's task lists
//! (`tasks 0-2,5`), and srun's exit code.

use sluice_vocab::distribution::{self, NodeDist};
use sluice_wire::proto::{StepNodeTasks, TaskExit};

use crate::jobspec::signals;

/// The tasks one node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTasks {
    /// The node's index in the step.
    pub node: usize,
    /// Global ranks of its tasks, ascending (consecutive under block distribution).
    pub ranks: Vec<u32>,
}

impl NodeTasks {
    /// How many tasks it runs.
    pub fn count(&self) -> u32 {
        u32::try_from(self.ranks.len()).unwrap_or(u32::MAX)
    }

    /// Whether it runs task `rank`.
    pub fn runs(&self, rank: u32) -> bool {
        self.ranks.contains(&rank)
    }

    /// Its first rank (0 when it runs none).
    pub fn first(&self) -> u32 {
        self.ranks.first().copied().unwrap_or(0)
    }

    /// Its ranks as they travel to the nodes: none when they are consecutive from
    /// [`Self::first`] (block distribution, the common case), else all of them.
    pub fn listed_ranks(&self) -> Vec<u32> {
        let consecutive = (self.first()..)
            .zip(&self.ranks)
            .all(|(want, r)| *r == want);
        if consecutive {
            Vec::new()
        } else {
            self.ranks.clone()
        }
    }

    /// As the step's layout travels to every node (`RunStepRequest.step_layout`).
    pub fn to_wire(&self) -> StepNodeTasks {
        StepNodeTasks {
            node: u32::try_from(self.node).unwrap_or(u32::MAX),
            first: self.first(),
            count: self.count(),
            ranks: self.listed_ranks(),
        }
    }
}

/// The step's layout: `ntasks` over `nodes` nodes as `dist` says, on the controller's
/// per-node counts when it gave them (`counts`, one per node), else on srun's own
/// (`--distribution=arbitrary` is laid out by the caller). Nodes without a task are left out.
pub fn lay_out(dist: NodeDist, ntasks: u32, nodes: usize, counts: &[u32]) -> Vec<NodeTasks> {
    let counts = if counts.len() == nodes && nodes > 0 {
        counts.to_vec()
    } else {
        distribution::counts(dist, ntasks, nodes)
    };
    from_ranks(distribution::place(dist, &counts))
}

/// The layout of a step of `ntasks` on the nodes `names` as `dist` asks: `arbitrary` follows
/// `-w`'s list (`hostlist`), falling back to block when it cannot; the others [`lay_out`] on
/// the controller's per-node `counts` when it gave them.
pub fn for_step(
    dist: Option<NodeDist>,
    ntasks: u32,
    names: &[String],
    hostlist: &[String],
    counts: &[u32],
) -> Vec<NodeTasks> {
    match dist {
        Some(NodeDist::Arbitrary) => match distribution::arbitrary(hostlist, names) {
            Some(ranks) => from_ranks(ranks),
            None => lay_out(
                NodeDist::Block,
                ntasks,
                names.len().min(ntasks as usize),
                &[],
            ),
        },
        _ => lay_out(dist.unwrap_or(NodeDist::Block), ntasks, names.len(), counts),
    }
}

/// Each node's ranks as the step's layout, leaving out the nodes without a task.
pub fn from_ranks(per_node: Vec<Vec<u32>>) -> Vec<NodeTasks> {
    per_node
        .into_iter()
        .enumerate()
        .filter(|(_, ranks)| !ranks.is_empty())
        .map(|(node, ranks)| NodeTasks { node, ranks })
        .collect()
}

/// `SLURM_TASKS_PER_NODE` (and `SLURM_STEP_TASKS_PER_NODE`) of a layout: `2(x3),1`.
pub fn tasks_per_node(layout: &[NodeTasks]) -> String {
    let counts: Vec<u32> = layout.iter().map(NodeTasks::count).collect();
    sluice_vocab::counts::run_length(&counts)
}

/// `task 3` or `tasks 0-2,5`, as srun names tasks in its messages.
pub fn task_list(tasks: &[u32]) -> String {
    let mut sorted = tasks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        ranges.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    let noun = if sorted.len() == 1 { "task" } else { "tasks" };
    format!("{noun} {}", ranges.join(","))
}

/// The step's outcome so far, folded as srun folds task exits: any signal beats any exit
/// code and the highest signal is kept; otherwise the highest exit code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Highest exit code of the tasks that exited.
    pub exit_code: i32,
    /// Highest signal that ended a task (0 = none).
    pub signal: i32,
}

impl Outcome {
    /// Folds one task's end in.
    pub fn add(&mut self, exit: &TaskExit) {
        if exit.signal > 0 {
            self.signal = self.signal.max(exit.signal);
        } else {
            self.exit_code = self.exit_code.max(exit.exit_code);
        }
    }

    /// srun's exit code: `128 + signal` when a signal ended a task, else the highest code.
    pub fn exit_status(&self) -> i32 {
        if self.signal > 0 {
            128 + self.signal
        } else {
            self.exit_code
        }
    }
}

/// srun's error lines for the abnormal ends reported by one node: `node: tasks 0-1: Exited
/// with exit code 3`, `node: task 2: Killed`. Signal lines are left out when srun itself
/// ended the step (Ctrl-C).
pub fn exit_messages(node: &str, exits: &[TaskExit], cancelled: bool) -> Vec<String> {
    let mut groups: Vec<((i32, i32), Vec<u32>)> = Vec::new();
    for e in exits {
        let key = (e.exit_code, e.signal);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, tasks)) => tasks.push(e.task),
            None => groups.push((key, vec![e.task])),
        }
    }
    groups
        .into_iter()
        .filter_map(|((code, sig), tasks)| {
            let list = task_list(&tasks);
            if sig > 0 {
                (!cancelled).then(|| format!("{node}: {list}: {}", signals::describe(sig)))
            } else if code != 0 {
                Some(format!("{node}: {list}: Exited with exit code {code}"))
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(task: u32, exit_code: i32, signal: i32) -> TaskExit {
        TaskExit {
            task,
            exit_code,
            signal,
        }
    }

    fn places(layout: &[NodeTasks]) -> Vec<(usize, Vec<u32>)> {
        layout.iter().map(|t| (t.node, t.ranks.clone())).collect()
    }

    #[test]
    fn block_gives_the_remainder_to_the_first_nodes() {
        let l = lay_out(NodeDist::Block, 5, 2, &[]);
        assert_eq!(places(&l), vec![(0, vec![0, 1, 2]), (1, vec![3, 4])]);
        assert_eq!(tasks_per_node(&l), "3,2");
        assert_eq!(
            tasks_per_node(&lay_out(NodeDist::Block, 4, 4, &[])),
            "1(x4)"
        );
        assert_eq!(
            lay_out(NodeDist::Block, 1, 3, &[]).len(),
            1,
            "no node without a task"
        );
        assert!(lay_out(NodeDist::Block, 3, 0, &[]).is_empty());
    }

    #[test]
    fn controller_counts_are_kept_under_every_distribution() {
        let counts = [1, 3, 0, 2];
        assert_eq!(
            places(&lay_out(NodeDist::Block, 6, 4, &counts)),
            vec![(0, vec![0]), (1, vec![1, 2, 3]), (3, vec![4, 5])]
        );
        assert_eq!(
            places(&lay_out(NodeDist::Cyclic, 6, 4, &counts)),
            vec![(0, vec![0]), (1, vec![1, 3, 5]), (3, vec![2, 4])]
        );
    }

    #[test]
    fn cyclic_and_plane_without_controller_counts() {
        let l = lay_out(NodeDist::Cyclic, 5, 2, &[]);
        assert_eq!(places(&l), vec![(0, vec![0, 2, 4]), (1, vec![1, 3])]);
        assert!(l[1].runs(3) && !l[1].runs(2));
        let p = lay_out(NodeDist::Plane(4), 6, 2, &[]);
        assert_eq!(places(&p), vec![(0, vec![0, 1, 2, 3]), (1, vec![4, 5])]);
        assert_eq!(tasks_per_node(&p), "4,2");
    }

    #[test]
    fn task_lists() {
        assert_eq!(task_list(&[3]), "task 3");
        assert_eq!(task_list(&[5, 0, 1, 2]), "tasks 0-2,5");
    }

    #[test]
    fn signals_beat_exit_codes_and_the_highest_wins() {
        let mut o = Outcome::default();
        o.add(&exit(0, 0, 0));
        assert_eq!(o.exit_status(), 0);
        o.add(&exit(1, 3, 0));
        o.add(&exit(2, 1, 0));
        assert_eq!(o.exit_status(), 3);
        o.add(&exit(3, 0, 2));
        assert_eq!(o.exit_status(), 130);
        o.add(&exit(4, 0, 9));
        o.add(&exit(5, 0, 6));
        assert_eq!(o.exit_status(), 137);
        assert_eq!((o.exit_code, o.signal), (3, 9));
    }

    #[test]
    fn messages_group_tasks_per_status() {
        let exits = [exit(0, 2, 0), exit(1, 2, 0), exit(2, 0, 9), exit(3, 0, 0)];
        assert_eq!(
            exit_messages("n1", &exits, false),
            vec![
                "n1: tasks 0-1: Exited with exit code 2",
                "n1: task 2: Killed"
            ]
        );
        assert_eq!(
            exit_messages("n1", &exits, true),
            vec!["n1: tasks 0-1: Exited with exit code 2"]
        );
    }
}
