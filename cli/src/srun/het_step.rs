//! `srun --het-group=LIST` inside a heterogeneous job's allocation: one step across the listed
//! components, as Slurm runs it. Each component's part is a step of that component's job,
//! created with srun's options (so `-n2 --het-group=0,1` asks two tasks of each), all under
//! one step id (the leader's counter gives it, the other parts take it); the tasks are ranked
//! across the components in order (`SLURM_PROCID` 0.. over component 0's tasks, then 1's)
//! and every task sees the whole step: its nodes, its task count and the leader's job id.
//!
//! The components come from the batch script's (or salloc's) environment:
//! `SLURM_HET_SIZE` and `SLURM_JOB_ID_HET_GROUP_<N>`.
//!
//! With `srun A cmd1 : B cmd2` each component's tasks run its own command with its own
//! environment and streams, and srun shows their output as its options say (`-l`, `-u`,
//! `-i/-o/-e`, `--open-mode`), as Slurm's srun launches each component with its own options;
//! a component's `--multi-prog` file numbers the component's tasks from 0.
//! What ends or signals the step as a whole (`-K`, `-W`, `-X`, `--quit-on-interrupt`, `-T`,
//! `--pty`) is the first component's.

use std::io::Write;

use sluice_wire::client::CtldClient;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{Allocation, StepDoneRequest};
use tokio::sync::mpsc;

use super::args::SrunOpts;
use super::launch::{self, NodePart};
use super::layout::{self, NodeTasks};
use super::multi_prog::MultiProg;
use super::output::TaskIo;
use super::{Interrupt, stdio, step, template, watch};
use crate::jobspec::Submitter;
use crate::slurm_conf::SlurmConf;
use sluice_wire::auth::Signer;

/// What the step needs from srun's run.
pub struct HetStep<'a> {
    pub opts: &'a SrunOpts,
    pub environ: &'a [(String, String)],
    pub who: &'a Submitter,
    pub conf: &'a SlurmConf,
    pub signer: &'a Signer,
    /// The job srun runs in (the heterogeneous job's leader).
    pub job_id: u32,
    /// The step's name.
    pub name: &'a str,
    /// `--bcast`'s copy of the executable.
    pub bcast: Option<sluice_wire::proto::BcastFile>,
    /// srun's stdin for the tasks.
    pub stdin: Option<Box<dyn std::io::Read + Send>>,
    /// How long `-I` lets srun wait for the step's CPUs.
    pub patience: Option<std::time::Duration>,
    /// Each listed component's step options (`srun A : B`); empty: srun's options for all.
    pub group_opts: Vec<&'a SrunOpts>,
    /// srun's `--multi-prog` file, read and checked (its options').
    pub multi_prog: Option<&'a MultiProg>,
    /// Each listed component's, as [`Self::group_opts`]; empty: srun's for all. A file's task
    /// ranks count from its component's first task.
    pub group_progs: Vec<Option<&'a MultiProg>>,
    /// srun made the job (`srun A : B` outside an allocation): the step's end ends it.
    pub end_job: bool,
}

/// Why the step cannot be made, in Slurm's words (each printed after `srun: error: `).
fn components(environ: &[(String, String)], groups: &[u32]) -> Result<Vec<u32>, String> {
    let var = |name: &str| {
        environ
            .iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse::<u32>().ok())
    };
    let size = var("SLURM_HET_SIZE").unwrap_or(1).max(1);
    if let Some(&g) = groups.iter().find(|&&g| g >= size) {
        return Err(format!(
            "Requested het-group offset exceeds highest hetjob index ({g} > {})",
            size - 1
        ));
    }
    if size == 1 {
        return Err("No directives to start application on any available hetjob components".into());
    }
    groups
        .iter()
        .map(|g| {
            var(&format!("SLURM_JOB_ID_HET_GROUP_{g}")).ok_or_else(|| {
                "No directives to start application on any available hetjob components".into()
            })
        })
        .collect()
}

