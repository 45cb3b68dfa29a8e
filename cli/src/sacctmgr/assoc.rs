//! `show association`: the (cluster, account, user) associations, in Slurm's hierarchical order
//! (per cluster: an account, its users, then its sub-accounts), optionally as a `tree`.

use std::collections::BTreeMap;

use sluice_wire::proto::{self, ListAssociationsRequest};

use super::Verb;
use super::args::{Parts, Word, split_list};
use super::error::SacctmgrError;
use super::fields::{Field, parse_format};
use super::session::{Done, Outcome, Session};
use crate::words::is_keyword;

/// Slurm's default `show association` format.
pub const DEFAULT_FORMAT: &str = "Cluster,Account,User,Part,Share,Priority,GrpJ,GrpTRES,GrpS,\
GrpWall,GrpTRESMins,MaxJ,MaxTRES,MaxTRESPerN,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins";

/// Runs an association command: Slurm only lists them (they are made by adding users and accounts).
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Add | Verb::Modify | Verb::Delete => Err(SacctmgrError::NoEntity {
            verb: match verb {
                Verb::Add => "add",
                Verb::Modify => "modify",
                _ => "delete",
            },
        }),
    }
}

/// Conditions of `show association`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AssocCond {
    pub clusters: Vec<String>,
    pub accounts: Vec<String>,
    pub users: Vec<String>,
    pub tree: bool,
    pub format: Vec<String>,
}

