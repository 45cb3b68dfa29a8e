//! `sshare`: the shares, usage and fair-share factor of the cluster's associations, as a tree.
//! As Slurm's sshare, it asks the controller (`ListShares`), which computes the numbers from
//! the associations' shares and decayed usage (fetched from the accounting daemon every
//! `PriorityCalcPeriod`) with the same code and data as the jobs' fair-share factors (Fair
//! Tree, or classic under `PriorityFlags=NO_FAIR_TREE`), so sshare and sprio agree, and
//! applies `PrivateData=usage`. `-M` resolves the clusters through the accounting daemon and,
//! as Slurm's sshare, shows the first.
//!
//! * [`args`]: options; [`fields`]: field table, `-o`, values.

pub mod args;
pub mod fields;

use std::io::Write;

use sluice_vocab::fairshare::{ShareRow, Shares};
use sluice_wire::proto::{ListSharesReply, ListSharesRequest};

use crate::cmdutil;
use crate::multicluster::{self, Selection};
use crate::output::Printer;
use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::SlurmConf;
use args::{HELP, Invocation, SshareOpts, USAGE};
use fields::{Field, Line};

/// Runs the `sshare` binary.
pub fn main() -> i32 {
    let code = run(
        &cmdutil::args(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    let _ = std::io::stdout().flush();
    code
}

fn fail(err: &mut dyn Write, text: &str) -> i32 {
    let _ = writeln!(err, "{text}");
    1
}

fn print(out: &mut dyn Write, text: &str) -> i32 {
    let _ = out.write_all(text.as_bytes());
    0
}

/// Runs sshare with `args` against the cluster named by `SLURM_CONF`.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let opts = match args::parse(args) {
        Ok(Invocation::Run(o)) => o,
        Ok(Invocation::Help) => return print(out, HELP),
        Ok(Invocation::HelpFormat) => return print(out, &fields::help_format()),
        Ok(Invocation::Usage) => return print(out, USAGE),
        Ok(Invocation::Version) => {
            return print(out, &format!("sluice {}\n", env!("CARGO_PKG_VERSION")));
        }
        Err(text) => return fail(err, &text),
    };
    let mut names: Vec<String> = if opts.format.is_empty() {
        let base = if opts.long {
            fields::LONG
        } else {
            fields::DEFAULT
        };
        base.iter().map(|s| s.to_string()).collect()
    } else {
        opts.format.clone()
    };
    if opts.partition && opts.format.is_empty() {
        names.insert(2, "Partition".into());
    }
    let cols = match fields::parse(&names) {
        Ok(c) => c,
        Err(text) => return fail(err, &text),
    };
    let conf = match SlurmConf::from_env() {
        Ok(c) => c,
        Err(e) => return fail(err, &format!("sshare: error: {e}")),
    };
    let Some(rt) = cmdutil::runtime("sshare", err) else {
        return 1;
    };
    let me = cmdutil::user_name(cmdutil::current_uid());
    let reply = rt.block_on(async {
        let mut ctld = match &opts.clusters {
            None => conf.connect_ctld().await.map_err(|e| e.to_string())?,
            // As Slurm's sshare, -M talks to the first cluster named.
            Some(names) => {
                let members = multicluster::resolve(&conf, &Selection::parse(names))
                    .await
                    .map_err(|e| e.lines().join("\n"))?;
                let m = members.first().ok_or("no cluster")?;
                multicluster::connect(&conf, m)
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        ctld.list_shares(ListSharesRequest {})
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| status_text(&s, Asker::Views))
    });
    let reply = match reply {
        Ok(r) => r,
        Err(text) => return fail(err, &format!("sshare: error: {text}")),
    };
    let printer = Printer::new(opts.mode, cols.iter().map(|(_, c)| c.clone()).collect());
    if !opts.no_header {
        let _ = printer.print_header(out);
    }
    let fields: Vec<Field> = cols.iter().map(|(f, _)| *f).collect();
    for l in &select(lines(reply), &opts, &me) {
        let values: Vec<String> = fields.iter().map(|&f| fields::value(l, f)).collect();
        let _ = printer.print_row(out, &values);
    }
    0
}

/// The lines of the controller's answer, in its order.
pub fn lines(reply: ListSharesReply) -> Vec<Line> {
    let cluster = reply.cluster;
    reply
        .lines
        .into_iter()
        .map(|l| Line {
            row: ShareRow {
                account: l.account,
                user: l.user,
                depth: usize::try_from(l.depth).unwrap_or(0),
                shares: l.shares.map(Shares::from_raw),
                norm_shares: l.norm_shares,
                raw_usage: l.raw_usage,
                norm_usage: l.norm_usage,
                effective_usage: l.effective_usage,
                fairshare: l.fairshare,
                level_fs: l.level_fs,
            },
            cluster: cluster.clone(),
            id: l.id,
            run_cpu_mins: l.run_cpu_mins,
        })
        .collect()
}

/// What the options show: account lines (unless `-U`), and the user lines of `-u`'s users,
/// every user with `-a`, else the caller's own; `-A` keeps the named accounts' lines only.
pub fn select(lines: Vec<Line>, opts: &SshareOpts, me: &str) -> Vec<Line> {
    lines
        .into_iter()
        .filter(|l| {
            let r = &l.row;
            if r.user.is_empty() {
                return !opts.users_only;
            }
            opts.all || opts.users.contains(&r.user) || (opts.users.is_empty() && r.user == me)
        })
        .filter(|l| opts.accounts.is_empty() || opts.accounts.contains(&l.row.account))
        .collect()
}

#[cfg(test)]
mod render_tests;