/// Runs the step to its end; srun's exit code.
pub async fn run(
    s: HetStep<'_>,
    ctld: &mut CtldClient,
    groups: &[u32],
    (out, err): (&mut dyn Write, &mut dyn Write),
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let jobs = match components(s.environ, groups) {
        Ok(j) => j,
        Err(text) => return super::fail(err, &text),
    };
    let opts_of = |k: usize| s.group_opts.get(k).copied().unwrap_or(s.opts);
    let prog_of = |k: usize| s.group_progs.get(k).copied().unwrap_or(s.multi_prog);
    // --bcast copies one executable (the first component's) to every node of the step.
    let bcast_differs = (0..jobs.len()).map(opts_of).any(|o| {
        o.bcast.dest != s.opts.bcast.dest
            || (o.bcast.dest.is_some() && o.command.first() != s.opts.command.first())
    });
    if bcast_differs {
        return super::fail(
            err,
            "--bcast with several components needs it given alike to each, all running one executable",
        );
    }
    // Each component's part, under the id the first part took.
    let mut made: Vec<(u32, sluice_wire::proto::CreateStepReply)> = Vec::new();
    for (k, &job) in jobs.iter().enumerate() {
        let opts = opts_of(k);
        let mut req = step::request(opts, job, s.name, !s.end_job);
        req.het_step_id = made.first().map(|(_, r)| r.step_id);
        let created =
            step::create(ctld, req, (s.opts.job.quiet, s.patience), err, interrupts).await;
        match created {
            Ok(reply) => made.push((job, reply)),
            Err(failure) => {
                abandon(ctld, &made, s.end_job.then_some(s.job_id)).await;
                return match failure {
                    step::StepFailure::Refused(text) => {
                        super::fail(err, &format!("Unable to create step for job {job}: {text}"))
                    }
                    step::StepFailure::Interrupted(_) => 1,
                };
            }
        }
    }
    let step_id = made.first().map_or(0, |(_, r)| r.step_id);
    // The step's nodes and ranks: component 0's, then 1's, ...
    let mut nodes = Vec::new();
    let mut lay: Vec<NodeTasks> = Vec::new();
    let mut node_parts = Vec::new();
    let mut ntasks = 0u32;
    // Each component's first rank and task count.
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for (k, (job, reply)) in made.iter().enumerate() {
        let alloc: Allocation = reply.allocation.clone().unwrap_or_default();
        let n = if alloc.ntasks > 0 {
            alloc.ntasks
        } else {
            u32::try_from(alloc.nodes.len()).unwrap_or(1)
        };
        let names: Vec<String> = alloc.nodes.iter().map(|x| x.name.clone()).collect();
        let opts = opts_of(k);
        let part_layout = layout::for_step(
            opts.job.distribution.and_then(|d| d.nodes),
            n,
            &names,
            &opts.nodelist,
            &alloc.tasks_per_node,
        );
        let base = nodes.len();
        for p in part_layout {
            lay.push(NodeTasks {
                node: base + p.node,
                ranks: p.ranks.iter().map(|r| r + ntasks).collect(),
            });
        }
        for _ in &alloc.nodes {
            node_parts.push(NodePart {
                job_id: *job,
                step_id: reply.step_id,
                credential: reply.credential.clone(),
                component: k,
            });
        }
        nodes.extend(alloc.nodes);
        spans.push((ntasks, n));
        ntasks += n;
    }
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let node_list = sluice_vocab::hostlist::compress(&names);
    let first = made.first().map(|(_, r)| r);
    let body = first
        .and_then(|r| r.credential.as_ref())
        .and_then(sluice_wire::auth::credential::read_unchecked);
    let gid = body.as_ref().map_or(s.who.gid, |b| b.gid);
    let run = body.as_ref().map_or(0, |b| b.restart_count);
    let parts = || template::StepParts {
        ids: (s.job_id, step_id),
        gid,
        node_list: &node_list,
        node_count: lay.len(),
        ntasks,
        name: s.name,
        credential: first.and_then(|r| r.credential.clone()),
        layout: &lay,
    };
    // What each component's nodes are sent: its command, environment and streams (`-i/-o/-e
    // <task>` counting from its first rank), and --multi-prog's command lines.
    let mut components = Vec::with_capacity(spans.len());
    for (k, &(first_task, n)) in spans.iter().enumerate() {
        let opts = opts_of(k);
        let bcast = s.bcast.clone();
        let mut own = template::step_template(opts, s.environ, s.conf, s.who, bcast, parts());
        stdio::fill(&mut own, opts, n);
        own.stdin_task = own.stdin_task.map(|t| t.saturating_add(first_task));
        own.het_job_id = s.job_id;
        if let Some(m) = prog_of(k)
            && let Err(e) = template::task_argvs(&mut own, m, first_task, n)
        {
            abandon(ctld, &made, s.end_job.then_some(s.job_id)).await;
            return super::fail(err, &e.to_string());
        }
        components.push(own);
    }
    let mut tmpl = template::step_template(s.opts, s.environ, s.conf, s.who, None, parts());
    tmpl.het_job_id = s.job_id;
    let stdin = s
        .stdin
        .filter(|_| components.iter().any(|c| c.stdin_from_srun))
        .map(super::stdio::read_chunks);
    let mut step = launch::Step::from_opts(
        s.opts,
        s.conf,
        tmpl,
        (nodes, lay, ntasks),
        stdin,
        Some(watch::JobWatch::new(ctld.clone(), s.job_id, run)),
    );
    step.parts = node_parts;
    step.components = components;
    step.io = spans
        .iter()
        .enumerate()
        .map(|(k, &(first_task, n))| TaskIo::of(opts_of(k), first_task, n))
        .collect();
    let (outcome, usage) = launch::run(step, s.signer, out, err, interrupts).await;
    // The leader's part last: with `end_job` its end ends the whole job.
    for (job, reply) in made.iter().rev() {
        let _ = ctld
            .step_done(StepDoneRequest {
                job_id: *job,
                step_id: reply.step_id,
                exit_code: outcome.exit_code,
                signal: outcome.signal,
                end_job: s.end_job && *job == s.job_id,
                // The usage was measured over every node of the step; it is recorded once,
                // with the first part.
                usage: usage
                    .as_ref()
                    .filter(|_| Some(*job) == jobs.first().copied())
                    .map(StepUsageWire::to_proto),
            })
            .await;
    }
    outcome.exit_status()
}

