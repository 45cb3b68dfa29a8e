//! Running one report: parse its words, resolve the fields and the window, ask the dbd,
//! merge a federation, render. Messages Slurm prints and carries on after (unknown
//! conditions or fields) go to stderr and make the exit code 1; errors stop the report.

use sluice_wire::proto::{JobSizesQuery, UsageQuery};

use super::assoc::{self, Order};
use super::conds::{self, Conds, Kind};
use super::data::{self, fed_label};
use super::error::SreportError;
use super::fields::{self, Chosen, Family, add_to_list};
use super::session::{Scope, Session};
use super::sizes::{self, SizesOpts};
use super::window::{Window, report_window};
use super::{top, util};

/// Parses a time given to `start=`/`end=` at the session's clock.
fn parse_time(s: &Session<'_>, text: &str) -> Result<i64, String> {
    crate::timespec::parse(text, s.now, s.zone).map_err(|e| e.to_string())
}

/// The report's conditions, printing what Slurm warns about; `None` when the report stops.
fn conditions(s: &mut Session<'_>, kind: Kind, words: &[String]) -> Option<Conds> {
    let now_parser = |t: &str| parse_time(s, t);
    let parsed = conds::parse(kind, words, &now_parser);
    match parsed {
        Ok((c, warnings)) => {
            for w in warnings {
                s.fail(&w);
            }
            Some(c)
        }
        Err(e) => {
            s.fail(&e.to_string());
            None
        }
    }
}

/// The chosen fields (the report's default list when `format=` is not given).
fn chosen(s: &mut Session<'_>, family: Family, c: &Conds, default: &str) -> Vec<Chosen> {
    let mut items = c.format.clone();
    if items.is_empty() {
        add_to_list(&mut items, default);
    }
    let (chosen, errors) = fields::parse_format(family, &items, c.tree, s.opts.time);
    for e in errors {
        s.fail(&e);
    }
    chosen
}

fn usage_query(scope: &Scope, win: &Window, s: &Session<'_>, c: &Conds) -> UsageQuery {
    UsageQuery {
        clusters: scope.clusters.clone(),
        start: win.start,
        end: win.end,
        tres: s.opts.tres.names().to_vec(),
        accounts: c.accounts.clone(),
        users: c.users.clone(),
    }
}

/// The uids of `Users=` names (or numbers), as Slurm's `_addto_uid_char_list` resolves them.
fn user_ids(users: &[String]) -> Result<Vec<u32>, SreportError> {
    users
        .iter()
        .map(|u| crate::cmdutil::uid_of(u).ok_or_else(|| SreportError::InvalidUser(u.clone())))
        .collect()
}

/// Runs a report and prints it, or the error that stopped it.
async fn finish(s: &mut Session<'_>, run: Result<String, SreportError>) {
    match run {
        Ok(text) => s.out(&text),
        Err(e) => s.fail(&e.to_string()),
    }
}

/// `cluster Utilization`.
pub async fn utilization(s: &mut Session<'_>, words: &[String]) {
    let Some(c) = conditions(s, Kind::Utilization, words) else {
        return;
    };
    let style = s.style();
    let fields = chosen(s, Family::Cluster, &c, util::default_format(&style));
    let win = report_window(c.start, c.end, s.now, s.zone);
    let run = async {
        let scope = s.scope(&c).await?;
        let mut rows = s.cluster_usage(usage_query(&scope, &win, s, &c)).await?;
        if let Some(fed) = &scope.federation {
            rows = data::merge_clusters(rows, &fed_label(fed));
        }
        Ok(util::render(&style, &win, &fields, &rows))
    };
    let result = run.await;
    finish(s, result).await;
}