/// Parses condition words.
pub fn parse_cond(words: &[Word]) -> Result<AssocCond, SacctmgrError> {
    let mut c = AssocCond::default();
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "Tree", 4) => c.tree = true,
            Word::Pair { key, value, .. } if is_keyword(key, "Clusters", 1) => {
                c.clusters.extend(split_list(value))
            }
            Word::Pair { key, value, .. }
                if is_keyword(key, "Accounts", 2) || is_keyword(key, "Acct", 4) =>
            {
                c.accounts.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Users", 1) => {
                c.users.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 1) => {
                c.format.push(value.clone())
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    let format = if cond.format.is_empty() {
        DEFAULT_FORMAT.to_string()
    } else {
        cond.format.join(",")
    };
    let chosen = parse_format(&format)?;
    let assocs = s
        .list_associations(ListAssociationsRequest {
            clusters: cond.clusters,
            accounts: cond.accounts,
            users: cond.users,
            ..Default::default()
        })
        .await?;
    let rows: Vec<Vec<String>> = hierarchical(&assocs)
        .into_iter()
        .map(|(a, depth)| {
            chosen
                .iter()
                .map(|c| value(a, c.field, if cond.tree { depth } else { 0 }))
                .collect()
        })
        .collect();
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// Orders associations as Slurm lists them: per cluster, depth first from the accounts whose
/// parent is not listed, each account followed by its users, then its sub-accounts. Returns each
/// with its depth (for `tree`). Associations whose account row is not listed (a user filter)
/// keep the same cluster/account/user order.
pub fn hierarchical(assocs: &[proto::Association]) -> Vec<(&proto::Association, usize)> {
    let mut by_cluster: BTreeMap<&str, Vec<&proto::Association>> = BTreeMap::new();
    for a in assocs {
        by_cluster.entry(a.cluster.as_str()).or_default().push(a);
    }
    let mut out = Vec::with_capacity(assocs.len());
    for rows in by_cluster.values() {
        let accounts: BTreeMap<&str, &proto::Association> = rows
            .iter()
            .filter(|a| a.user.is_empty())
            .map(|a| (a.account.as_str(), *a))
            .collect();
        let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut users: BTreeMap<&str, Vec<&proto::Association>> = BTreeMap::new();
        for a in rows {
            if a.user.is_empty() {
                children
                    .entry(a.parent_account.as_str())
                    .or_default()
                    .push(&a.account);
            } else {
                users.entry(a.account.as_str()).or_default().push(a);
            }
        }
        let tops: Vec<&str> = accounts
            .values()
            .filter(|a| !accounts.contains_key(a.parent_account.as_str()))
            .map(|a| a.account.as_str())
            .collect();
        let mut stack: Vec<(&str, usize)> = tops.into_iter().rev().map(|a| (a, 0)).collect();
        while let Some((account, depth)) = stack.pop() {
            if let Some(a) = accounts.get(account) {
                out.push((*a, depth));
            }
            for u in users.remove(account).unwrap_or_default() {
                out.push((u, depth + 1));
            }
            if let Some(kids) = children.get(account) {
                stack.extend(kids.iter().rev().map(|k| (*k, depth + 1)));
            }
        }
        // User associations of accounts not listed (filtered out), in name order.
        for (_, rest) in users {
            out.extend(rest.into_iter().map(|u| (u, 0)));
        }
    }
    out
}

/// The rows of `list user|account withassoc`: as Slurm, one row per association of each owner
/// (`charged` says whether an association is the owner's; in the association listing's order)
/// with the owner's `own` fields repeated (`whole` gives an owner's value for a field); an owner
/// without associations gets one row of its own values, the association fields blank.
pub fn rows_with_assocs<T>(
    owners: &[T],
    assocs: &[proto::Association],
    fields: &[Field],
    own: &[Field],
    charged: impl Fn(&T, &proto::Association) -> bool,
    whole: impl Fn(&T, Field) -> String,
) -> Vec<Vec<String>> {
    let ordered = hierarchical(assocs);
    let mut rows = Vec::new();
    for owner in owners {
        let mut any = false;
        for (a, _) in ordered.iter().filter(|(a, _)| charged(owner, a)) {
            any = true;
            rows.push(
                fields
                    .iter()
                    .map(|&f| match own.contains(&f) {
                        true => whole(owner, f),
                        false => value(a, f, 0),
                    })
                    .collect(),
            );
        }
        if !any {
            rows.push(fields.iter().map(|&f| whole(owner, f)).collect());
        }
    }
    rows
}

/// An association's value for a field: its limits in force (see [`super::limits`]); limits
/// Sluice does not hold print blank; the share is its `Fairshare=` (Slurm's default 1 unless
/// set, `parent`).
pub fn value(a: &proto::Association, field: Field, depth: usize) -> String {
    match field {
        Field::Cluster => a.cluster.clone(),
        Field::Account => format!("{}{}", " ".repeat(depth), a.account),
        Field::User => a.user.clone(),
        Field::ParentName => a.parent_account.clone(),
        Field::Id => a.id.to_string(),
        Field::Share => sluice_vocab::fairshare::Shares::from_raw(a.shares).to_string(),
        Field::Qos => a.qos.join(","),
        Field::DefaultQos => a.default_qos.clone(),
        f => a
            .limits
            .as_ref()
            .and_then(|l| super::limits::value(l, f))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assoc(cluster: &str, account: &str, user: &str, parent: &str) -> proto::Association {
        proto::Association {
            id: 0,
            cluster: cluster.into(),
            account: account.into(),
            user: user.into(),
            parent_account: parent.into(),
            limits: None,
            shares: 1,
            ..Default::default()
        }
    }

    #[test]
    fn accounts_then_their_users_then_sub_accounts() {
        let rows = vec![
            assoc("c", "physics", "", "root"),
            assoc("c", "physics", "alice", ""),
            assoc("c", "root", "", ""),
            assoc("c", "root", "root", ""),
            assoc("c", "theory", "", "physics"),
            assoc("c", "theory", "bob", ""),
            assoc("b", "root", "", ""),
        ];
        let order: Vec<(String, usize)> = hierarchical(&rows)
            .into_iter()
            .map(|(a, d)| (format!("{}/{}/{}", a.cluster, a.account, a.user), d))
            .collect();
        let expect = [
            ("b/root/", 0),
            ("c/root/", 0),
            ("c/root/root", 1),
            ("c/physics/", 1),
            ("c/physics/alice", 2),
            ("c/theory/", 2),
            ("c/theory/bob", 3),
        ];
        let expect: Vec<(String, usize)> =
            expect.iter().map(|(s, d)| (s.to_string(), *d)).collect();
        assert_eq!(order, expect);
        assert_eq!(value(&rows[4], Field::Account, 2), "  theory");
        assert_eq!(value(&rows[1], Field::Share, 0), "1");
    }

    #[test]
    fn filtered_users_without_their_account_row_still_print() {
        let rows = vec![assoc("c", "physics", "alice", "")];
        assert_eq!(hierarchical(&rows).len(), 1);
        assert!(parse_cond(&Parts::all(&["bogus".to_string()])).is_err());
    }
}