/// Ends the parts made of a step that will not run, and the job srun made for it (`own_job`).
async fn abandon(
    ctld: &mut CtldClient,
    made: &[(u32, sluice_wire::proto::CreateStepReply)],
    own_job: Option<u32>,
) {
    for (job, reply) in made {
        super::end_step(ctld, (*job, reply.step_id), false, 1).await;
    }
    if let Some(job) = own_job {
        let _ = ctld
            .cancel(sluice_wire::proto::CancelRequest {
                job_ids: vec![job],
                ..Default::default()
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::components;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn components_come_from_the_allocations_variables_with_slurms_errors() {
        let het = env(&[
            ("SLURM_HET_SIZE", "2"),
            ("SLURM_JOB_ID_HET_GROUP_0", "21"),
            ("SLURM_JOB_ID_HET_GROUP_1", "22"),
        ]);
        assert_eq!(components(&het, &[0, 1]), Ok(vec![21, 22]));
        assert_eq!(components(&het, &[1]), Ok(vec![22]));
        assert_eq!(
            components(&het, &[2]).unwrap_err(),
            "Requested het-group offset exceeds highest hetjob index (2 > 1)"
        );
        let plain = env(&[("SLURM_JOB_ID", "5")]);
        assert_eq!(
            components(&plain, &[1]).unwrap_err(),
            "Requested het-group offset exceeds highest hetjob index (1 > 0)"
        );
        assert_eq!(
            components(&plain, &[0]).unwrap_err(),
            "No directives to start application on any available hetjob components"
        );
    }
}
