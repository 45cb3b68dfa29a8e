//! `squeue`: the controller's jobs, with Slurm's options, layouts, sort and messages.
//!
//! * [`args`]: options; [`fields`]: the `-o`/`-O` fields; [`select`]: filters, array folding,
//!   sort; [`json`]: `--json`. [`render`] turns fetched jobs into the text squeue prints.
//! * [`federate`]: `--federation`/`--sibling` merge every member's jobs; `-M` lists each named
//!   cluster under its own `CLUSTER: name` line.

pub mod args;
pub mod federate;
pub mod fields;
pub mod json;
pub mod select;

#[cfg(test)]
mod fed_render_tests;
#[cfg(test)]
mod render_tests;

use std::io::Write;

use sluice_wire::proto::{JobInfo, ListJobsRequest};

use crate::cmdutil;
use crate::multicluster::{self, Member, Selection};
use crate::output::percent::{self, FieldSpec, pad};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use crate::timefmt::{self, Zone};
use args::{Invocation, Layout, SqueueOpts, View};
use fields::{Field, JobLine};

const USAGE: &str = "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n\
              [-n name] [-o format] [--only-job-state] [-p partitions]\n\
              [--qos qos] [--reservation reservation] [--sort fields] [--start]\n\
              [--step step_id] [-t states] [-u user_name] [--usage]\n\
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n\
              [--expand-patterns] [--json=data_parser] [--yaml=data_parser]\n\
              [-ahjlrsv]\n";

/// The text of one run: what goes to stdout and stderr, and the exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rendered {
    /// Standard output.
    pub out: String,
    /// Standard error (format warnings).
    pub err: String,
}

/// Runs the `squeue` binary.
pub fn main() -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(&cmdutil::args(), &mut stdout.lock(), &mut stderr.lock())
}

/// Runs squeue with `args` against the controller named by `SLURM_CONF`; returns the exit code.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let opts = match args::parse(args, &env, cmdutil::current_uid()) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => {
            let _ = out.write_all(USAGE.as_bytes());
            return 0;
        }
        Ok(Invocation::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    for w in &opts.warnings {
        let _ = err.write_all(w.as_bytes());
    }
    if let Err(e) = select::check_sort(&opts.sort) {
        let _ = writeln!(err, "{e}");
        return 1;
    }
    let Some(rt) = cmdutil::runtime("squeue", err) else {
        return 1;
    };
    let blocks = match rt.block_on(fetch(&opts)) {
        Ok(blocks) => blocks,
        Err(text) => {
            let _ = writeln!(err, "{text}");
            return 1;
        }
    };
    let mut code = 0;
    for (i, block) in blocks.iter().enumerate() {
        if let Some(name) = &block.cluster {
            if i > 0 {
                let _ = writeln!(out);
            }
            let _ = writeln!(out, "CLUSTER: {name}");
        }
        let jobs = match &block.jobs {
            Ok(jobs) => jobs,
            Err(text) => {
                let _ = writeln!(err, "{text}");
                code = 1;
                continue;
            }
        };
        if let Some(sel) = opts.jobs.as_deref().filter(|j| j.len() == 1) {
            let id = sel[0].id;
            if !jobs.iter().any(|j| j.job_id == id || j.array_job_id == id) {
                let _ = writeln!(err, "slurm_load_jobs error: Invalid job id specified");
                code = 1;
                continue;
            }
        }
        let r = render(jobs, &opts, Zone::Local, cmdutil::now());
        let _ = err.write_all(r.err.as_bytes());
        let _ = out.write_all(r.out.as_bytes());
    }
    code
}

/// The jobs of one listing: the local or merged view (`cluster` None), or one `-M` cluster.
struct Block {
    cluster: Option<String>,
    jobs: Result<Vec<JobInfo>, String>,
}

fn load_error(text: String) -> String {
    format!("slurm_load_jobs error: {text}")
}

/// Asks the controller(s) of the chosen view for the jobs (finished ones too when the
/// options may show them, see [`select::needs_finished`]; [`select`] filters).
async fn fetch(opts: &SqueueOpts) -> Result<Vec<Block>, String> {
    let conf = SlurmConf::from_env().map_err(|e| format!("squeue: error: {e}"))?;
    let request = ListJobsRequest {
        job_ids: opts.jobs.iter().flatten().map(|s| s.id).collect(),
        uids: opts.users.clone().unwrap_or_default(),
        partitions: opts.partitions.clone().unwrap_or_default(),
        include_finished: select::needs_finished(opts),
        ..Default::default()
    };
    let local = |jobs| {
        vec![Block {
            cluster: None,
            jobs: Ok(jobs),
        }]
    };
    match &opts.view {
        View::Local => Ok(local(fetch_local(&conf, request).await?)),
        View::Clusters(text) => {
            let members = multicluster::resolve(&conf, &Selection::parse(text))
                .await
                .map_err(|e| prefixed(&e))?;
            let mut blocks = Vec::new();
            for m in members {
                let jobs = fetch_member(&conf, &m, request.clone()).await;
                blocks.push(Block {
                    cluster: Some(m.name),
                    jobs,
                });
            }
            Ok(blocks)
        }
        View::Federation | View::Sibling => {
            // Outside a federation (or with the dbd away) the view is the local one, as Slurm's.
            let Ok(Some((_, members))) = multicluster::federation(&conf).await else {
                return Ok(local(fetch_local(&conf, request).await?));
            };
            let mut answers = Vec::new();
            for m in &members {
                // A member that does not answer is left out (Slurm only logs it).
                if let Ok(jobs) = fetch_member(&conf, m, request.clone()).await {
                    answers.push(jobs);
                }
            }
            if answers.is_empty() {
                return Err(load_error("Invalid job id specified".into()));
            }
            let here = conf.cluster_name.clone().unwrap_or_default();
            let siblings = opts.view == View::Sibling;
            Ok(local(federate::merge(answers, &here, siblings)))
        }
    }
}

