//! What a submission carries (`sbatch` options, decoded by the service) and what it returns.

use super::jobs::LaunchSpec;
use crate::conf::TimeLimit;
use serde::{Deserialize, Serialize};
use sluice_vocab::FedJobId;

/// What a job asked about sharing its resources (Slurm's `shared` job option). The partition's
/// `OverSubscribe` decides what it gets (see [`super::alloc::Share::of`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobShare {
    /// Neither option: the partition decides.
    #[default]
    Unset,
    /// `-s/--oversubscribe` (or `--exclusive=oversubscribe`): it may share its resources.
    OverSubscribe,
    /// `--exclusive`: whole nodes nobody joins.
    Exclusive,
}

impl JobShare {
    /// Whether neither option was given (the saved form omits it then).
    pub fn is_unset(&self) -> bool {
        *self == JobShare::Unset
    }
}

/// `--signal=[{R|B}:]sig[@time]`: a signal sent `before_secs` before the time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarnSignal {
    /// The signal number.
    pub signal: i32,
    /// Seconds before the time limit.
    pub before_secs: u32,
    /// `B:`: only the batch shell; otherwise every step (not the batch shell), as in Slurm.
    pub batch_only: bool,
}

/// Placement and timing options beyond the counts, as the job gave them (saved with it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlaceOpts {
    /// `--ntasks-per-node`: at most this many tasks on each node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks_per_node: Option<u32>,
    /// `--mincpus`: CPUs each node must have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mincpus: Option<u32>,
    /// `-w/--nodelist`: nodes the job must get (names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodelist: Vec<String>,
    /// `-x/--exclude`: nodes the job never gets (names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// `--begin`: not eligible before this time (unix seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin: Option<u64>,
    /// `--nice`: lowers the job's priority by this much (negative raises it; admins only).
    #[serde(skip_serializing_if = "is_zero")]
    pub nice: i32,
    /// `--signal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<WarnSignal>,
    /// `--deadline` (unix seconds): a pending job that can no longer end by then ends DEADLINE.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// `--kill-on-invalid-dep=yes|no`: a job whose dependencies can never be met is cancelled
    /// (yes) or pends with `DependencyNeverSatisfied` (no; also the default, as Slurm's
    /// without `kill_invalid_depend`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_invalid_dep: Option<bool>,
    /// `--priority` (administrators only): the priority the job asks for, carried for the
    /// priority plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<u32>,
    /// `--mail-type` ([`sluice_vocab::mail_type::MailTypes`] bits; 0: no mail).
    #[serde(skip_serializing_if = "is_zero_u16")]
    pub mail_type: u16,
    /// `--mail-user` (`None`: the job's owner).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mail_user: Option<String>,
    /// `--mem-per-cpu` in MB: the job's memory is this times its CPUs on each node (the job's
    /// per-node `--mem` is 0 then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_per_cpu_mb: Option<u64>,
    /// `--tmp` in MB: the temporary disk (`TmpDisk`) each of its nodes must have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tmp_mb: Option<u64>,
    /// `--time-min` in minutes: backfill may start the job with its time limit lowered as far
    /// as this, where that lets it start sooner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_min: Option<u32>,
    /// `-B`, `--sockets-per-node`, `--cores-per-socket`, `--threads-per-core`,
    /// `--ntasks-per-core`, `--ntasks-per-socket`.
    #[serde(skip_serializing_if = "TopoAsk::is_unset")]
    pub topo: TopoAsk,
    /// `--contiguous`: its nodes are consecutive in the node table.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub contiguous: bool,
    /// `-O/--overcommit`: the job is given one task's CPUs on each node, whatever its task
    /// count, and its tasks share them (`--ntasks-per-node` and the like do not limit it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overcommit: bool,
    /// How many nodes within `-N min-max` it takes when more are free than it needs.
    #[serde(skip_serializing_if = "NodeCountPref::is_default")]
    pub node_pref: NodeCountPref,
    /// Whether `-n` was given (the default task count bounds no node count).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ntasks_given: bool,
    /// `--wait-all-nodes=0|1`: whether the batch script waits for every node to boot
    /// (`None`: `SchedulerParameters=sbatch_wait_nodes` decides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_all_nodes: Option<bool>,
    /// `sbatch --batch`: features (within its `--constraint`) its batch host should have;
    /// the first node of the allocation with them runs the script, else the first node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_features: Option<String>,
}

/// Which node count within its range a job takes when nodes are free (Slurm's `-N min-max`,
/// `--use-min-nodes`, `--spread-job`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeCountPref {
    /// No `-N` maximum given: as few nodes as its tasks need.
    #[default]
    Fewest,
    /// `-N min-max`: as many nodes as are free, up to the maximum (and one per task).
    Range,
    /// `--use-min-nodes`: the minimum, even with a range.
    UseMin,
    /// `--spread-job`: as many nodes as are free within the maximum (the partition's without
    /// `-N`), at most one per task, the tasks dealt evenly.
    Spread,
}

