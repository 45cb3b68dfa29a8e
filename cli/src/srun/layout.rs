//! Where tasks run and how their ends add up: block distribution over the step's nodes (or
//! the controller's per-node counts), Slurm's task lists (`tasks 0-2,5`), and srun's exit code.

use sluice_wire::proto::TaskExit;

use crate::jobspec::signals;

/// The tasks one node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeTasks {
    /// The node's index in the step.
    pub node: usize,
    /// Global rank of its first task.
    pub first: u32,
    /// How many tasks it runs.
    pub count: u32,
}

/// Block distribution: consecutive ranks per node, the first `ntasks % nodes` nodes one more.
/// Nodes that would get no task are left out (fewer tasks than nodes).
pub fn block(ntasks: u32, nodes: usize) -> Vec<NodeTasks> {
    let Ok(n) = u32::try_from(nodes) else {
        return Vec::new();
    };
    if n == 0 {
        return Vec::new();
    }
    let (base, extra) = (ntasks / n, ntasks % n);
    let mut first = 0;
    let mut out = Vec::new();
    for node in 0..n {
        let count = base + u32::from(node < extra);
        if count == 0 {
            break;
        }
        out.push(NodeTasks {
            node: node as usize,
            first,
            count,
        });
        first += count;
    }
    out
}

/// The controller's layout: `counts[k]` consecutive ranks on node `k`; nodes without a task
/// are left out.
pub fn from_counts(counts: &[u32]) -> Vec<NodeTasks> {
    let mut first = 0;
    let mut out = Vec::new();
    for (node, &count) in counts.iter().enumerate() {
        if count > 0 {
            out.push(NodeTasks { node, first, count });
            first += count;
        }
    }
    out
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

    #[test]
    fn block_gives_the_remainder_to_the_first_nodes() {
        let firsts: Vec<(u32, u32)> = block(5, 2).iter().map(|t| (t.first, t.count)).collect();
        assert_eq!(firsts, vec![(0, 3), (3, 2)]);
        let even: Vec<(u32, u32)> = block(4, 4).iter().map(|t| (t.first, t.count)).collect();
        assert_eq!(even, vec![(0, 1), (1, 1), (2, 1), (3, 1)]);
        assert_eq!(block(1, 3).len(), 1, "no node without a task");
        assert!(block(3, 0).is_empty());
    }

    #[test]
    fn controller_counts_give_consecutive_ranks() {
        let places: Vec<(usize, u32, u32)> = from_counts(&[1, 3, 0, 2])
            .iter()
            .map(|t| (t.node, t.first, t.count))
            .collect();
        assert_eq!(places, vec![(0, 0, 1), (1, 1, 3), (3, 4, 2)]);
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
