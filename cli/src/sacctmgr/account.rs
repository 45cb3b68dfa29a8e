//! `add|modify|delete|show account`.

use sluice_wire::proto::{self, AddAccountsRequest, DeleteAccountsRequest, ModifyAccountsRequest};

use super::Verb;
use super::args::{Parts, Word, split_list};
use super::error::SacctmgrError;
use super::federation::indented;
use super::fields::{Field, parse_format};
use super::session::{Change, Done, Outcome, Session};
use super::verify;
use crate::words::is_keyword;

/// Slurm's default `show account` format.
pub const DEFAULT_FORMAT: &str = "Acc,Des,O";

/// Runs an account command.
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::Add => add(s, &Parts::all(words)).await,
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Modify => modify(s, Parts::split(words)).await,
        Verb::Delete => delete(s, &Parts::all(words)).await,
    }
}

/// Conditions of an account command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AcctCond {
    pub names: Vec<String>,
    pub descriptions: Vec<String>,
    pub organizations: Vec<String>,
    pub with_deleted: bool,
    /// `WithCoord`: each account's coordinators.
    pub with_coord: bool,
    /// `WithAssoc`: one row per association of each account (its own and its users').
    pub with_assoc: bool,
    pub format: Vec<String>,
}

impl AcctCond {
    fn any(&self) -> bool {
        !(self.names.is_empty() && self.descriptions.is_empty() && self.organizations.is_empty())
    }
}

/// What an account add or modify sets.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AcctSet {
    pub names: Vec<String>,
    pub clusters: Vec<String>,
    pub description: Option<String>,
    pub organization: Option<String>,
    pub parent: Option<String>,
    /// `Fairshare=N|parent` of the accounts' associations.
    pub fairshare: Option<String>,
}

fn is_name_key(key: &str) -> bool {
    is_keyword(key, "Names", 1) || is_keyword(key, "Accounts", 1) || is_keyword(key, "Acct", 4)
}