/// `cluster AccountUtilizationByUser` / `cluster UserUtilizationByAccount`.
pub async fn association(s: &mut Session<'_>, order: Order, words: &[String]) {
    let kind = match order {
        Order::AccountByUser => Kind::AccountByUser,
        Order::UserByAccount => Kind::UserByAccount,
    };
    let Some(c) = conditions(s, kind, words) else {
        return;
    };
    let style = s.style();
    let fields = chosen(s, Family::Cluster, &c, order.default_format(&style));
    let win = report_window(c.start, c.end, s.now, s.zone);
    let run = async {
        let scope = s.scope(&c).await?;
        let (mut rows, mut clusters) = s.assoc_usage(usage_query(&scope, &win, s, &c)).await?;
        if let Some(fed) = &scope.federation {
            rows = data::merge_assocs(rows, &fed_label(fed));
            clusters = data::merge_clusters(clusters, &fed_label(fed));
        }
        let tree = c.tree && order == Order::AccountByUser;
        let names = s.names;
        Ok(assoc::render(
            order, tree, &style, &win, &fields, &rows, &clusters, names,
        ))
    };
    let result = run.await;
    finish(s, result).await;
}

/// `user TopUsage`.
pub async fn top_usage(s: &mut Session<'_>, words: &[String]) {
    let Some(c) = conditions(s, Kind::TopUsage, words) else {
        return;
    };
    let style = s.style();
    let fields = chosen(s, Family::User, &c, top::default_format(&style));
    let win = report_window(c.start, c.end, s.now, s.zone);
    let run = async {
        let scope = s.scope(&c).await?;
        let (mut rows, mut clusters) = s.assoc_usage(usage_query(&scope, &win, s, &c)).await?;
        if let Some(fed) = &scope.federation {
            rows = data::merge_assocs(rows, &fed_label(fed));
            clusters = data::merge_clusters(clusters, &fed_label(fed));
        }
        let names = s.names;
        let shape = top::Shape {
            top: c.top_count,
            group: c.group,
        };
        Ok(top::render(
            &style, &win, &fields, &rows, &clusters, shape, names,
        ))
    };
    let result = run.await;
    finish(s, result).await;
}

/// `job SizesByAccount`.
pub async fn job_sizes(s: &mut Session<'_>, words: &[String]) {
    let Some(c) = conditions(s, Kind::JobSizes, words) else {
        return;
    };
    if c.individual && !c.grouping.is_empty() {
        s.fail(&SreportError::IndividualWithList.to_string());
        return;
    }
    let uids = match user_ids(&c.users) {
        Ok(u) => u,
        Err(e) => {
            s.fail(&e.to_string());
            return;
        }
    };
    if s.opts.tres.names().len() > 1 {
        s.fail(&SreportError::SingleTres.to_string());
        return;
    }
    let style = s.style();
    let fields = chosen(s, Family::Job, &c, sizes::DEFAULT_FORMAT);
    let win = report_window(c.start, c.end, s.now, s.zone);
    let mut grouping = c.grouping.clone();
    if grouping.is_empty() && !c.individual {
        add_to_list(&mut grouping, sizes::DEFAULT_GROUPING);
    }
    let mut opts = SizesOpts {
        grouping,
        print_job_count: c.print_job_count,
        flat_view: c.flat_view,
        acct_as_parent: c.acct_as_parent,
        accounts: c.accounts.clone(),
        individual: c.individual,
        sizes: Vec::new(),
    };
    let run = async {
        let scope = s.scope(&c).await?;
        let q = JobSizesQuery {
            clusters: scope.clusters.clone(),
            start: win.start,
            end: win.end,
            grouping: opts.bounds(),
            tres: s.opts.tres.names().first().cloned().unwrap_or_default(),
            // The dbd keeps these accounts' sub-trees (and their ancestors, empty).
            accounts: opts.accounts.clone(),
            uids,
            individual: opts.individual,
        };
        let (mut rows, found) = s.job_sizes(q).await?;
        if opts.individual && found.is_empty() {
            return Err(SreportError::NoGrouping);
        }
        opts.sizes = found;
        if let Some(fed) = &scope.federation {
            rows = data::merge_sizes(rows, &fed_label(fed));
        }
        Ok(sizes::render(&style, &win, &fields, &opts, &rows))
    };
    let result = run.await;
    finish(s, result).await;
}
