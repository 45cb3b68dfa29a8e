//! `cluster AccountUtilizationByUser` and `cluster UserUtilizationByAccount`: allocated time
//! per association, as a share of the cluster's reported time.
//!
//! AccountUtilizationByUser walks the account tree as Slurm's hierarchical sort does: an
//! account's line (its whole sub-tree's usage), then its users by name, then its
//! sub-accounts by name. With `Tree` the account column is indented one space per level and
//! a user line shows its account one level deeper. UserUtilizationByAccount lists user
//! associations, largest CPU time first.

use std::collections::BTreeMap;

use super::data::{AssocTres, ClusterTres};
use super::fields::{Chosen, Field};
use super::render::{ProperNames, Style, columns};
use super::window::Window;

/// Which of the two reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `AccountUtilizationByUser`: the account tree.
    AccountByUser,
    /// `UserUtilizationByAccount`: users, largest first.
    UserByAccount,
}

impl Order {
    /// The fields printed without `format=`.
    pub fn default_format(self, style: &Style) -> &'static str {
        match (self, style.tres.is_given()) {
            (Self::AccountByUser, true) => "Cluster,Ac,Login,Proper,TresName,Used",
            (Self::AccountByUser, false) => "Cluster,Ac,Login,Proper,Used,Energy",
            (Self::UserByAccount, true) => "Cluster,Login,Proper,Ac,TresName,Used",
            (Self::UserByAccount, false) => "Cluster,Login,Proper,Ac,Used,Energy",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::AccountByUser => "Cluster/Account/User Utilization",
            Self::UserByAccount => "Cluster/User/Account Utilization",
        }
    }
}

/// One association with its usage per TRES.
#[derive(Debug, Clone, Default)]
pub struct Rec {
    pub cluster: String,
    pub account: String,
    pub user: String,
    pub parent: String,
    pub secs: BTreeMap<String, u64>,
}

impl Rec {
    /// CPU seconds (Slurm sorts users by CPU whatever `-T` says).
    pub fn cpu(&self) -> u64 {
        self.secs.get("cpu").copied().unwrap_or(0)
    }
}

/// Groups per-TRES rows into associations, in first-seen order.
pub fn group(rows: &[AssocTres]) -> Vec<Rec> {
    let mut recs: Vec<Rec> = Vec::new();
    let mut index: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for r in rows {
        let key = (r.cluster.as_str(), r.account.as_str(), r.user.as_str());
        let i = *index.entry(key).or_insert_with(|| {
            recs.push(Rec {
                cluster: r.cluster.clone(),
                account: r.account.clone(),
                user: r.user.clone(),
                parent: r.parent.clone(),
                secs: BTreeMap::new(),
            });
            recs.len() - 1
        });
        *recs[i].secs.entry(r.tres.clone()).or_insert(0) += r.alloc;
    }
    recs
}