/// Parses condition words.
pub fn parse_cond(words: &[Word]) -> Result<AcctCond, SacctmgrError> {
    let mut c = AcctCond::default();
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "WithDeleted", 5) => c.with_deleted = true,
            Word::Bare(b) if is_keyword(b, "WithCoordinators", 5) => c.with_coord = true,
            Word::Bare(b) if is_keyword(b, "WithAssoc", 5) => c.with_assoc = true,
            Word::Bare(b) => c.names.extend(split_list(b)),
            Word::Pair { key, value, .. } if is_name_key(key) => c.names.extend(split_list(value)),
            Word::Pair { key, value, .. } if is_keyword(key, "Descriptions", 1) => {
                c.descriptions.push(value.clone())
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Organizations", 1) => {
                c.organizations.push(value.clone())
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 1) => {
                c.format.push(value.clone())
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

/// Parses setting words.
pub fn parse_set(words: &[Word]) -> Result<AcctSet, SacctmgrError> {
    let mut set = AcctSet::default();
    for w in words {
        match w {
            Word::Bare(b) => set.names.extend(split_list(b)),
            Word::Pair { key, value, .. } if is_name_key(key) => {
                set.names.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Clusters", 1) => {
                set.clusters.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Description", 1) => {
                set.description = Some(value.clone())
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Organization", 1) => {
                set.organization = Some(value.clone());
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Parent", 1) => {
                set.parent = Some(value.clone())
            }
            Word::Pair { key, value, .. } if super::shares::is_fairshare_key(key) => {
                set.fairshare = Some(super::shares::checked(value)?)
            }
            other => return Err(SacctmgrError::UnknownOption(other.raw())),
        }
    }
    Ok(set)
}

/// Slurm's association line for an account add.
pub fn assoc_line(account: &str, cluster: &str) -> String {
    format!("  A = {:<10.10} C = {:<10.10}\n", account, cluster)
}

async fn add(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let (words, limits) = super::limits::take(words)?;
    let set = parse_set(&words)?;
    if set.names.is_empty() {
        return Err(SacctmgrError::NeedName("account"));
    }
    if set.names.iter().any(|n| n.trim().is_empty()) {
        return Err(SacctmgrError::BlankName);
    }
    let existing = s
        .list_accounts(proto::ListAccountsRequest {
            names: set.names.clone(),
            ..Default::default()
        })
        .await?;
    let clusters = verify::target_clusters(s, &set.clusters, "accounts").await?;
    let parent = set.parent.clone().unwrap_or_else(|| "root".to_string());
    let mut wanted = set.names.clone();
    wanted.push(parent.clone());
    let assocs = s
        .list_associations(proto::ListAssociationsRequest {
            clusters: clusters.clone(),
            accounts: wanted,
            users: vec![],
            ..Default::default()
        })
        .await?;
    let has_base = |acct: &str, cluster: &str| {
        assocs.iter().any(|a| {
            a.user.is_empty()
                && a.account.eq_ignore_ascii_case(acct)
                && a.cluster.eq_ignore_ascii_case(cluster)
        })
    };
    let mut acct_lines = String::new();
    let mut assoc_lines = String::new();
    for name in &set.names {
        if !existing.iter().any(|a| a.name.eq_ignore_ascii_case(name)) {
            acct_lines.push_str(&format!("  {name}\n"));
        }
        for cluster in &clusters {
            if has_base(name, cluster) {
                continue;
            }
            // root is on every cluster by construction; other parents must be there already.
            if parent != "root" && !has_base(&parent, cluster) {
                return Err(SacctmgrError::ParentMissing {
                    parent: parent.clone(),
                    cluster: cluster.clone(),
                });
            }
            assoc_lines.push_str(&assoc_line(name, cluster));
        }
    }
    if acct_lines.is_empty() && assoc_lines.is_empty() {
        s.out(" Nothing new added.\n");
        return Ok(Done::Failed);
    }
    if !acct_lines.is_empty() {
        let descr = set.description.as_deref().unwrap_or("Account Name");
        let org = set.organization.as_deref().unwrap_or("Parent/Account Name");
        s.out(&format!(
            " Adding Account(s)\n{acct_lines} Settings\n  Description     = {descr}\n  Organization    = {org}\n"
        ));
    }
    if !assoc_lines.is_empty() {
        s.out(&format!(" Associations\n{assoc_lines}"));
    }
    s.out(&format!(" Settings\n  Parent        = {parent}\n"));
    if let Some(f) = &set.fairshare {
        s.out(&format!("  Fairshare     = {f}\n"));
    }
    if let Some(edit) = &limits {
        s.out(&super::limits::settings_lines(edit));
    }
    let mut change = Change::AddAccounts(AddAccountsRequest {
        names: set.names,
        description: set.description,
        organization: set.organization,
        parent: Some(parent),
        clusters,
        commit: false,
        fairshare: set.fairshare,
        limits,
    });
    s.preview(&mut change, "Problem adding accounts").await?;
    s.confirm(&mut change, "Problem adding accounts").await
}

async fn modify(s: &mut Session<'_>, parts: Parts) -> Outcome {
    let cond = parse_cond(&parts.cond)?;
    let (set_words, qos) = super::assoc_qos::take(&parts.set)?;
    let (set_words, limits) = super::limits::take(&set_words)?;
    let set = parse_set(&set_words)?;
    if qos.is_some() {
        let other = set.description.is_some() || set.organization.is_some();
        if other || set.parent.is_some() {
            return Err(SacctmgrError::MixedQos("account"));
        }
    }
    // QOS with limits or Fairshare= go as one association change (below).
    if let Some(q) = qos
        .clone()
        .filter(|_| limits.is_none() && set.fairshare.is_none())
    {
        if !set.names.is_empty() {
            return Err(SacctmgrError::UnknownOption(set.names.join(",")));
        }
        if cond.names.is_empty() {
            return Err(SacctmgrError::NoConditions);
        }
        let req = q.request(false, Vec::new(), cond.names, set.clusters);
        return super::assoc_qos::modify(s, req, "Modified account associations...").await;
    }
    if limits.is_some() || qos.is_some() {
        let edit = limits.unwrap_or_default();
        let other = set.description.is_some() || set.organization.is_some();
        if other || set.parent.is_some() || !set.names.is_empty() {
            return Err(SacctmgrError::MixedLimits("account"));
        }
        if cond.names.is_empty() {
            return Err(SacctmgrError::NoConditions);
        }
        let req = proto::ModifyAssocLimitsRequest {
            qos: qos.map(|q| q.request(false, Vec::new(), Vec::new(), Vec::new())),
            user_associations: false,
            users: Vec::new(),
            accounts: cond.names,
            clusters: set.clusters,
            set: Some(edit),
            commit: false,
            fairshare: set.fairshare,
        };
        return super::limits::modify(s, req, "Modified account associations...").await;
    }
    let account_level = set.description.is_some() || set.organization.is_some();
    if !account_level && set.parent.is_none() && set.fairshare.is_none() {
        return Err(SacctmgrError::NothingToSet);
    }
    if !cond.any()
        && !s.commit_check(
            "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
        )
    {
        s.out("Aborted\n");
        return Ok(Done::Ok);
    }
    if let Some(parent) = &set.parent {
        let found = s
            .list_accounts(proto::ListAccountsRequest {
                names: vec![parent.clone()],
                ..Default::default()
            })
            .await?;
        if found.is_empty() {
            return Err(SacctmgrError::ParentAccountMissing(parent.clone()));
        }
    }
    let mut change = Change::ModifyAccounts(ModifyAccountsRequest {
        names: cond.names,
        where_description: cond.descriptions.into_iter().next(),
        where_organization: cond.organizations.into_iter().next(),
        description: set.description,
        organization: set.organization,
        parent: set.parent,
        commit: false,
        fairshare: set.fairshare,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing modified\n");
        return Ok(Done::Failed);
    }
    let heading = if account_level {
        " Modified accounts...\n"
    } else {
        " Modified account associations...\n"
    };
    s.out(&format!("{heading}{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn delete(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    if !cond.any() {
        return Err(SacctmgrError::NoConditions);
    }
    if cond.names.iter().any(|n| n.eq_ignore_ascii_case("root")) {
        return Err(SacctmgrError::RootAccount);
    }
    let names = if cond.names.is_empty() {
        let found = s
            .list_accounts(proto::ListAccountsRequest {
                descriptions: cond.descriptions,
                organizations: cond.organizations,
                ..Default::default()
            })
            .await?;
        found
            .into_iter()
            .map(|a| a.name)
            .filter(|n| n != "root")
            .collect()
    } else {
        cond.names
    };
    if names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    let mut change = Change::DeleteAccounts(DeleteAccountsRequest {
        names,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(
        " Deleting accounts...\n{}",
        indented(&reply.names)
    ));
    s.confirm(&mut change, "Error with request").await
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    let with_assoc = cond.with_assoc || s.opts.associations;
    let format = if cond.format.is_empty() {
        let mut f = vec![DEFAULT_FORMAT];
        if cond.with_coord {
            f.push("Coordinators");
        }
        if with_assoc {
            f.push(ASSOC_FORMAT);
        }
        f.join(",")
    } else {
        cond.format.join(",")
    };
    let chosen = parse_format(&format)?;
    let accounts = s
        .list_accounts(proto::ListAccountsRequest {
            names: cond.names,
            descriptions: cond.descriptions,
            organizations: cond.organizations,
            with_deleted: cond.with_deleted,
        })
        .await?;
    let rows: Vec<Vec<String>> = if with_assoc {
        let assocs = s
            .list_associations(proto::ListAssociationsRequest {
                accounts: accounts.iter().map(|a| a.name.clone()).collect(),
                ..Default::default()
            })
            .await?;
        let fields: Vec<Field> = chosen.iter().map(|c| c.field).collect();
        rows_with_assocs(&accounts, &assocs, &fields)
    } else {
        accounts
            .iter()
            .map(|a| chosen.iter().map(|c| value(a, c.field)).collect())
            .collect()
    };
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// The association columns `withassoc` (or `-s`) adds to the default account format.
pub const ASSOC_FORMAT: &str =
    "Cl,ParentN,User,Share,Priority,MaxJ,MaxN,MaxTRES,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS";

/// `list account withassoc`: one row per association charged to each account (its own, then
/// its users', in the association listing's order) with the account's fields repeated; an
/// account without associations gets one row with the association fields blank.
pub fn rows_with_assocs(
    accounts: &[proto::Account],
    assocs: &[proto::Association],
    fields: &[Field],
) -> Vec<Vec<String>> {
    const OWN: [Field; 5] = [
        Field::Account,
        Field::Name,
        Field::Description,
        Field::Organization,
        Field::Coordinators,
    ];
    super::assoc::rows_with_assocs(
        accounts,
        assocs,
        fields,
        &OWN,
        |acct, a| a.account == acct.name,
        value,
    )
}

/// An account's value for a field (blank for what accounts do not hold).
pub fn value(a: &proto::Account, field: Field) -> String {
    match field {
        Field::Account | Field::Name => a.name.clone(),
        Field::Description => a.description.clone(),
        Field::Organization => a.organization.clone(),
        Field::ParentName => a.parent.clone(),
        Field::Coordinators => a.coordinators.join(","),
        _ => String::new(),
    }
}
