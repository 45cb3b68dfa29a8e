//! `add|delete coordinator`: grant users coordination of accounts (and every account below
//! them), or revoke it. Slurm checks the names first and prints its own lines for missing ones.

use sluice_wire::proto::{self, CoordinatorsRequest};

use super::Verb;
use super::args::{Parts, Word, split_list};
use super::error::SacctmgrError;
use super::federation::indented;
use super::session::{Change, Done, Outcome, Session};
use crate::words::is_keyword;

/// Runs a coordinator command (only add and delete exist, as in Slurm).
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    let args = parse(&Parts::all(words))?;
    match verb {
        Verb::Add => add(s, args).await,
        Verb::Delete => delete(s, args).await,
        Verb::List => Err(SacctmgrError::NoEntity { verb: "list" }),
        Verb::Modify => Err(SacctmgrError::NoEntity { verb: "modify" }),
    }
}

/// The users and accounts of a coordinator command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct CoordArgs {
    pub names: Vec<String>,
    pub accounts: Vec<String>,
}

/// Parses `Names=`/`Users=` (or bare names) and `Accounts=`.
pub fn parse(words: &[Word]) -> Result<CoordArgs, SacctmgrError> {
    let mut c = CoordArgs::default();
    let lower = |v: &str| split_list(v).into_iter().map(|n| n.to_lowercase());
    for w in words {
        match w {
            Word::Bare(b) => c.names.extend(lower(b)),
            Word::Pair { key, value, .. }
                if is_keyword(key, "Names", 1) || is_keyword(key, "Users", 1) =>
            {
                c.names.extend(lower(value))
            }
            Word::Pair { key, value, .. }
                if is_keyword(key, "Accounts", 2) || is_keyword(key, "Acct", 4) =>
            {
                c.accounts.extend(split_list(value))
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

/// Slurm's check that every named account and user exists.
async fn check_names(s: &mut Session<'_>, c: &CoordArgs) -> Result<(), SacctmgrError> {
    if !c.accounts.is_empty() {
        let known = s
            .list_accounts(proto::ListAccountsRequest {
                names: c.accounts.clone(),
                ..Default::default()
            })
            .await?;
        if let Some(missing) = c
            .accounts
            .iter()
            .find(|a| !known.iter().any(|k| k.name == **a))
        {
            return Err(SacctmgrError::Coordinator(format!(
                "You specified a non-existent account '{missing}'."
            )));
        }
    }
    if !c.names.is_empty() {
        let known = s
            .list_users(proto::ListUsersRequest {
                names: c.names.clone(),
                ..Default::default()
            })
            .await?;
        if let Some(missing) = c
            .names
            .iter()
            .find(|u| !known.iter().any(|k| k.name == **u))
        {
            return Err(SacctmgrError::Coordinator(format!(
                "You specified a non-existent user '{missing}'."
            )));
        }
    }
    Ok(())
}

async fn add(s: &mut Session<'_>, c: CoordArgs) -> Outcome {
    if c.accounts.is_empty() {
        return Err(SacctmgrError::Coordinator(
            "You need to specify an account list here.".into(),
        ));
    }
    if c.names.is_empty() {
        return Err(SacctmgrError::Coordinator(
            "You need to specify a user list here.".into(),
        ));
    }
    check_names(s, &c).await?;
    s.out(&format!(
        " Adding Coordinator User(s)\n{} To Account(s) and all sub-accounts\n{}",
        indented(&c.names),
        indented(&c.accounts)
    ));
    let mut change = Change::AddCoordinators(CoordinatorsRequest {
        names: c.names,
        accounts: c.accounts,
        commit: false,
    });
    s.preview(&mut change, "Problem adding coordinator").await?;
    s.confirm(&mut change, "Problem adding coordinator").await
}

async fn delete(s: &mut Session<'_>, c: CoordArgs) -> Outcome {
    if c.accounts.is_empty() && c.names.is_empty() {
        return Err(SacctmgrError::Coordinator(
            "You need to specify a user list or account list here.".into(),
        ));
    }
    check_names(s, &c).await?;
    if c.names.is_empty() {
        s.out(&format!(
            " Removing all users from Accounts\n{}",
            indented(&c.accounts)
        ));
    } else {
        s.out(&format!(
            " Removing Coordinators with user name\n{}",
            indented(&c.names)
        ));
        if c.accounts.is_empty() {
            s.out(" From all accounts\n");
        } else {
            s.out(&format!(" From Account(s)\n{}", indented(&c.accounts)));
        }
    }
    let mut change = Change::DeleteCoordinators(CoordinatorsRequest {
        names: c.names,
        accounts: c.accounts,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.revoked.is_empty() {
        s.out(" Nothing removed\n");
        return Ok(Done::Failed);
    }
    s.out(&revoked_lines(&reply.revoked));
    s.confirm(&mut change, "Error with request").await
}

/// Slurm's list of revoked grants.
pub fn revoked_lines(revoked: &[proto::CoordinatorGrant]) -> String {
    let mut text = String::from(" Removed Coordinators (sub accounts not listed)...\n");
    for g in revoked {
        text.push_str(&format!("  U = {:<9.9} A = {:<10.10}\n", g.user, g.account));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sacctmgr::args::Parts;

    fn args(line: &str) -> Result<CoordArgs, SacctmgrError> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&Parts::all(&words))
    }

    #[test]
    fn names_and_accounts_parse_as_slurm_spells_them() {
        let c = args("account=chem,phys names=Alice,bob").unwrap();
        assert_eq!(c.accounts, ["chem", "phys"]);
        assert_eq!(c.names, ["alice", "bob"]);
        assert_eq!(args("carol acct=x").unwrap().names, ["carol"]);
        assert!(matches!(
            args("parent=x"),
            Err(SacctmgrError::UnknownCondition(w)) if w == "parent=x"
        ));
    }

    #[test]
    fn revoked_grants_print_in_slurms_columns() {
        let g = |u: &str, a: &str| proto::CoordinatorGrant {
            user: u.into(),
            account: a.into(),
        };
        assert_eq!(
            revoked_lines(&[g("couser1", "coacct"), g("u2", "chem")]),
            " Removed Coordinators (sub accounts not listed)...\n  U = couser1   A = coacct    \n  U = u2        A = chem      \n"
        );
    }
}
