//! The fair-share arithmetic over an association tree, shared by the controller (the job
//! priority's fair-share factor) and `sshare` (which shows the same numbers). Two algorithms,
//! as in Slurm 22.05 ([`Algorithm`]): Fair Tree, the default ([`fair_tree`]), and the
//! classic one (`PriorityFlags=NO_FAIR_TREE`, [`compute`]).
//!
//! The classic algorithm: normalized shares, normalized and effective usage, and the
//! fair-share factor `F = 2^(-EffectvUsage / NormShares)`.
//!
//! Normalized shares multiply down the tree: an association's shares over the shares of its
//! siblings (users and sub-accounts under the same account), times its parent's normalized
//! shares. Effective usage mixes an association's own normalized usage with its parent's
//! effective usage, in proportion to its part of its siblings' shares, so an account that
//! used much drags its users down with it. An association whose shares are `parent` is not
//! counted among its siblings and takes its parent account's numbers.

use std::collections::HashMap;

pub mod fair_tree;

/// Which fair-share algorithm a cluster uses (`PriorityFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Fair Tree, Slurm's default: users ranked down the tree by level fair share.
    #[default]
    FairTree,
    /// The classic algorithm (`PriorityFlags=NO_FAIR_TREE`).
    Classic,
}

/// Every association's numbers under `algorithm` (see [`compute`] for the rows' order).
pub fn compute_with(algorithm: Algorithm, assocs: &[AssocInput]) -> Vec<ShareRow> {
    match algorithm {
        Algorithm::FairTree => fair_tree::compute(assocs),
        Algorithm::Classic => compute(assocs),
    }
}

/// The fair-share factor of each user association, by (account, user).
pub fn user_factors(rows: Vec<ShareRow>) -> HashMap<(String, String), f64> {
    rows.into_iter()
        .filter(|r| !r.user.is_empty())
        .map(|r| ((r.account, r.user), r.fairshare))
        .collect()
}

/// An association's `Fairshare=`: a number of shares, or `parent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    /// `Fairshare=N` (Slurm's default is 1).
    Count(u32),
    /// `Fairshare=parent`: it competes as its parent account.
    Parent,
}

impl Shares {
    /// The stored form: the count, or -1 for `parent`.
    pub fn to_raw(self) -> i64 {
        match self {
            Shares::Count(n) => i64::from(n),
            Shares::Parent => -1,
        }
    }

    /// From the stored form (negative: `parent`).
    pub fn from_raw(raw: i64) -> Self {
        u32::try_from(raw).map_or(Shares::Parent, Shares::Count)
    }

    /// `sacctmgr ... set fairshare=` as written: a number or `parent`.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("parent") {
            return Some(Shares::Parent);
        }
        t.parse().ok().map(Shares::Count)
    }
}

impl std::fmt::Display for Shares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shares::Count(n) => write!(f, "{n}"),
            Shares::Parent => f.write_str("parent"),
        }
    }
}

/// One association as the accounting daemon lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocInput {
    /// The account.
    pub account: String,
    /// The user (`""` for the account's own association).
    pub user: String,
    /// For an account association, its parent account (`""` for root).
    pub parent: String,
    /// Its shares.
    pub shares: Shares,
    /// Its own decayed usage in CPU-seconds (jobs charged to it).
    pub raw_usage: f64,
}

/// One association with its fair-share numbers, in tree order.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    /// The account.
    pub account: String,
    /// The user (`""` for an account line).
    pub user: String,
    /// Depth below root (root is 0), for sshare's indentation.
    pub depth: usize,
    /// Its shares (`None` for root, which has none).
    pub shares: Option<Shares>,
    /// Normalized shares (0..1).
    pub norm_shares: f64,
    /// Decayed usage in CPU-seconds, its subtree's for an account.
    pub raw_usage: f64,
    /// Its part of the whole cluster's usage (0..1).
    pub norm_usage: f64,
    /// Effective usage (0..1).
    pub effective_usage: f64,
    /// The fair-share factor (0..1]; under Fair Tree a user's rank over the number of user
    /// associations (accounts have none: 0).
    pub fairshare: f64,
    /// Fair Tree's level fair share (its part of its siblings' shares over its part of their
    /// usage; infinite without usage). `None` for root and under the classic algorithm.
    pub level_fs: Option<f64>,
}

/// Computes every association's numbers. Rows come depth first from `root`: an account's
/// users, then its sub-accounts, each sorted by name. Associations not reachable from root
/// (an account whose parent is missing) are left out.
pub fn compute(assocs: &[AssocInput]) -> Vec<ShareRow> {
    let children = children_of(assocs);
    let mut usage: HashMap<(&str, &str), f64> = HashMap::new();
    subtree_usage("root", &children, &mut usage);
    let total = usage.get(&("root", "")).copied().unwrap_or(0.0);
    let mut rows = Vec::new();
    let root_usage = if total > 0.0 { 1.0 } else { 0.0 };
    rows.push(ShareRow {
        account: "root".into(),
        user: String::new(),
        depth: 0,
        shares: None,
        norm_shares: 1.0,
        raw_usage: total,
        norm_usage: root_usage,
        effective_usage: root_usage,
        fairshare: 1.0,
        level_fs: None,
    });
    let cx = Walk {
        children: &children,
        usage: &usage,
        total,
    };
    cx.descend("root", 1, 1.0, root_usage, 1.0, &mut rows);
    rows
}