/// Renders either report from association rows and the clusters' totals; `tree` indents the
/// account column (`Tree`).
#[allow(clippy::too_many_arguments)]
pub fn render(
    order: Order,
    tree_view: bool,
    style: &Style,
    win: &Window,
    fields: &[Chosen],
    rows: &[AssocTres],
    clusters: &[ClusterTres],
    names: ProperNames<'_>,
) -> String {
    let mut out = String::new();
    let title = style.window_title(order.title(), win, true);
    style.banner(&mut out, &title, &[style.usage_line()]);

    let recs = group(rows);
    let mut cluster_names: Vec<&str> = recs.iter().map(|r| r.cluster.as_str()).collect();
    cluster_names.sort_unstable();
    cluster_names.dedup();
    // (record, indented account name) per line, cluster by cluster.
    let mut lines: Vec<(&Rec, String)> = Vec::new();
    let mut widest = 0;
    let energy = fields.iter().any(|f| f.field == Field::Energy);
    for c in cluster_names {
        let mine: Vec<&Rec> = recs.iter().filter(|r| r.cluster == c).collect();
        let ordered = match order {
            Order::AccountByUser => tree(&mine),
            Order::UserByAccount => by_usage(&mine, style.sort_by_name),
        };
        if let Some((first, _)) = ordered.first() {
            widest = widest.max(if energy {
                first.cpu()
            } else {
                style
                    .tres
                    .names()
                    .iter()
                    .map(|t| first.secs.get(t).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            });
        }
        lines.extend(ordered);
    }
    let mut fields = fields.to_vec();
    for f in &mut fields {
        match f.field {
            Field::Used => f.column.width = style.time.usage_width(widest),
            Field::Energy => f.column.width = style.time.usage_width(0),
            _ => {}
        }
    }
    let totals: BTreeMap<(&str, &str), u64> = clusters
        .iter()
        .map(|c| ((c.cluster.as_str(), c.tres.as_str()), c.reported()))
        .collect();
    let mut table = Vec::new();
    for (rec, tree_name) in &lines {
        for tres in style.tres.names() {
            let total = totals
                .get(&(rec.cluster.as_str(), tres.as_str()))
                .copied()
                .unwrap_or(0);
            let used = rec.secs.get(tres).copied().unwrap_or(0);
            let row = fields.iter().map(|f| match f.field {
                Field::Cluster => rec.cluster.clone(),
                Field::Account if tree_view => tree_name.clone(),
                Field::Account => rec.account.clone(),
                Field::Login => rec.user.clone(),
                Field::Proper if !rec.user.is_empty() => names(&rec.user).unwrap_or_default(),
                Field::Used => style.value(used, total),
                Field::Energy => style.value(0, 0),
                Field::TresName => tres.clone(),
                _ => String::new(),
            });
            table.push(row.collect());
        }
    }
    style.table(&mut out, columns(&fields), &table);
    out
}

/// Accounts depth first (users before sub-accounts, each by name), each with its tree name.
fn tree<'a>(recs: &[&'a Rec]) -> Vec<(&'a Rec, String)> {
    let account_rec = |a: &str| recs.iter().find(|r| r.user.is_empty() && r.account == a);
    let mut accounts: Vec<&str> = recs.iter().map(|r| r.account.as_str()).collect();
    accounts.sort_unstable();
    accounts.dedup();
    let parent_of = |a: &str| account_rec(a).map(|r| r.parent.as_str()).unwrap_or("");
    let tops: Vec<&str> = accounts
        .iter()
        .copied()
        .filter(|a| !accounts.contains(&parent_of(a)) || parent_of(a) == *a)
        .collect();
    let mut out = Vec::new();
    let mut stack: Vec<(&str, usize)> = tops.iter().rev().map(|a| (*a, 0)).collect();
    while let Some((acct, depth)) = stack.pop() {
        let printed = account_rec(acct);
        if let Some(r) = printed {
            out.push((*r, format!("{}{acct}", " ".repeat(depth))));
        }
        let user_depth = if printed.is_some() { depth + 1 } else { 0 };
        let mut users: Vec<&Rec> = recs
            .iter()
            .copied()
            .filter(|r| !r.user.is_empty() && r.account == acct)
            .collect();
        users.sort_by(|a, b| a.user.cmp(&b.user));
        for u in users {
            out.push((u, format!("{}{acct}", " ".repeat(user_depth))));
        }
        let child_depth = if printed.is_some() { depth + 1 } else { 0 };
        let children = accounts
            .iter()
            .copied()
            .filter(|a| *a != acct && parent_of(a) == acct);
        let children: Vec<&str> = children.collect();
        for c in children.into_iter().rev() {
            stack.push((c, child_depth));
        }
    }
    out
}

/// User associations, largest CPU time first (or by name), then by login and account.
fn by_usage<'a>(recs: &[&'a Rec], by_name: bool) -> Vec<(&'a Rec, String)> {
    let mut users: Vec<&Rec> = recs
        .iter()
        .copied()
        .filter(|r| !r.user.is_empty())
        .collect();
    users.sort_by(|a, b| {
        let usage = if by_name {
            std::cmp::Ordering::Equal
        } else {
            b.cpu().cmp(&a.cpu())
        };
        usage
            .then_with(|| a.user.cmp(&b.user))
            .then_with(|| a.account.cmp(&b.account))
    });
    users.into_iter().map(|r| (r, r.account.clone())).collect()
}
