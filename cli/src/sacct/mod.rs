//! `sacct`: job accounting records from the accounting daemon, printed as they stream in
//! (nothing is collected, so memory stays flat however many jobs match).
//!
//! * [`args`]: options; [`jobsel`]: `-j` items; [`window`]: Slurm's defaults and the query;
//! * [`format`]: field lists; [`fields`]: the field table; [`values`]: value rendering;
//! * [`render`]: lines and text layouts; [`json`]: `--json`.

pub mod args;
pub mod fields;
pub mod format;
pub mod json;
pub mod render;
pub mod window;

pub use crate::acct::{jobsel, usage, values};

#[cfg(test)]
mod render_tests;

use std::io::Write;

use sluice_wire::proto::{JobFields, JobQuery, ListClustersRequest, ListFederationsRequest};
use tonic::Status;

use crate::cmdutil;
use crate::rpc_error::{Asker, database_problem, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use crate::timefmt::Zone;
use args::{ClusterSel, Context, Invocation, SacctOpts};
use fields::Cx;
use format::Chosen;
use json::JsonOut;
use render::{TextOut, job_lines};

const USAGE: &str = "Usage: sacct [-abDeLlnPpXv] [-A accounts] [-E time] [-j jobs] [-M clusters]\n\
              [-N nodes] [-o fields] [-r partitions] [-S time] [-s states] [-u users]\n\
              [-W wckeys] [--delimiter=X] [--federation] [--json] [--local] [--name=names]\n";

/// Runs the `sacct` binary.
pub fn main() -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    // Lines are written in chunks (each chunk of rows from the dbd is flushed as a whole).
    let mut out = std::io::BufWriter::with_capacity(OUT_BUFFER, stdout.lock());
    let code = run(&cmdutil::args(), &mut out, &mut stderr.lock());
    // `sacct | head`: a reader gone is not an error.
    let _ = out.flush();
    code
}

/// Bytes of output collected before they are written.
const OUT_BUFFER: usize = 64 * 1024;

/// Runs sacct with `args` against the accounting daemon named by `SLURM_CONF`.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let now = cmdutil::now();
    let cx = Context {
        env: &env,
        now,
        zone: Zone::Local,
    };
    let fail = |err: &mut dyn Write, text: &str| {
        let _ = writeln!(err, "{text}");
        1
    };
    let opts = match args::parse(args, &cx) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => {
            let _ = out.write_all(USAGE.as_bytes());
            return 0;
        }
        Ok(Invocation::HelpFields) => {
            let names: Vec<&str> = fields::FIELDS.iter().map(|f| f.name).collect();
            for row in names.chunks(6) {
                let _ = writeln!(out, "{}", row.join(" "));
            }
            return 0;
        }
        Ok(Invocation::Version) => {
            let _ = writeln!(out, "sluice {}", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        Err(e) => return fail(err, &e),
    };
    let columns = match format::parse_format(&opts.fields, opts.long) {
        Ok(c) => c,
        Err(e) => return fail(err, &e),
    };
    let win = match window::window(&opts, now, Zone::Local) {
        Ok(w) => w,
        Err(e) => return fail(err, &e),
    };
    let conf = match SlurmConf::from_env() {
        Ok(c) => c,
        Err(e) => return fail(err, &format!("sacct: error: {e}")),
    };
    let Some(rt) = cmdutil::runtime("sacct", err) else {
        return 1;
    };
    let cx = Cx {
        zone: Zone::Local,
        now,
        noconvert: opts.noconvert,
    };
    let uid = cmdutil::current_uid();
    rt.block_on(async {
        let (clusters, local) = match clusters(&conf, &opts).await {
            Ok(c) => c,
            Err(text) => return fail(err, &text),
        };
        let mut q = window::query(&opts, clusters, uid, win);
        // Slurm removes federated duplicates only in the federation view.
        q.federation = local.is_some();
        q.no_steps = !needs_steps(&opts, &columns);
        // JSON prints every field; text lines only the chosen ones' text fields.
        q.fields = (!opts.json).then(|| JobFields {
            names: fields::text_reads(columns.iter().map(|(f, _)| f.name)),
        });
        stream(&conf, q, &opts, &columns, local.as_deref(), &cx, out, err).await
    })
}