impl NodeCountPref {
    /// Whether it is the default (the saved form omits it then).
    pub fn is_default(&self) -> bool {
        *self == Self::Fewest
    }
}

/// What a job asks of its nodes' sockets, cores and threads (each `None` when not asked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopoAsk {
    /// `-B S` / `--sockets-per-node`: nodes with at least this many sockets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sockets_per_node: Option<u32>,
    /// `-B S:C` / `--cores-per-socket`: nodes with at least this many cores per socket.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores_per_socket: Option<u32>,
    /// `-B S:C:T` / `--threads-per-core`: nodes with at least this many threads per core, of
    /// which the job uses at most this many on each core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads_per_core: Option<u32>,
    /// `--ntasks-per-core`: at most this many tasks per core of a node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks_per_core: Option<u32>,
    /// `--ntasks-per-socket`: at most this many tasks per socket of a node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks_per_socket: Option<u32>,
}

impl TopoAsk {
    /// Whether nothing is asked (the saved form omits it then).
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }

    /// Whether a node laid out as `t` has the sockets, cores and threads asked.
    pub fn fits(&self, t: super::nodes::Topo) -> bool {
        let at_least = |asked: Option<u32>, has: u32| asked.is_none_or(|a| has >= a);
        at_least(self.sockets_per_node, t.sockets)
            && at_least(self.cores_per_socket, t.cores_per_socket)
            && at_least(self.threads_per_core, t.threads_per_core)
    }

    /// How many tasks of `cpt` CPUs a node laid out as `t` takes: its CPUs (only
    /// `--threads-per-core` of each core's threads), at most `--ntasks-per-core` per core and
    /// `--ntasks-per-socket` per socket.
    pub fn tasks_on(&self, t: super::nodes::Topo, cpt: u32) -> u32 {
        let cpus = match self.threads_per_core {
            Some(tpc) if tpc < t.threads_per_core => t.cores().saturating_mul(tpc),
            _ => t.cpus,
        };
        let mut tasks = cpus / cpt.max(1);
        if let Some(n) = self.ntasks_per_core {
            tasks = tasks.min(n.saturating_mul(t.cores()));
        }
        if let Some(n) = self.ntasks_per_socket {
            tasks = tasks.min(n.saturating_mul(t.sockets));
        }
        tasks
    }

    /// The CPUs `tasks` tasks of `cpt` CPUs hold on a node laid out as `t`. With
    /// `--threads-per-core` below the node's threads or with `--ntasks-per-core`, tasks get
    /// whole cores, as Slurm hands them out: a task uses at most `--threads-per-core` threads
    /// of each of its cores, a core runs at most `--ntasks-per-core` tasks, and every thread
    /// of a core given to the job is the job's. Otherwise `tasks * cpt`.
    pub fn cpus_for(&self, t: super::nodes::Topo, tasks: u32, cpt: u32) -> u32 {
        let cpt = cpt.max(1);
        let node_tpc = t.threads_per_core.max(1);
        let fewer_threads = self.threads_per_core.is_some_and(|a| a < node_tpc);
        if !fewer_threads && self.ntasks_per_core.is_none() {
            return tasks.saturating_mul(cpt);
        }
        let usable = self
            .threads_per_core
            .map_or(node_tpc, |a| a.min(node_tpc))
            .max(1);
        let cores = if cpt >= usable {
            tasks.saturating_mul(cpt.div_ceil(usable))
        } else {
            let per_core = (usable / cpt).min(self.ntasks_per_core.unwrap_or(u32::MAX));
            tasks.div_ceil(per_core.max(1))
        };
        cores.saturating_mul(node_tpc)
    }
}

fn is_zero_u16(n: &u16) -> bool {
    *n == 0
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// A job submission (`sbatch`), as the service decodes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmitRequest {
    /// Submitting user.
    pub uid: u32,
    /// Primary group.
    pub gid: u32,
    /// Every group of the user (for `AllowGroups`), primary included.
    pub groups: Vec<u32>,
    /// `--job-name`.
    pub name: String,
    /// `-p`; the default partition when `None`.
    pub partition: Option<String>,
    /// `-N min`.
    pub min_nodes: Option<u32>,
    /// `-N min-max`.
    pub max_nodes: Option<u32>,
    /// `-n`.
    pub ntasks: Option<u32>,
    /// `-c`.
    pub cpus_per_task: Option<u32>,
    /// `--mem` in MB (per node).
    pub mem_per_node_mb: Option<u64>,
    /// `-t`; `0` means no limit, `None` the partition's `MaxTime`.
    pub time_limit: Option<TimeLimit>,
    /// `-C/--constraint`.
    pub constraint: Option<String>,
    /// `-d/--dependency`.
    pub dependency: Option<String>,
    /// `-a/--array`.
    pub array: Option<String>,
    /// `-H/--hold`.
    pub hold: bool,
    /// `--no-requeue` sets `Some(false)`; requeue is allowed by default.
    pub requeue: Option<bool>,
    /// `-k/--no-kill`: the job keeps running when one of its nodes fails.
    pub no_kill: bool,
    /// `-s/--oversubscribe` or `--exclusive`.
    pub share: JobShare,
    /// `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--signal`.
    pub place: PlaceOpts,
    /// Whether the submitter is an administrator (may give a negative `--nice`).
    pub admin: bool,
    /// Whether the user is root or the SlurmUser: `AllowGroups` does not apply to them and
    /// `RootOnly` partitions take only their jobs.
    pub root_or_slurm_user: bool,
    /// What to run.
    pub launch: LaunchSpec,
}

