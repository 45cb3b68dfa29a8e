//! Fair Tree, Slurm 22.05's default fair-share algorithm: users are ranked down the
//! association tree so that when account A has a higher level fair share than its sibling B,
//! every user under A ranks above every user under B, whatever their own usage.
//!
//! - Level fair share of an association: `LevelFS = S / U`, `S` its part of its siblings'
//!   shares, `U` its part of its siblings' usage (`EffectvUsage`, its usage over its parent's).
//!   No usage makes it infinite; no shares make it 0.
//! - Ranking: from root, siblings are sorted by LevelFS, highest first, and visited in that
//!   order; a user takes the next rank (counting down from the number of user associations),
//!   an account is descended into. Users with equal LevelFS share a rank (the next distinct
//!   one skips as many as shared it); accounts with equal LevelFS have their children merged
//!   and sorted together. Among tied siblings the users are ranked before the accounts'
//!   children.
//! - Fair-share factor of a user association: its rank over the number of user associations.
//! - `Fairshare=parent`: an account so marked is not a level of its own (its children are
//!   ranked with its siblings); a user so marked competes with its siblings with its
//!   account's LevelFS.
//!
//! `NormShares` and `NormUsage` stay the classic numbers (shown by sshare, unused here).

use super::{AssocInput, ShareRow, Shares, children_of, subtree_usage};
use std::collections::HashMap;

type Key<'a> = (&'a str, &'a str);

/// Every association's numbers under Fair Tree, in the classic [`super::compute`]'s order.
pub fn compute(assocs: &[AssocInput]) -> Vec<ShareRow> {
    let children = children_of(assocs);
    let mut usage: HashMap<Key<'_>, f64> = HashMap::new();
    subtree_usage("root", &children, &mut usage);
    let mut cx = Ranking {
        children: &children,
        level: HashMap::new(),
        rank: HashMap::new(),
        next: 0,
    };
    cx.levels("root", &usage, None);
    let users = count_users("root", &children);
    cx.next = users;
    let top = cx.members("root");
    cx.rank_level(top);
    let mut rows = super::compute(assocs);
    for r in rows
        .iter_mut()
        .filter(|r| r.account != "root" || !r.user.is_empty())
    {
        let key = (r.account.as_str(), r.user.as_str());
        if let Some(l) = cx.level.get(&key) {
            r.effective_usage = l.usage_part;
            r.level_fs = Some(l.level_fs);
        }
        r.fairshare = match cx.rank.get(&key) {
            Some(&rank) if users > 0 => rank as f64 / users as f64,
            _ => 0.0,
        };
    }
    rows
}

/// An association's numbers among its siblings.
#[derive(Debug, Clone, Copy)]
struct Level {
    /// `U`: its usage over its siblings' (0 when they have none).
    usage_part: f64,
    /// `S / U`.
    level_fs: f64,
}

/// The level fair share of `S` and `U`: infinite without usage, 0 without shares.
pub fn level_fs(share_part: f64, usage_part: f64) -> f64 {
    if share_part <= 0.0 {
        0.0
    } else if usage_part <= 0.0 {
        f64::INFINITY
    } else {
        share_part / usage_part
    }
}

fn count_users(account: &str, children: &HashMap<&str, Vec<&AssocInput>>) -> usize {
    children
        .get(account)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|k| {
            if k.user.is_empty() {
                count_users(&k.account, children)
            } else {
                1
            }
        })
        .sum()
}

struct Ranking<'a, 'b> {
    children: &'b HashMap<&'a str, Vec<&'a AssocInput>>,
    level: HashMap<Key<'a>, Level>,
    /// Each ranked user's rank (the highest is the number of user associations).
    rank: HashMap<Key<'a>, usize>,
    /// The rank the next user gets.
    next: usize,
}

impl<'a> Ranking<'a, '_> {
    /// Fills `level` for the children of `account` and below; `own` is the account's level
    /// (what its `Fairshare=parent` children take).
    fn levels(&mut self, account: &'a str, usage: &HashMap<Key<'a>, f64>, own: Option<Level>) {
        let kids = self
            .children
            .get(account)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let shares: u64 = kids
            .iter()
            .map(|k| match k.shares {
                Shares::Count(n) => u64::from(n),
                Shares::Parent => 0,
            })
            .sum();
        let used = usage.get(&(account, "")).copied().unwrap_or(0.0);
        for k in kids {
            let key = (k.account.as_str(), k.user.as_str());
            let mine = usage.get(&key).copied().unwrap_or(0.0);
            let usage_part = if used > 0.0 { mine / used } else { 0.0 };
            let level = match (k.shares, own) {
                (Shares::Parent, Some(own)) => own,
                (Shares::Parent, None) => Level {
                    usage_part,
                    level_fs: level_fs(1.0, usage_part),
                },
                (Shares::Count(n), _) => {
                    let share_part = if shares == 0 {
                        0.0
                    } else {
                        f64::from(n) / shares as f64
                    };
                    Level {
                        usage_part,
                        level_fs: level_fs(share_part, usage_part),
                    }
                }
            };
            self.level.insert(key, level);
            if k.user.is_empty() {
                self.levels(&k.account, usage, Some(level));
            }
        }
    }

    /// The associations ranked at the level of `account`'s children: its children, with a
    /// `Fairshare=parent` sub-account replaced by its own members.
    fn members(&self, account: &str) -> Vec<&'a AssocInput> {
        let mut out = Vec::new();
        for k in self
            .children
            .get(account)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            if k.user.is_empty() && k.shares == Shares::Parent {
                out.extend(self.members(&k.account));
            } else {
                out.push(*k);
            }
        }
        out
    }

    fn lfs(&self, a: &AssocInput) -> f64 {
        self.level
            .get(&(a.account.as_str(), a.user.as_str()))
            .map_or(0.0, |l| l.level_fs)
    }

    /// Ranks the users under `members`, one level of the tree (or several tied accounts'
    /// merged children).
    fn rank_level(&mut self, mut members: Vec<&'a AssocInput>) {
        // Stable: equal LevelFS keep the tree's order (users first, by name).
        members.sort_by(|x, y| self.lfs(y).total_cmp(&self.lfs(x)));
        let mut i = 0;
        while i < members.len() {
            let lfs = self.lfs(members[i]);
            let end = members[i..]
                .iter()
                .position(|m| self.lfs(m) != lfs)
                .map_or(members.len(), |p| i + p);
            let tied = &members[i..end];
            let rank = self.next;
            for u in tied.iter().filter(|m| !m.user.is_empty()) {
                self.rank
                    .insert((u.account.as_str(), u.user.as_str()), rank);
                self.next = self.next.saturating_sub(1);
            }
            let merged: Vec<&'a AssocInput> = tied
                .iter()
                .filter(|m| m.user.is_empty())
                .flat_map(|a| self.members(&a.account))
                .collect();
            if !merged.is_empty() {
                self.rank_level(merged);
            }
            i = end;
        }
    }
}

#[cfg(test)]
mod tests;