/// Whether the rows must carry their steps: for the step lines, the JSON output, and the
/// job-line fields computed from the steps (the derived exit code, the usage fields).
fn needs_steps(o: &SacctOpts, cols: &[Chosen]) -> bool {
    !o.no_steps
        || o.json
        || cols.iter().any(|(f, _)| {
            f.name == "DerivedExitCode" || usage::USAGE_FIELDS.iter().any(|u| u.name == f.name)
        })
}

/// The clusters to search (empty = all) and, in a federation view, the local cluster.
async fn clusters(
    conf: &SlurmConf,
    o: &SacctOpts,
) -> Result<(Vec<String>, Option<String>), String> {
    let local = conf.cluster_name.clone();
    match &o.clusters {
        ClusterSel::Local => Ok((local.into_iter().collect(), None)),
        ClusterSel::List(names) => Ok((names.clone(), None)),
        ClusterSel::All => Ok((Vec::new(), None)),
        ClusterSel::Federation => {
            let Some(name) = local else {
                return Ok((Vec::new(), None));
            };
            let members = federation_members(conf, &name)
                .await
                .map_err(|st| database_problem("sacct", &status_text(&st, Asker::Accounting)))?;
            match members {
                Some(m) => Ok((m, Some(name))),
                None => Ok((vec![name], None)),
            }
        }
    }
}

/// The clusters of `cluster`'s federation, or `None` when it is in none.
async fn federation_members(
    conf: &SlurmConf,
    cluster: &str,
) -> Result<Option<Vec<String>>, Status> {
    let mut client = conf
        .connect_dbd()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let feds = client
        .list_federations(ListFederationsRequest {
            clusters: vec![cluster.to_string()],
            ..Default::default()
        })
        .await?
        .into_inner()
        .federations;
    let [fed] = feds.as_slice() else {
        return Ok(None);
    };
    let members = client
        .list_clusters(ListClustersRequest {
            federations: vec![fed.name.clone()],
            ..Default::default()
        })
        .await?
        .into_inner()
        .clusters;
    Ok(Some(members.into_iter().map(|c| c.name).collect()))
}

#[allow(clippy::too_many_arguments)]
async fn stream(
    conf: &SlurmConf,
    q: JobQuery,
    o: &SacctOpts,
    cols: &[Chosen],
    local: Option<&str>,
    cx: &Cx,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut client = match conf.connect_records().await {
        Ok(c) => c,
        Err(e @ CliError::Connect { .. }) => {
            let reason = match &e {
                CliError::Connect { reason, .. } => reason.clone(),
                _ => String::new(),
            };
            let _ = writeln!(err, "sacct: error: {e}");
            let _ = writeln!(err, "{}", database_problem("sacct", &reason));
            return 1;
        }
        Err(e) => {
            let _ = writeln!(err, "sacct: error: {e}");
            return 1;
        }
    };
    let mut rows = match client.list_jobs(q).await {
        Ok(r) => r.into_inner(),
        Err(st) => {
            let _ = writeln!(
                err,
                "{}",
                database_problem("sacct", &status_text(&st, Asker::Accounting))
            );
            return 1;
        }
    };
    let mut text = TextOut::new(o, cols);
    let mut json = JsonOut::default();
    if !o.no_header && !o.json {
        let _ = text.header(out);
    }
    loop {
        match rows.message().await {
            Ok(Some(chunk)) => {
                let written = chunk.rows.iter().try_for_each(|row| {
                    if o.json {
                        if local.is_some() && job_lines(row, o, local).is_empty() {
                            return Ok(());
                        }
                        json.job(out, &json::job(row, !o.no_steps, cx))
                    } else {
                        text.lines(out, &job_lines(row, o, local), cx)
                    }
                });
                if written.and_then(|()| out.flush()).is_err() {
                    // The reader went away (`sacct | head`): stop quietly, as Slurm does.
                    return 0;
                }
            }
            Ok(None) => break,
            Err(st) => {
                let _ = writeln!(
                    err,
                    "{}",
                    database_problem("sacct", &status_text(&st, Asker::Accounting))
                );
                return 1;
            }
        }
    }
    if o.json {
        let _ = json.finish(out);
    }
    0
}
