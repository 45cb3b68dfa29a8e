//! What every node of an srun step is sent (`RunStepRequest` before each node's part): the
//! command, the tasks' environment (what `--export` passes plus the step's layout), their
//! streams and scripts, as the controller granted the step (or, with `-Z`, as srun made it up).

use sluice_wire::proto::{EnvVar, RunStepRequest, TaskArgv};

use super::args::SrunOpts;
use super::{layout, multi_prog, stdio};
use crate::jobspec::{Submitter, request::workdir};
use crate::slurm_conf::SlurmConf;

/// What [`step_template`] needs besides the options: the step as the controller granted it.
pub struct StepParts<'a> {
    /// Job and step id.
    pub ids: (u32, u32),
    /// The group the tasks run with.
    pub gid: u32,
    /// The step's nodes (a hostlist).
    pub node_list: &'a str,
    /// How many of them run tasks.
    pub node_count: usize,
    /// How many tasks.
    pub ntasks: u32,
    /// The job name the tasks see.
    pub name: &'a str,
    /// The controller's credential for the step.
    pub credential: Option<sluice_wire::proto::JobCredential>,
    /// Which tasks run where.
    pub layout: &'a [layout::NodeTasks],
}

/// What every node of the step is sent (its own part is filled per node at launch).
pub fn step_template(
    opts: &SrunOpts,
    environ: &[(String, String)],
    conf: &SlurmConf,
    who: &Submitter,
    bcast: Option<sluice_wire::proto::BcastFile>,
    parts: StepParts<'_>,
) -> RunStepRequest {
    let (job_id, step_id) = parts.ids;
    let mut template = RunStepRequest {
        job_id,
        step_id,
        uid: who.uid,
        gid: parts.gid,
        argv: opts.command.clone(),
        workdir: workdir(opts.job.chdir.as_deref(), &who.cwd),
        env: task_env(
            opts,
            environ,
            &conf.propagate,
            &layout::tasks_per_node(parts.layout),
        ),
        bcast,
        node_list: parts.node_list.to_string(),
        node_count: u32::try_from(parts.node_count).unwrap_or(u32::MAX),
        ntasks: parts.ntasks,
        name: parts.name.to_string(),
        user: who.user.clone(),
        credential: parts.credential,
        ..Default::default()
    };
    stdio::fill(&mut template, opts, parts.ntasks);
    template.preserve_env = opts.step.preserve_env;
    template.task_prolog = opts.step.task_prolog.clone().unwrap_or_default();
    template.task_epilog = opts.step.task_epilog.clone().unwrap_or_default();
    template
}

/// `--multi-prog`: the command lines of the `ntasks` tasks from `first_task` on, from the file
/// `m`, whose task ranks count from `first_task` (a component of a heterogeneous step has a
/// file of its own, its ranks its own from 0).
pub fn task_argvs(
    template: &mut RunStepRequest,
    m: &multi_prog::MultiProg,
    first_task: u32,
    ntasks: u32,
) -> Result<(), multi_prog::MultiProgError> {
    template.task_argv = (0..ntasks)
        .zip(m.argvs(ntasks)?)
        .map(|(task, argv)| TaskArgv {
            task: first_task.saturating_add(task),
            argv,
        })
        .collect();
    Ok(())
}

/// Variables of [`jobspec::JobOpts::placement_vars`] Slurm's srun does not set for its tasks
/// (the node daemon sets the `SLURM_MEM_BIND*` ones from the policy it applies).
const SRUN_LEAVES: [&str; 4] = [
    "SLURM_HINT",
    "SLURM_ACCTG_FREQ",
    "SLURM_MEM_BIND",
    "SLURM_MEM_BIND_VERBOSE",
];

/// The tasks' environment: what `--export` passes, with `SLURM_NTASKS_PER_NODE` when asked.
fn task_env(
    opts: &SrunOpts,
    environ: &[(String, String)],
    propagate: &[&str],
    tasks_per_node: &str,
) -> Vec<EnvVar> {
    let mut env = opts.job.export().apply(environ);
    env.retain(|v| !v.name.starts_with(sluice_wire::rlimits::PREFIX));
    env.extend(opts.job.rlimit_env(propagate));
    // The step's own layout and the options that shaped it, as Slurm's srun sets them (its
    // tasks see the binding a hint stands for, not `SLURM_HINT`).
    let topo = opts
        .job
        .topo_vars()
        .into_iter()
        .map(|(n, v)| (n, v.to_string()));
    let placement = opts
        .job
        .placement_vars()
        .into_iter()
        .filter(|(n, _)| !SRUN_LEAVES.contains(n));
    let layout = [
        ("SLURM_TASKS_PER_NODE", tasks_per_node.to_string()),
        ("SLURM_STEP_TASKS_PER_NODE", tasks_per_node.to_string()),
    ];
    for (name, value) in topo.chain(placement).chain(layout) {
        env.retain(|v| v.name != name);
        env.push(EnvVar {
            name: name.to_string(),
            value,
        });
    }
    let own = [
        (
            "SLURM_NTASKS_PER_NODE",
            opts.job.ntasks_per_node.map(|n| n.to_string()),
        ),
        // --container: the bundle the tasks were asked to run in (no runtime here, as in a
        // Slurm without oci.conf: they run on the node directly).
        ("SLURM_CONTAINER", opts.job.container.clone()),
    ];
    for (name, value) in own {
        if let Some(value) = value {
            env.retain(|v| v.name != name);
            env.push(EnvVar {
                name: name.to_string(),
                value,
            });
        }
    }
    env
}
