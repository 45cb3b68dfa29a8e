//! `srun -Z` (`--no-allocate`): the tasks run on the `-w` nodes without a job, as root or the
//! SlurmUser only. srun makes up the step's ids, as Slurm's does: a job id from
//! [`NO_ALLOC_JOB_IDS`] (no real job's id lies there) and a step id; the controller checks the
//! caller and signs a credential marked no-allocation for them (`NoAllocStep`), and the node
//! daemons run the tasks as for any step. Nothing is queued nor accounted, so no `StepDone`
//! follows; the tasks' exits make srun's exit code as usual.
//!
//! Seen on Slurm 22.05: srun says `do not allocate resources` (not with `-Q`); without `-w` it
//! fails with `must specify a node list with -Z, --no-allocate.`; with `-N` above the list's
//! length, `Only allocated 1 nodes asked for 2` then `Job creation failure.` (exit 1). The
//! tasks see `SLURM_STEP_ID` but no `SLURM_JOB_ID`; a DOWN node runs them all the same. For
//! another user each node refuses the launch: `Task launch for StepId=J.S failed on node n1:
//! Access/permission denied`, `Application launch failed: Access/permission denied`, `Job step
//! aborted`, exit 210 (the low byte of Slurm's error number).

use std::io::Write;

use rand::Rng;
use sluice_vocab::ids::NO_ALLOC_JOB_IDS;
use sluice_wire::auth::Signer;
use sluice_wire::proto::{BcastFile, NoAllocStepRequest};
use tokio::sync::mpsc;
use tonic::Code;

use super::args::SrunOpts;
use super::template::{self, StepParts};
use super::{Interrupt, fail, launch, layout, scripts, tty};
use crate::jobspec::Submitter;
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};

/// What srun says first (unless `-Q`).
pub const NOTE: &str = "srun: do not allocate resources";

/// Slurm's text for a refused launch (`ESLURM_ACCESS_DENIED`).
const ACCESS_DENIED: &str = "Access/permission denied";

/// srun's exit code when the launch is refused as [`ACCESS_DENIED`] (seen on Slurm 22.05).
pub const ACCESS_DENIED_EXIT: i32 = 210;

/// Why `-Z` cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAllocError {
    /// No `-w`.
    #[error("must specify a node list with -Z, --no-allocate.")]
    NoNodeList,
    /// `-N` asks for more nodes than `-w` names.
    #[error("Only allocated {listed} nodes asked for {asked}")]
    TooFewNodes { listed: usize, asked: u32 },
}

impl NoAllocError {
    /// The lines srun prints for it (each after `srun: error: `).
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::NoNodeList => vec![self.to_string()],
            Self::TooFewNodes { .. } => vec![self.to_string(), "Job creation failure.".into()],
        }
    }
}

/// Where the tasks of a `-Z` step run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The nodes that run tasks, in `-w`'s order.
    pub nodes: Vec<String>,
    /// How many tasks.
    pub ntasks: u32,
}

/// The plan of `opts` (which ask for `-Z`): the `-w` nodes, and `-n` tasks (else
/// `--ntasks-per-node` on each, else one each); with fewer tasks than nodes, the first nodes.
pub fn plan(opts: &SrunOpts) -> Result<Plan, NoAllocError> {
    let listed = opts.nodelist.len();
    if listed == 0 {
        return Err(NoAllocError::NoNodeList);
    }
    if let Some(n) = opts.job.nodes
        && n.min as usize > listed
    {
        return Err(NoAllocError::TooFewNodes {
            listed,
            asked: n.min,
        });
    }
    let count = u32::try_from(listed).unwrap_or(u32::MAX);
    let ntasks = match (opts.job.ntasks, opts.job.ntasks_per_node) {
        (Some(n), _) => n,
        (None, Some(per)) => per.saturating_mul(count),
        (None, None) => count,
    };
    let mut nodes = opts.nodelist.clone();
    nodes.truncate(ntasks.max(1) as usize);
    Ok(Plan { nodes, ntasks })
}

/// A job id of [`NO_ALLOC_JOB_IDS`] and a step id, at random (Slurm's step ids here are
/// below 2^31 too).
pub fn made_up_ids(rng: &mut impl Rng) -> (u32, u32) {
    (
        rng.random_range(NO_ALLOC_JOB_IDS),
        rng.random_range(0..1u32 << 31),
    )
}

/// What [`run`] launches besides the options.
pub struct Launch<'a> {
    /// Where the tasks run ([`plan`]).
    pub plan: Plan,
    /// The cluster's configuration.
    pub conf: &'a SlurmConf,
    /// Signs the requests to the controller and the node daemons.
    pub signer: &'a Signer,
    /// `--bcast`: the executable's copy.
    pub bcast: Option<BcastFile>,
    /// `--multi-prog`: the tasks' command lines.
    pub multi_prog: Option<super::multi_prog::MultiProg>,
    /// The tasks' job name.
    pub name: String,
    /// srun's stdin, forwarded as for any step.
    pub stdin: Option<Box<dyn std::io::Read + Send>>,
}

