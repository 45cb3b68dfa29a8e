//! `add|modify|delete|show user`.

use sluice_wire::proto::{self, AddUsersRequest, DeleteUsersRequest, ModifyUsersRequest};

use super::Verb;
use super::args::{Parts, Word, split_list};
use super::error::SacctmgrError;
use super::federation::indented;
use super::fields::{Field, parse_format};
use super::session::{Change, Done, Outcome, Session};
use super::verify;
use crate::words::is_keyword;

/// Slurm's default `show user` format.
pub const DEFAULT_FORMAT: &str = "U,DefaultA,Ad";
/// The association columns `withassoc` (or `-s`) adds to the default format: Slurm's list, with
/// `MaxTRES`/`MaxTRESMins` for its legacy `MaxCPUs`/`MaxCPUMins` (blank either way here).
pub const ASSOC_FORMAT: &str =
    "Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxTRES,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS";

/// Runs a user command.
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::Add => add(s, &Parts::all(words)).await,
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Modify => modify(s, Parts::split(words)).await,
        Verb::Delete => delete(s, &Parts::all(words)).await,
    }
}

/// Parses an admin level: a case-insensitive prefix of None, Operator, Administrator or
/// SuperUser (Slurm's other name for Administrator).
pub fn parse_admin_level(s: &str) -> Result<&'static str, SacctmgrError> {
    [
        ("None", "None"),
        ("Operator", "Operator"),
        ("Administrator", "Administrator"),
        ("SuperUser", "Administrator"),
    ]
    .into_iter()
    .find(|(word, _)| is_keyword(s, word, 1))
    .map(|(_, level)| level)
    .ok_or_else(|| SacctmgrError::InvalidAdminLevel(s.to_string()))
}

/// Users' conditions and settings (the same keywords serve both).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct UserArgs {
    pub names: Vec<String>,
    pub accounts: Vec<String>,
    pub clusters: Vec<String>,
    pub default_accounts: Vec<String>,
    pub admin_levels: Vec<String>,
    pub with_deleted: bool,
    /// `WithAssoc`: one row per association of each user.
    pub with_assoc: bool,
    /// `WithCoord`: the accounts each user coordinates.
    pub with_coord: bool,
    /// `Fairshare=N|parent` of the users' associations.
    pub fairshare: Option<String>,
    pub format: Vec<String>,
}

impl UserArgs {
    fn any_cond(&self) -> bool {
        !(self.names.is_empty()
            && self.accounts.is_empty()
            && self.default_accounts.is_empty()
            && self.admin_levels.is_empty())
    }
}

/// Parses user words; `unknown` makes the error for a word that is none of them.
pub fn parse(
    words: &[Word],
    unknown: fn(String) -> SacctmgrError,
) -> Result<UserArgs, SacctmgrError> {
    let mut u = UserArgs::default();
    let lower = |v: &str| {
        split_list(v)
            .into_iter()
            .map(|n| n.to_lowercase())
            .collect::<Vec<_>>()
    };
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "WithDeleted", 5) => u.with_deleted = true,
            Word::Bare(b) if is_keyword(b, "WithAssoc", 5) => u.with_assoc = true,
            Word::Bare(b) if is_keyword(b, "WithCoordinators", 5) => u.with_coord = true,
            Word::Bare(b) => u.names.extend(lower(b)),
            Word::Pair { key, value, .. }
                if is_keyword(key, "Names", 1) || is_keyword(key, "Users", 1) =>
            {
                u.names.extend(lower(value));
            }
            Word::Pair { key, value, .. }
                if is_keyword(key, "Accounts", 2) || is_keyword(key, "Acct", 4) =>
            {
                u.accounts.extend(split_list(value));
            }
            Word::Pair { key, value, .. } if is_keyword(key, "AdminLevel", 2) => {
                u.admin_levels.push(parse_admin_level(value)?.to_string());
            }
            Word::Pair { key, value, .. } if is_keyword(key, "DefaultAccount", 8) => {
                u.default_accounts.extend(split_list(value));
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Clusters", 1) => {
                u.clusters.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 1) => {
                u.format.push(value.clone())
            }
            Word::Pair { key, value, .. } if super::shares::is_fairshare_key(key) => {
                u.fairshare = Some(super::shares::checked(value)?)
            }
            other => return Err(unknown(other.raw())),
        }
    }
    Ok(u)
}

/// Slurm's association line for a user add.
pub fn assoc_line(user: &str, account: &str, cluster: &str) -> String {
    format!(
        "  U = {:<9.9} A = {:<10.10} C = {:<10.10}\n",
        user, account, cluster
    )
}

