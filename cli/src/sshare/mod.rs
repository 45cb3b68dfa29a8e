//! `sshare`: the shares, usage and fair-share factor of the cluster's associations, as a tree.
//! The decay settings come from the controller (`GetConfig`: `PriorityDecayHalfLife`,
//! `PriorityUsageResetPeriod`, its start for `NOW`), the associations with their shares and
//! decayed usage from the accounting daemon, and the classic fair-share arithmetic is the
//! controller's own (`sluice_vocab::fairshare`), so sshare and sprio agree.
//!
//! * [`args`]: options; [`fields`]: field table, `-o`, values.

pub mod args;
pub mod fields;

use std::collections::HashMap;
use std::io::Write;

use sluice_vocab::cluster_conf::UsageReset;
use sluice_vocab::cluster_conf::timefmt::parse_duration_secs;
use sluice_vocab::fairshare::{self, AssocInput, Shares};
use sluice_wire::proto::{Association, GetConfigRequest, ListAssociationsRequest};

use crate::cmdutil;
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
    let assocs = match rt.block_on(fetch(&conf)) {
        Ok(a) => a,
        Err(text) => return fail(err, &format!("sshare: error: {text}")),
    };
    let me = cmdutil::user_name(cmdutil::current_uid());
    let shown = select(lines(&assocs.0, &assocs.1), &opts, &me);
    let printer = Printer::new(opts.mode, cols.iter().map(|(_, c)| c.clone()).collect());
    if !opts.no_header {
        let _ = printer.print_header(out);
    }
    let fields: Vec<Field> = cols.iter().map(|(f, _)| *f).collect();
    for l in &shown {
        let values: Vec<String> = fields.iter().map(|&f| fields::value(l, f)).collect();
        let _ = printer.print_row(out, &values);
    }
    0
}

/// The cluster's name and its associations with shares and usage, decayed as the
/// controller's configuration says.
async fn fetch(conf: &SlurmConf) -> Result<(String, Vec<Association>), String> {
    let mut ctld = conf.connect_ctld().await.map_err(|e| e.to_string())?;
    let entries = ctld
        .get_config(GetConfigRequest {})
        .await
        .map_err(|s| status_text(&s, Asker::Views))?
        .into_inner();
    let get = |key: &str| {
        entries
            .entries
            .iter()
            .find(|e| e.name == key)
            .map(|e| e.value.clone())
    };
    let defaults = sluice_vocab::cluster_conf::PriorityConf::default();
    let half_life = get("PriorityDecayHalfLife")
        .and_then(|v| parse_duration_secs(&v).ok())
        .unwrap_or(defaults.decay_half_life_secs);
    let started = get("BOOT_TIME").and_then(|v| v.parse().ok()).unwrap_or(0);
    let reset = get("PriorityUsageResetPeriod")
        .and_then(|v| reset_named(&v))
        .unwrap_or_default();
    let cluster = get("ClusterName").unwrap_or_default();
    let mut dbd = conf.connect_dbd().await.map_err(|e| e.to_string())?;
    let assocs = dbd
        .list_associations(ListAssociationsRequest {
            clusters: vec![cluster.clone()],
            with_usage: true,
            usage_half_life: i64::try_from(half_life).unwrap_or(i64::MAX),
            usage_since: reset.since(entries.now, started),
            ..Default::default()
        })
        .await
        .map_err(|s| status_text(&s, Asker::Accounting))?
        .into_inner()
        .associations;
    Ok((cluster, assocs))
}

fn reset_named(name: &str) -> Option<UsageReset> {
    [
        UsageReset::None,
        UsageReset::Now,
        UsageReset::Daily,
        UsageReset::Weekly,
        UsageReset::Monthly,
        UsageReset::Quarterly,
        UsageReset::Yearly,
    ]
    .into_iter()
    .find(|r| r.name().eq_ignore_ascii_case(name))
}

/// Every association of the tree, in sshare's order, with the running jobs' CPU-minutes of
/// each (an account's: its subtree's).
pub fn lines(cluster: &str, assocs: &[Association]) -> Vec<Line> {
    let inputs: Vec<AssocInput> = assocs
        .iter()
        .map(|a| AssocInput {
            account: a.account.clone(),
            user: a.user.clone(),
            parent: a.parent_account.clone(),
            shares: Shares::from_raw(a.shares),
            raw_usage: a.raw_usage,
        })
        .collect();
    let parents: HashMap<&str, &str> = assocs
        .iter()
        .filter(|a| a.user.is_empty())
        .map(|a| (a.account.as_str(), a.parent_account.as_str()))
        .collect();
    let mut run: HashMap<(String, String), u64> = HashMap::new();
    for a in assocs.iter().filter(|a| !a.user.is_empty()) {
        *run.entry((a.account.clone(), a.user.clone())).or_default() += a.run_cpu_mins;
        // Up the account chain (bounded, in case of a loop in bad data).
        let mut account = a.account.as_str();
        for _ in 0..64 {
            *run.entry((account.to_string(), String::new())).or_default() += a.run_cpu_mins;
            match parents.get(account) {
                Some(p) if !p.is_empty() => account = p,
                _ => break,
            }
        }
    }
    fairshare::compute(&inputs)
        .into_iter()
        .map(|row| Line {
            run_cpu_mins: run
                .get(&(row.account.clone(), row.user.clone()))
                .copied()
                .unwrap_or(0),
            cluster: cluster.to_string(),
            row,
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