impl SubmitRequest {
    /// A one-node, one-task job of `uid` named `name`.
    pub fn new(uid: u32, name: &str) -> Self {
        Self {
            uid,
            gid: uid,
            groups: vec![uid],
            name: name.to_string(),
            ..Self::default()
        }
    }

    /// Sets `-p`.
    pub fn partition(mut self, p: &str) -> Self {
        self.partition = Some(p.to_string());
        self
    }

    /// Sets `-N n`.
    pub fn nodes(mut self, n: u32) -> Self {
        self.min_nodes = Some(n);
        self
    }

    /// Sets `-n`.
    pub fn ntasks(mut self, n: u32) -> Self {
        self.ntasks = Some(n);
        self
    }

    /// Sets `-c`.
    pub fn cpus_per_task(mut self, c: u32) -> Self {
        self.cpus_per_task = Some(c);
        self
    }

    /// Sets `--mem` in MB.
    pub fn mem_mb(mut self, mb: u64) -> Self {
        self.mem_per_node_mb = Some(mb);
        self
    }

    /// Sets `-t` in minutes.
    pub fn minutes(mut self, m: u32) -> Self {
        self.time_limit = Some(TimeLimit::Minutes(m));
        self
    }

    /// Sets `-C`.
    pub fn constraint(mut self, c: &str) -> Self {
        self.constraint = Some(c.to_string());
        self
    }

    /// Sets `-d`.
    pub fn dependency(mut self, d: &str) -> Self {
        self.dependency = Some(d.to_string());
        self
    }

    /// Sets `-a`.
    pub fn array(mut self, a: &str) -> Self {
        self.array = Some(a.to_string());
        self
    }

    /// Sets `-H`.
    pub fn held(mut self) -> Self {
        self.hold = true;
        self
    }

    /// Sets `-k/--no-kill`.
    pub fn no_kill(mut self) -> Self {
        self.no_kill = true;
        self
    }

    /// Sets `--no-requeue`.
    pub fn no_requeue(mut self) -> Self {
        self.requeue = Some(false);
        self
    }

    /// Sets `-s/--oversubscribe`.
    pub fn oversubscribe(mut self) -> Self {
        self.share = JobShare::OverSubscribe;
        self
    }

    /// Sets `--exclusive`.
    pub fn exclusive(mut self) -> Self {
        self.share = JobShare::Exclusive;
        self
    }

    /// Sets the placement and timing options.
    pub fn place(mut self, place: PlaceOpts) -> Self {
        self.place = place;
        self
    }
}

/// The ids given to a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitReply {
    /// The job id (for an array, the array's job id) that `sbatch` prints.
    pub job_id: FedJobId,
    /// Every record created: the job, or each array task in task order.
    pub jobs: Vec<FedJobId>,
}

#[cfg(test)]
mod tests {
    use super::TopoAsk;
    use crate::core::nodes::Topo;

    /// 2 sockets of 2 cores of 2 threads.
    const SMT: Topo = Topo {
        cpus: 8,
        sockets: 2,
        cores_per_socket: 2,
        threads_per_core: 2,
    };

    #[test]
    fn whole_cores_under_threads_or_tasks_per_core() {
        let none = TopoAsk::default();
        assert_eq!(none.cpus_for(SMT, 3, 1), 3, "threads one by one");
        let one_thread = TopoAsk {
            threads_per_core: Some(1),
            ..TopoAsk::default()
        };
        assert_eq!(one_thread.cpus_for(SMT, 3, 1), 6, "a core each");
        assert_eq!(one_thread.cpus_for(SMT, 1, 2), 4, "two cores of one thread");
        let per_core = |n| TopoAsk {
            ntasks_per_core: Some(n),
            ..TopoAsk::default()
        };
        assert_eq!(per_core(1).cpus_for(SMT, 3, 1), 6);
        assert_eq!(per_core(2).cpus_for(SMT, 3, 1), 4, "two tasks share a core");
        assert_eq!(per_core(2).cpus_for(SMT, 2, 2), 4, "a task fills its core");
        let single = Topo {
            threads_per_core: 1,
            ..SMT
        };
        assert_eq!(per_core(1).cpus_for(single, 3, 1), 3, "cores are CPUs");
    }
}