fn prefixed(e: &multicluster::MultiError) -> String {
    e.lines()
        .iter()
        .map(|l| format!("squeue: error: {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn fetch_local(conf: &SlurmConf, request: ListJobsRequest) -> Result<Vec<JobInfo>, String> {
    let mut client = conf.connect_ctld().await.map_err(|e| match e {
        CliError::Connect { .. } => load_error(CONNECT_FAILURE.into()),
        other => format!("squeue: error: {other}"),
    })?;
    let reply = client
        .list_jobs(request)
        .await
        .map_err(|s| load_error(status_text(&s, Asker::Views)))?;
    Ok(reply.into_inner().jobs)
}

async fn fetch_member(
    conf: &SlurmConf,
    m: &Member,
    request: ListJobsRequest,
) -> Result<Vec<JobInfo>, String> {
    let mut client = multicluster::connect(conf, m)
        .await
        .map_err(|_| load_error(CONNECT_FAILURE.into()))?;
    let reply = client
        .list_jobs(request)
        .await
        .map_err(|s| load_error(status_text(&s, Asker::Views)))?;
    Ok(reply.into_inner().jobs)
}

/// Renders `jobs` as squeue shows them; `now` (unix seconds) is for `-l`'s date line.
pub fn render(jobs: &[JobInfo], opts: &SqueueOpts, zone: Zone, now: i64) -> Rendered {
    let chosen: Vec<&JobInfo> = jobs.iter().filter(|j| select::selected(j, opts)).collect();
    let mut lines = select::fold_arrays(&chosen, !opts.array);
    select::sort_lines(&mut lines, &opts.sort);
    let mut r = Rendered::default();
    let (fields, prefix) = match &opts.layout {
        Layout::Json => {
            r.out = json::render(&lines, zone);
            return r;
        }
        Layout::Letters(fmt) => {
            let layout = percent::parse_letters(fmt);
            let fields = layout
                .fields
                .into_iter()
                .map(|spec| {
                    let field = fields::by_letter(&spec.name);
                    if field.is_none() {
                        r.err.push_str(&format!(
                            "squeue: error: Invalid job format specification: {}\n",
                            spec.name
                        ));
                    }
                    (spec, field)
                })
                .collect::<Vec<_>>();
            (fields, layout.prefix)
        }
        Layout::Long(fmt) => {
            let fields = percent::parse_long(fmt)
                .into_iter()
                .map(|spec| {
                    let field = fields::by_name(&spec.name);
                    if field.is_none() {
                        r.err.push_str(&format!(
                            "squeue: error: Invalid job format specification: {}\n",
                            spec.name
                        ));
                    }
                    (spec, field)
                })
                .collect::<Vec<_>>();
            (fields, String::new())
        }
    };
    if opts.long {
        r.out.push_str(&timefmt::ctime(now, zone));
    }
    if !opts.no_header {
        r.out.push_str(&line(&prefix, &fields, None, zone));
    }
    for l in &lines {
        r.out.push_str(&line(&prefix, &fields, Some(l), zone));
    }
    r
}

/// One line: the header (`job` = None) or a job.
fn line(
    prefix: &str,
    fields: &[(FieldSpec, Option<&'static Field>)],
    job: Option<&JobLine>,
    zone: Zone,
) -> String {
    let mut s = prefix.to_string();
    for (spec, field) in fields {
        match field {
            Some(f) => {
                let (text, cut) = match job {
                    None => (
                        f.header.to_string(),
                        !matches!(f.name, "NodeList" | "ReasonList"),
                    ),
                    Some(l) => ((f.value)(l, zone), f.cut),
                };
                s.push_str(&pad(&text, spec.width, spec.right, cut));
                s.push_str(&spec.suffix);
            }
            None if spec.name.chars().count() == 1 => {
                s.push('%');
                s.push_str(&spec.name);
                s.push_str(&spec.suffix);
            }
            None => s.push_str(&spec.suffix),
        }
    }
    s.push('\n');
    s
}