/// Each account's children (users first, then sub-accounts, each by name).
fn children_of(assocs: &[AssocInput]) -> HashMap<&str, Vec<&AssocInput>> {
    let mut children: HashMap<&str, Vec<&AssocInput>> = HashMap::new();
    for a in assocs {
        if a.user.is_empty() {
            if a.account != "root" {
                children.entry(a.parent.as_str()).or_default().push(a);
            }
        } else {
            children.entry(a.account.as_str()).or_default().push(a);
        }
    }
    for list in children.values_mut() {
        // Users first, then sub-accounts, each by name.
        list.sort_by(|x, y| {
            (x.user.is_empty(), &x.account, &x.user).cmp(&(y.user.is_empty(), &y.account, &y.user))
        });
    }
    children
}

/// Fills `usage` with each association's usage, an account's being its subtree's.
fn subtree_usage<'a>(
    account: &'a str,
    children: &HashMap<&'a str, Vec<&'a AssocInput>>,
    usage: &mut HashMap<(&'a str, &'a str), f64>,
) -> f64 {
    let mut sum = 0.0;
    for c in children.get(account).map(Vec::as_slice).unwrap_or_default() {
        let u = if c.user.is_empty() {
            subtree_usage(&c.account, children, usage)
        } else {
            c.raw_usage
        };
        usage.insert((c.account.as_str(), c.user.as_str()), u);
        sum += u;
    }
    usage.insert((account, ""), sum);
    sum
}

struct Walk<'a, 'b> {
    children: &'b HashMap<&'a str, Vec<&'a AssocInput>>,
    usage: &'b HashMap<(&'a str, &'a str), f64>,
    total: f64,
}

impl Walk<'_, '_> {
    fn descend(
        &self,
        account: &str,
        depth: usize,
        parent_norm: f64,
        parent_eff: f64,
        parent_fs: f64,
        rows: &mut Vec<ShareRow>,
    ) {
        let kids = self
            .children
            .get(account)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let sibling_shares: u64 = kids
            .iter()
            .map(|k| match k.shares {
                Shares::Count(n) => u64::from(n),
                Shares::Parent => 0,
            })
            .sum();
        for k in kids {
            let raw = self
                .usage
                .get(&(k.account.as_str(), k.user.as_str()))
                .copied()
                .unwrap_or(0.0);
            let norm_usage = if self.total > 0.0 {
                raw / self.total
            } else {
                0.0
            };
            let (norm_shares, effective, fairshare) = match k.shares {
                Shares::Parent => (parent_norm, parent_eff, parent_fs),
                Shares::Count(n) => {
                    let part = if sibling_shares == 0 {
                        0.0
                    } else {
                        f64::from(n) / sibling_shares as f64
                    };
                    let norm = part * parent_norm;
                    let eff = norm_usage + (parent_eff - norm_usage) * part;
                    (norm, eff, factor(eff, norm))
                }
            };
            rows.push(ShareRow {
                account: k.account.clone(),
                user: k.user.clone(),
                depth,
                shares: Some(k.shares),
                norm_shares,
                raw_usage: raw,
                norm_usage,
                effective_usage: effective,
                fairshare,
                level_fs: None,
            });
            if k.user.is_empty() {
                self.descend(
                    &k.account,
                    depth + 1,
                    norm_shares,
                    effective,
                    fairshare,
                    rows,
                );
            }
        }
    }
}

/// `2^(-effective/norm_shares)`; 0 for an association without shares.
pub fn factor(effective: f64, norm_shares: f64) -> f64 {
    if norm_shares <= 0.0 {
        0.0
    } else {
        (-effective / norm_shares).exp2()
    }
}

/// The usage a job of `cpus` CPUs running from `start` to `end` (seconds) leaves at `now`
/// when usage halves every `half_life` seconds (0: no decay): the integral of
/// `cpus * 2^(-(now - t)/half_life)` over the run. Only the part after `since` counts
/// (`PriorityUsageResetPeriod`).
pub fn decayed_usage(cpus: f64, start: i64, end: i64, now: i64, half_life: i64, since: i64) -> f64 {
    let start = start.max(since);
    let end = end.min(now);
    if end <= start {
        return 0.0;
    }
    if half_life <= 0 {
        return cpus * (end - start) as f64;
    }
    let h = half_life as f64;
    let weight = |t: i64| (-((now - t) as f64) / h).exp2();
    cpus * h / std::f64::consts::LN_2 * (weight(end) - weight(start))
}

#[cfg(test)]
mod tests;