/// Runs the `-Z` step of `opts`; returns srun's exit code.
pub async fn run(
    opts: &SrunOpts,
    environ: &[(String, String)],
    who: &Submitter,
    with: Launch<'_>,
    io: (&mut dyn Write, &mut dyn Write),
    interrupts: &mut mpsc::UnboundedReceiver<Interrupt>,
) -> i32 {
    let (out, err) = io;
    let Launch {
        plan,
        conf,
        signer,
        bcast,
        multi_prog,
        name,
        stdin,
    } = with;
    let mut ctld = match conf.connect_ctld().await {
        Ok(c) => c,
        Err(CliError::Connect { .. }) => return fail(err, CONNECT_FAILURE),
        Err(e) => return fail(err, &e.to_string()),
    };
    let (job_id, step_id) = made_up_ids(&mut rand::rng());
    let req = NoAllocStepRequest {
        job_id,
        step_id,
        gid: who.gid,
        nodelist: plan.nodes.clone(),
    };
    let granted = match ctld.no_alloc_step(req).await {
        Ok(reply) => reply.into_inner(),
        Err(status) if status.code() == Code::PermissionDenied => {
            for node in &plan.nodes {
                fail(
                    err,
                    &format!(
                        "Task launch for StepId={job_id}.{step_id} failed on node {node}: {ACCESS_DENIED}"
                    ),
                );
            }
            fail(err, &format!("Application launch failed: {ACCESS_DENIED}"));
            let _ = writeln!(err, "srun: Job step aborted");
            return ACCESS_DENIED_EXIT;
        }
        Err(status) => return fail(err, &status_text(&status, Asker::Jobs)),
    };
    let names = &plan.nodes;
    let step_layout = layout::for_step(
        opts.job.distribution.and_then(|d| d.nodes),
        plan.ntasks,
        names,
        &opts.nodelist,
        &[],
    );
    let parts = StepParts {
        ids: (job_id, step_id),
        gid: who.gid,
        node_list: &granted.node_list,
        node_count: names.len(),
        ntasks: plan.ntasks,
        name: &name,
        credential: granted.credential,
        layout: &step_layout,
    };
    let mut template = template::step_template(opts, environ, conf, who, bcast, parts);
    if let Some(m) = &multi_prog
        && let Err(e) = template::task_argvs(&mut template, m, 0, plan.ntasks)
    {
        return fail(err, &e.to_string());
    }
    let scripts = scripts::Scripts::new(opts, conf, environ, (job_id, step_id), &granted.node_list);
    if let Err(code) = scripts.prolog(out, err).await {
        return code;
    }
    let ntasks = plan.ntasks;
    let stdin = stdin
        .filter(|_| template.stdin_from_srun)
        .map(super::stdio::read_chunks);
    let _raw = opts.pty.then(tty::Raw::enter).flatten();
    // No job for the controller to tell about: no watch.
    let step = launch::Step::from_opts(
        opts,
        conf,
        template,
        (granted.nodes, step_layout, ntasks),
        stdin,
        None,
    );
    let (outcome, _usage) = launch::run(step, signer, out, err, interrupts).await;
    scripts.epilog(out, err).await;
    outcome.exit_status()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::srun::args::run_opts as opts;

    #[test]
    fn a_node_list_is_required() {
        let o = opts("-Z -n2 hostname");
        assert!(o.no_allocate);
        let e = plan(&o).unwrap_err();
        assert_eq!(e, NoAllocError::NoNodeList);
        assert_eq!(
            e.lines(),
            vec!["must specify a node list with -Z, --no-allocate.".to_string()]
        );
        assert!(plan(&opts("--no-allocate -w n1 true")).is_ok());
    }

    #[test]
    fn tasks_default_to_one_per_listed_node() {
        let p = plan(&opts("-Z -w n[1-3] true")).unwrap();
        assert_eq!(p.nodes, vec!["n1", "n2", "n3"]);
        assert_eq!(p.ntasks, 3);
        let p = plan(&opts("-Z -w n1 -n2 true")).unwrap();
        assert_eq!((p.nodes, p.ntasks), (vec!["n1".to_string()], 2));
        let p = plan(&opts("-Z -w n[1-2] --ntasks-per-node=3 true")).unwrap();
        assert_eq!(p.ntasks, 6);
        // Fewer tasks than nodes: the first nodes run them.
        let p = plan(&opts("-Z -w n[1-3] -n2 true")).unwrap();
        assert_eq!(p.nodes, vec!["n1", "n2"]);
    }

    #[test]
    fn more_nodes_than_listed_is_refused_as_slurm_does() {
        let e = plan(&opts("-Z -w n1 -N2 true")).unwrap_err();
        assert_eq!(
            e.lines(),
            vec![
                "Only allocated 1 nodes asked for 2".to_string(),
                "Job creation failure.".to_string()
            ]
        );
        assert!(plan(&opts("-Z -w n[1-2] -N2 -n3 true")).is_ok());
        assert!(plan(&opts("-Z -w n1 -N1 true")).is_ok());
    }

    #[test]
    fn the_other_step_options_go_with_it() {
        let o = opts("-Z -w n1 -n2 -l -K -W 5 -o out.%t --task-prolog=/tp -Q true");
        assert!(o.no_allocate && o.label && o.job.quiet);
        assert_eq!(o.step.wait, Some(5));
        assert!(plan(&o).is_ok());
    }

    #[test]
    fn made_up_ids_are_no_allocation_ids() {
        let mut rng = rand::rng();
        for _ in 0..1000 {
            let (job, step) = made_up_ids(&mut rng);
            assert!(sluice_vocab::ids::is_no_alloc(job), "{job:#x}");
            assert!(step < 1 << 31);
        }
    }
}