async fn add(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let (words, limits) = super::limits::take(words)?;
    let mut u = parse(&words, SacctmgrError::UnknownOption)?;
    if u.names.is_empty() {
        return Err(SacctmgrError::NeedName("user"));
    }
    if u.names.iter().any(|n| n.trim().is_empty()) {
        return Err(SacctmgrError::BlankName);
    }
    let default_account = u.default_accounts.first().cloned();
    if let Some(def) = default_account.as_ref().filter(|d| !u.accounts.contains(d)) {
        u.accounts.push(def.clone());
    }
    if u.accounts.is_empty() {
        return Err(SacctmgrError::NeedAccount);
    }
    let admin_level = u.admin_levels.first().cloned();
    let clusters = verify::target_clusters(s, &u.clusters, "users").await?;
    let known = s
        .list_accounts(proto::ListAccountsRequest {
            names: u.accounts.clone(),
            ..Default::default()
        })
        .await?;
    if let Some(missing) = u
        .accounts
        .iter()
        .find(|a| !known.iter().any(|k| k.name.eq_ignore_ascii_case(a)))
    {
        return Err(SacctmgrError::AccountMissing(missing.clone()));
    }
    let existing = s
        .list_users(proto::ListUsersRequest {
            names: u.names.clone(),
            ..Default::default()
        })
        .await?;
    let assocs = s
        .list_associations(proto::ListAssociationsRequest {
            clusters: clusters.clone(),
            accounts: u.accounts.clone(),
            users: vec![],
            ..Default::default()
        })
        .await?;
    let has = |user: &str, acct: &str, cluster: &str| {
        assocs.iter().any(|a| {
            a.user.eq_ignore_ascii_case(user)
                && a.account.eq_ignore_ascii_case(acct)
                && a.cluster.eq_ignore_ascii_case(cluster)
        })
    };
    let mut user_lines = String::new();
    let mut assoc_lines = String::new();
    for name in &u.names {
        if !existing.iter().any(|e| e.name.eq_ignore_ascii_case(name)) {
            user_lines.push_str(&format!("  {name}\n"));
        }
        for acct in &u.accounts {
            for cluster in &clusters {
                if !has("", acct, cluster) {
                    return Err(SacctmgrError::AccountNotOnCluster {
                        account: acct.clone(),
                        cluster: cluster.clone(),
                    });
                }
                if !has(name, acct, cluster) {
                    assoc_lines.push_str(&assoc_line(name, acct, cluster));
                }
            }
        }
    }
    if user_lines.is_empty() && assoc_lines.is_empty() {
        s.out(" Nothing new added.\n");
        return Ok(Done::Failed);
    }
    if !user_lines.is_empty() {
        s.out(&format!(" Adding User(s)\n{user_lines}"));
        if default_account.is_some() || admin_level.is_some() {
            s.out(" Settings =\n");
        }
        if let Some(def) = &default_account {
            s.out(&format!("  Default Account = {def}\n"));
        }
        if let Some(level) = &admin_level {
            s.out(&format!("  Admin Level     = {level}\n"));
        }
    }
    if !assoc_lines.is_empty() {
        s.out(&format!(" Associations =\n{assoc_lines}"));
        let mut settings = String::new();
        if let Some(f) = &u.fairshare {
            settings.push_str(&format!("  Fairshare     = {f}\n"));
        }
        if let Some(edit) = &limits {
            settings.push_str(&super::limits::settings_lines(edit));
        }
        if !settings.is_empty() {
            s.out(&format!(" Non Default Settings\n{settings}"));
        }
    }
    let mut change = Change::AddUsers(AddUsersRequest {
        names: u.names,
        accounts: u.accounts,
        default_account,
        admin_level,
        clusters,
        commit: false,
        fairshare: u.fairshare,
        limits,
    });
    s.preview(&mut change, "Problem adding users").await?;
    s.confirm(&mut change, "Problem adding users").await
}

