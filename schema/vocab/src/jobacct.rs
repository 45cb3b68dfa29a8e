//! What a step's processes used (Slurm's `jobacct_gather` statistics), shared by the node
//! daemons that measure it, the controller that records it and the accounting daemon and `sacct`
//! that keep and show it.
//!
//! As in Slurm's `job_step_table`, usage is kept per TRES (`cpu`, `mem`, `fs/disk`, `vmem`,
//! `pages`) in strings of `id=value` pairs: the total over the step's tasks, the largest task's
//! value with that task's rank and node index, the smallest and the average. "In" is what tasks
//! read (memory, CPU, disk reads); "out" is what they wrote (disk writes).

use std::collections::BTreeMap;
use std::fmt;

/// Slurm's TRES id of CPU time (usage in milliseconds).
pub const TRES_CPU: u32 = 1;
/// TRES id of memory (resident set size, bytes).
pub const TRES_MEM: u32 = 2;
/// TRES id of the local disk (bytes read or written).
pub const TRES_FS_DISK: u32 = 6;
/// TRES id of virtual memory (bytes).
pub const TRES_VMEM: u32 = 7;
/// TRES id of major page faults.
pub const TRES_PAGES: u32 = 8;

/// TRES ids and names in the order `sacct` prints them (by name).
pub const TRES_NAMES: [(u32, &str); 5] = [
    (TRES_CPU, "cpu"),
    (TRES_FS_DISK, "fs/disk"),
    (TRES_MEM, "mem"),
    (TRES_PAGES, "pages"),
    (TRES_VMEM, "vmem"),
];

/// A value per TRES id, written `1=20,2=4096` as Slurm's database keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TresMap(pub BTreeMap<u32, u64>);

impl TresMap {
    /// The value of TRES `id`, if measured.
    pub fn get(&self, id: u32) -> Option<u64> {
        self.0.get(&id).copied()
    }

    /// Sets TRES `id` to `v`.
    pub fn set(&mut self, id: u32, v: u64) {
        self.0.insert(id, v);
    }

    /// Parses the `id=value,...` form; `None` when malformed.
    pub fn parse(text: &str) -> Option<Self> {
        let mut map = BTreeMap::new();
        for pair in text.split(',').filter(|p| !p.is_empty()) {
            let (id, v) = pair.split_once('=')?;
            map.insert(id.parse().ok()?, v.parse().ok()?);
        }
        Some(Self(map))
    }
}

impl fmt::Display for TresMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (id, v)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{id}={v}")?;
        }
        Ok(())
    }
}

/// One direction of a step's usage ("in" or "out").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageSide {
    /// Sum over the step's tasks.
    pub tot: TresMap,
    /// The largest task's value.
    pub max: TresMap,
    /// The rank of the task with the largest value.
    pub max_task: TresMap,
    /// The index (in the step's node list) of the node of that task.
    pub max_node: TresMap,
    /// The smallest task's value.
    pub min: TresMap,
    /// The rank of the task with the smallest value.
    pub min_task: TresMap,
    /// The index (in the step's node list) of the node of that task.
    pub min_node: TresMap,
    /// The average over the step's tasks.
    pub ave: TresMap,
}

/// What one task used, as a node daemon measured it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskUsage {
    /// The task's rank in the step.
    pub task: u32,
    /// The index of its node in the step's node list.
    pub node: u32,
    /// User CPU time, milliseconds.
    pub user_ms: u64,
    /// System CPU time, milliseconds.
    pub sys_ms: u64,
    /// Largest resident set size seen, bytes.
    pub rss: u64,
    /// Largest virtual memory size seen, bytes.
    pub vmem: u64,
    /// Major page faults.
    pub pages: u64,
    /// Bytes read from storage.
    pub read: u64,
    /// Bytes written to storage.
    pub write: u64,
}

/// A step's usage over all its tasks (on one node, or over the whole step once merged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepUsage {
    /// How many tasks were measured.
    pub tasks: u32,
    /// Total user CPU time, milliseconds.
    pub user_cpu_ms: u64,
    /// Total system CPU time, milliseconds.
    pub sys_cpu_ms: u64,
    /// CPU, memory, disk reads, virtual memory, page faults.
    pub usage_in: UsageSide,
    /// Disk writes.
    pub usage_out: UsageSide,
}

impl StepUsage {
    /// The usage of `tasks` (none: `None`).
    pub fn from_tasks(tasks: &[TaskUsage]) -> Option<Self> {
        let (first, rest) = tasks.split_first()?;
        let mut usage = Self::of_task(first);
        for t in rest {
            usage.merge(&Self::of_task(t));
        }
        Some(usage)
    }

    fn of_task(t: &TaskUsage) -> Self {
        let side = |values: &[(u32, u64)]| {
            let map = TresMap(values.iter().copied().collect());
            let at = |v: u64| TresMap(values.iter().map(|&(id, _)| (id, v)).collect());
            UsageSide {
                tot: map.clone(),
                max: map.clone(),
                max_task: at(u64::from(t.task)),
                max_node: at(u64::from(t.node)),
                min: map.clone(),
                min_task: at(u64::from(t.task)),
                min_node: at(u64::from(t.node)),
                ave: map,
            }
        };
        Self {
            tasks: 1,
            user_cpu_ms: t.user_ms,
            sys_cpu_ms: t.sys_ms,
            usage_in: side(&[
                (TRES_CPU, t.user_ms + t.sys_ms),
                (TRES_MEM, t.rss),
                (TRES_FS_DISK, t.read),
                (TRES_VMEM, t.vmem),
                (TRES_PAGES, t.pages),
            ]),
            usage_out: side(&[(TRES_FS_DISK, t.write)]),
        }
    }

    /// Adds `other` (other tasks of the same step, e.g. another node's) to this usage.
    pub fn merge(&mut self, other: &Self) {
        let tasks = self.tasks + other.tasks;
        merge_side(&mut self.usage_in, &other.usage_in, tasks);
        merge_side(&mut self.usage_out, &other.usage_out, tasks);
        self.tasks = tasks;
        self.user_cpu_ms += other.user_cpu_ms;
        self.sys_cpu_ms += other.sys_cpu_ms;
    }

    /// Total CPU time (user and system), milliseconds.
    pub fn total_cpu_ms(&self) -> u64 {
        self.user_cpu_ms + self.sys_cpu_ms
    }
}

fn merge_side(a: &mut UsageSide, b: &UsageSide, tasks: u32) {
    for (&id, &v) in &b.tot.0 {
        let tot = a.tot.get(id).unwrap_or(0) + v;
        a.tot.set(id, tot);
        a.ave.set(id, tot / u64::from(tasks.max(1)));
    }
    for (&id, &v) in &b.max.0 {
        if a.max.get(id).is_none_or(|m| v > m) {
            a.max.set(id, v);
            for (dst, src) in [
                (&mut a.max_task, &b.max_task),
                (&mut a.max_node, &b.max_node),
            ] {
                dst.set(id, src.get(id).unwrap_or(0));
            }
        }
    }
    for (&id, &v) in &b.min.0 {
        if a.min.get(id).is_none_or(|m| v < m) {
            a.min.set(id, v);
            for (dst, src) in [
                (&mut a.min_task, &b.min_task),
                (&mut a.min_node, &b.min_node),
            ] {
                dst.set(id, src.get(id).unwrap_or(0));
            }
        }
    }
}

#[cfg(test)]
mod tests;
