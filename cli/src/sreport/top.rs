//! `user TopUsage`: the users with the most CPU time per cluster (Slurm's `user_top`).
//!
//! One line per user and account (with `Group`, per user, its accounts joined by `, `),
//! largest CPU time first, at most `TopCount` per cluster; one line per TRES of each.

use std::collections::BTreeMap;

use super::data::{AssocTres, ClusterTres};
use super::fields::{Chosen, Field};
use super::render::{ProperNames, Style, columns};
use super::window::Window;

/// The fields printed without `format=`.
pub fn default_format(style: &Style) -> &'static str {
    if style.tres.is_given() {
        "Cl,L,P,A,TresName,Used"
    } else {
        "Cl,L,P,A,U,Energy"
    }
}

/// How many users a cluster shows, and whether a user's accounts share one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `TopCount=` (default 10; 0 still shows one user, as Slurm does).
    pub top: u32,
    /// `Group`.
    pub group: bool,
}

/// A user's usage (in one account, or all of them with `Group`).
#[derive(Debug, Clone, Default)]
struct UserRec {
    cluster: String,
    user: String,
    accounts: Vec<String>,
    secs: BTreeMap<String, u64>,
}

impl UserRec {
    fn cpu(&self) -> u64 {
        self.secs.get("cpu").copied().unwrap_or(0)
    }
}

/// Renders the report from user-association rows (account lines are ignored) and the
/// clusters' totals.
pub fn render(
    style: &Style,
    win: &Window,
    fields: &[Chosen],
    rows: &[AssocTres],
    clusters: &[ClusterTres],
    shape: Shape,
    names: ProperNames<'_>,
) -> String {
    let Shape { top, group } = shape;
    let mut out = String::new();
    let title = style.window_title(&format!("Top {top} Users"), win, true);
    style.banner(&mut out, &title, &[style.usage_line()]);

    let mut recs: Vec<UserRec> = Vec::new();
    let mut index: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.user.is_empty()) {
        let account = if group { "" } else { r.account.as_str() };
        let key = (r.cluster.as_str(), r.user.as_str(), account);
        let i = *index.entry(key).or_insert_with(|| {
            recs.push(UserRec {
                cluster: r.cluster.clone(),
                user: r.user.clone(),
                accounts: Vec::new(),
                secs: BTreeMap::new(),
            });
            recs.len() - 1
        });
        let rec = &mut recs[i];
        if !rec.accounts.contains(&r.account) {
            rec.accounts.push(r.account.clone());
        }
        *rec.secs.entry(r.tres.clone()).or_insert(0) += r.alloc;
    }
    for r in &mut recs {
        r.accounts.sort();
    }
    let by_name = style.sort_by_name;
    recs.sort_by(|a, b| {
        let usage = if by_name {
            std::cmp::Ordering::Equal
        } else {
            b.cpu().cmp(&a.cpu())
        };
        a.cluster
            .cmp(&b.cluster)
            .then(usage)
            .then_with(|| a.user.cmp(&b.user))
            .then_with(|| a.accounts.cmp(&b.accounts))
    });
    let mut shown: Vec<&UserRec> = Vec::new();
    let mut per_cluster: BTreeMap<&str, u32> = BTreeMap::new();
    for r in &recs {
        let n = per_cluster.entry(r.cluster.as_str()).or_insert(0);
        if *n < top.max(1) {
            *n += 1;
            shown.push(r);
        }
    }

    // Slurm sizes the Used column from each cluster's top user.
    let energy = fields.iter().any(|f| f.field == Field::Energy);
    let widest = per_cluster
        .keys()
        .filter_map(|c| recs.iter().find(|r| r.cluster == *c))
        .map(|first| {
            if energy {
                first.cpu()
            } else {
                style
                    .tres
                    .names()
                    .iter()
                    .map(|t| first.secs.get(t).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            }
        })
        .max()
        .unwrap_or(0);
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
    for rec in shown {
        for tres in style.tres.names() {
            let total = totals
                .get(&(rec.cluster.as_str(), tres.as_str()))
                .copied()
                .unwrap_or(0);
            let used = rec.secs.get(tres).copied().unwrap_or(0);
            let row = fields.iter().map(|f| match f.field {
                Field::Cluster => rec.cluster.clone(),
                Field::Login => rec.user.clone(),
                Field::Proper => names(&rec.user).unwrap_or_default(),
                Field::Account => rec.accounts.join(", "),
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