async fn modify(s: &mut Session<'_>, parts: Parts) -> Outcome {
    let cond = parse(&parts.cond, SacctmgrError::UnknownCondition)?;
    let (set_words, qos) = super::assoc_qos::take(&parts.set)?;
    let (set_words, limits) = super::limits::take(&set_words)?;
    let set = parse(&set_words, SacctmgrError::UnknownOption)?;
    let default_account = set.default_accounts.first().cloned();
    let admin_level = set.admin_levels.first().cloned();
    if qos.is_some() {
        let by_user_fields = !(cond.default_accounts.is_empty() && cond.admin_levels.is_empty());
        if default_account.is_some() || admin_level.is_some() || by_user_fields {
            return Err(SacctmgrError::MixedQos("user"));
        }
    }
    // QOS with limits or Fairshare= go as one association change (below).
    if let Some(q) = qos
        .clone()
        .filter(|_| limits.is_none() && set.fairshare.is_none())
    {
        if !cond.any_cond()
            && !s.commit_check(
                "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
            )
        {
            s.out("Aborted\n");
            return Ok(Done::Ok);
        }
        let req = q.request(true, cond.names, cond.accounts, cond.clusters);
        return super::assoc_qos::modify(s, req, "Modified user associations...").await;
    }
    if limits.is_some() || qos.is_some() {
        let edit = limits.unwrap_or_default();
        let by_user_fields = !(cond.default_accounts.is_empty() && cond.admin_levels.is_empty());
        // Fair share is an association setting too: it goes in the same change.
        if default_account.is_some() || admin_level.is_some() || by_user_fields {
            return Err(SacctmgrError::MixedLimits("user"));
        }
        if !cond.any_cond()
            && !s.commit_check(
                "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
            )
        {
            s.out("Aborted\n");
            return Ok(Done::Ok);
        }
        let req = proto::ModifyAssocLimitsRequest {
            qos: qos.map(|q| q.request(true, Vec::new(), Vec::new(), Vec::new())),
            user_associations: true,
            users: cond.names,
            accounts: cond.accounts,
            clusters: cond.clusters,
            set: Some(edit),
            commit: false,
            fairshare: set.fairshare,
        };
        return super::limits::modify(s, req, "Modified user associations...").await;
    }
    if default_account.is_none() && admin_level.is_none() && set.fairshare.is_none() {
        return Err(SacctmgrError::NothingToSet);
    }
    if !cond.any_cond()
        && !s.commit_check(
            "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
        )
    {
        s.out("Aborted\n");
        return Ok(Done::Ok);
    }
    let mut change = Change::ModifyUsers(ModifyUsersRequest {
        names: cond.names,
        default_account,
        admin_level,
        commit: false,
        where_accounts: cond.accounts,
        where_admin_levels: cond.admin_levels,
        fairshare: set.fairshare,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing modified\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(" Modified users...\n{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn delete(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse(words, SacctmgrError::UnknownCondition)?;
    if cond.names.is_empty() && cond.accounts.is_empty() {
        return Err(SacctmgrError::NoConditions);
    }
    let names = if cond.names.is_empty() {
        let assocs = s
            .list_associations(proto::ListAssociationsRequest {
                accounts: cond.accounts.clone(),
                ..Default::default()
            })
            .await?;
        let mut users: Vec<String> = assocs
            .into_iter()
            .map(|a| a.user)
            .filter(|u| !u.is_empty())
            .collect();
        users.dedup();
        users
    } else {
        cond.names
    };
    if names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    let by_account = !cond.accounts.is_empty();
    let mut change = Change::DeleteUsers(DeleteUsersRequest {
        names,
        accounts: cond.accounts,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    let heading = if by_account {
        " Deleting user associations...\n"
    } else {
        " Deleting users...\n"
    };
    s.out(&format!("{heading}{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse(words, SacctmgrError::UnknownCondition)?;
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
    let mut users = s
        .list_users(proto::ListUsersRequest {
            names: cond.names,
            default_accounts: cond.default_accounts,
            admin_levels: cond.admin_levels,
            with_deleted: cond.with_deleted,
        })
        .await?;
    let assocs = if with_assoc || !cond.accounts.is_empty() {
        s.list_associations(proto::ListAssociationsRequest {
            accounts: cond.accounts.clone(),
            clusters: if with_assoc {
                cond.clusters
            } else {
                Vec::new()
            },
            users: users.iter().map(|u| u.name.clone()).collect(),
            ..Default::default()
        })
        .await?
    } else {
        Vec::new()
    };
    if !cond.accounts.is_empty() {
        users.retain(|u| assocs.iter().any(|a| a.user == u.name));
    }
    let fields: Vec<Field> = chosen.iter().map(|c| c.field).collect();
    let rows = if with_assoc {
        rows_with_assocs(&users, &assocs, &fields)
    } else {
        users
            .iter()
            .map(|u| fields.iter().map(|&f| value(u, f)).collect())
            .collect()
    };
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// `list user withassoc`: as Slurm, one row per association of each user (in the association
/// listing's order) with the user's own fields repeated; a user without associations gets one
/// row with the association fields blank.
pub fn rows_with_assocs(
    users: &[proto::User],
    assocs: &[proto::Association],
    fields: &[Field],
) -> Vec<Vec<String>> {
    const OWN: [Field; 5] = [
        Field::User,
        Field::Name,
        Field::DefaultAccount,
        Field::AdminLevel,
        Field::Coordinators,
    ];
    super::assoc::rows_with_assocs(users, assocs, fields, &OWN, |u, a| a.user == u.name, value)
}

/// A user's value for a field (blank for what users do not hold).
pub fn value(u: &proto::User, field: Field) -> String {
    match field {
        Field::User | Field::Name => u.name.clone(),
        Field::DefaultAccount => u.default_account.clone(),
        Field::AdminLevel => u.admin_level.clone(),
        Field::Coordinators => u.coord_accounts.join(","),
        _ => String::new(),
    }
}
