//! `add|modify|delete|show federation`.

use sluice_vocab::FedState;
use sluice_wire::proto::{
    self, AddFederationsRequest, DeleteFederationsRequest, ModifyFederationsRequest,
};

use super::Verb;
use super::args::{ModeList, Op, Parts, Word, is_edit, split_list};
use super::error::SacctmgrError;
use super::fields::{Chosen, Field, parse_format};
use super::session::{Change, Done, Outcome, Session};
use super::verify;
use crate::words::is_keyword;

/// Slurm's default `show federation` format.
pub const DEFAULT_FORMAT: &str = "Federation,Cluster,ID%2,Features,FedState";

/// Runs a federation command.
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::Add => add(s, &Parts::all(words)).await,
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Modify => modify(s, Parts::split(words)).await,
        Verb::Delete => delete(s, &Parts::all(words)).await,
    }
}

/// Conditions of a federation command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FedCond {
    pub names: Vec<String>,
    pub clusters: Vec<String>,
    pub tree: bool,
    pub with_deleted: bool,
    pub format: Vec<String>,
}

/// Parses condition words (`f1`, `names=`, `federations=`, `clusters=`, `tree`, `format=`).
pub fn parse_cond(words: &[Word]) -> Result<FedCond, SacctmgrError> {
    let mut c = FedCond::default();
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "WithDeleted", 5) => c.with_deleted = true,
            Word::Bare(b) if is_keyword(b, "Tree", 4) => c.tree = true,
            Word::Bare(b) => c.names.extend(split_list(b)),
            Word::Pair { key, value, .. }
                if is_keyword(key, "Names", 1) || is_keyword(key, "Federations", 3) =>
            {
                c.names.extend(split_list(value));
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Clusters", 3) => {
                c.clusters.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 2) => {
                c.format.push(value.clone())
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

/// Parses setting words: names (for add) and `clusters[+-]=`.
pub fn parse_set(words: &[Word]) -> Result<(Vec<String>, ModeList), SacctmgrError> {
    let mut names = Vec::new();
    let mut clusters = ModeList::default();
    for w in words {
        match w {
            Word::Bare(b) => names.extend(split_list(b)),
            Word::Pair { key, value, .. } if is_keyword(key, "Names", 1) => {
                names.extend(split_list(value))
            }
            Word::Pair { key, op, value } if is_keyword(key, "Clusters", 2) => {
                if value.is_empty() && *op != Op::Set {
                    let action = if *op == Op::Remove { "remove" } else { "add" };
                    return Err(SacctmgrError::EmptyEdit {
                        what: "clusters",
                        action,
                    });
                }
                clusters.apply(*op, value)?;
            }
            other => return Err(SacctmgrError::UnknownOption(other.raw())),
        }
    }
    Ok((names, clusters))
}

/// Slurm's `sacctmgr_print_federation` lines for a cluster list.
pub fn settings_lines(items: &[String]) -> String {
    items
        .iter()
        .map(|i| match i.chars().next() {
            Some(c @ ('+' | '-')) => format!("  Cluster      {c}= {}\n", &i[1..]),
            _ => format!("  Cluster       = {i}\n"),
        })
        .collect()
}

async fn add(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let (names, mut clusters) = parse_set(words)?;
    if names.is_empty() {
        return Err(SacctmgrError::NeedName("federation"));
    }
    let existing = s
        .list_federations(proto::ListFederationsRequest {
            names: names.clone(),
            ..Default::default()
        })
        .await?;
    let mut new = Vec::new();
    for n in names {
        if existing.iter().any(|f| f.name.eq_ignore_ascii_case(&n)) {
            s.out(&format!(
                " This federation {n} already exists.  Not adding.\n"
            ));
        } else {
            new.push(n);
        }
    }
    if new.is_empty() {
        return Ok(Done::Failed);
    }
    if !clusters.items.is_empty() {
        if new.len() > 1 {
            return Err(SacctmgrError::MultipleFederations);
        }
        let (kept, moving) =
            verify::fed_clusters(s, std::mem::take(&mut clusters.items), None).await?;
        clusters.items = kept;
        if moving && !s.commit_check("\nAre you sure you want to continue?") {
            return Ok(Done::Failed);
        }
    }
    s.out(" Adding Federation(s)\n");
    for n in &new {
        if n.trim().is_empty() {
            s.err(" Skipping blank fed name.\n");
        } else {
            s.out(&format!("  {n}\n"));
        }
    }
    if clusters.given {
        s.out(&format!(" Settings\n{}", settings_lines(&clusters.items)));
    }
    let names: Vec<String> = new.into_iter().filter(|n| !n.trim().is_empty()).collect();
    if names.is_empty() {
        s.out(" Nothing new added.\n");
        return Ok(Done::Failed);
    }
    let mut change = Change::AddFederations(AddFederationsRequest {
        names,
        clusters: clusters.items,
        commit: false,
    });
    s.preview(&mut change, "Problem adding federation(s)")
        .await?;
    s.confirm(&mut change, "Problem adding federation(s)").await
}

async fn modify(s: &mut Session<'_>, parts: Parts) -> Outcome {
    let cond = parse_cond(&parts.cond)?;
    let (_, clusters) = parse_set(&parts.set)?;
    if !clusters.given {
        return Err(SacctmgrError::NothingToSet);
    }
    if cond.names.is_empty() && cond.clusters.is_empty() {
        if !s.commit_check(
            "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
        ) {
            s.out("Aborted\n");
            return Ok(Done::Ok);
        }
    } else {
        verify::federations_exist(s, &cond.names).await?;
    }
    let [fed] = cond.names.as_slice() else {
        return Err(SacctmgrError::MultipleFederations);
    };
    let mut items = clusters.items;
    if items.first().is_none_or(|i| !is_edit(i)) {
        // Setting the list exactly: add what is new, remove the members not named.
        let feds = s
            .list_federations(proto::ListFederationsRequest {
                names: vec![fed.clone()],
                ..Default::default()
            })
            .await?;
        let members: Vec<String> = feds
            .into_iter()
            .flat_map(|f| f.clusters)
            .map(|c| c.name)
            .collect();
        for m in members {
            if !items.contains(&m) {
                items.push(format!("-{m}"));
            }
        }
        for i in &mut items {
            if !is_edit(i) {
                *i = format!("+{i}");
            }
        }
    }
    let (kept, moving) = verify::fed_clusters(s, items, Some(fed)).await?;
    if kept.is_empty() {
        s.out("Nothing to change\n");
        return Ok(Done::Failed);
    }
    if moving && !s.commit_check("\nAre you sure you want to continue?") {
        return Ok(Done::Failed);
    }
    s.out(&format!(" Setting\n{}", settings_lines(&kept)));
    let mut change = Change::ModifyFederations(ModifyFederationsRequest {
        names: cond.names.clone(),
        clusters: kept,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing modified\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(
        " Modified federation...\n{}",
        indented(&reply.names)
    ));
    s.confirm(&mut change, "Error with request").await
}

async fn delete(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    if cond.names.is_empty() && cond.clusters.is_empty() {
        return Err(SacctmgrError::NoConditions);
    }
    if cond.names.is_empty() {
        s.err("problem with delete request.  Nothing given to delete.\n");
        return Ok(Done::Failed);
    }
    // Slurm's remove simply matches nothing for unknown names.
    let found = s
        .list_federations(proto::ListFederationsRequest {
            names: cond.names,
            ..Default::default()
        })
        .await?;
    if found.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    let mut change = Change::DeleteFederations(DeleteFederationsRequest {
        names: found.into_iter().map(|f| f.name).collect(),
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(
        " Deleting federations...\n{}",
        indented(&reply.names)
    ));
    s.confirm(&mut change, "Error with request").await
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    let format = if cond.format.is_empty() {
        DEFAULT_FORMAT.to_string()
    } else {
        cond.format.join(",")
    };
    let chosen = parse_format(&format)?;
    let feds = s
        .list_federations(proto::ListFederationsRequest {
            names: cond.names,
            clusters: cond.clusters,
            with_deleted: cond.with_deleted,
        })
        .await?;
    let rows = rows(&feds, &chosen, cond.tree);
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// The rows of `show federation`: one per (federation, member) when a cluster field is
/// shown; with `tree`, a federation row first and member rows with a blank Federation.
pub fn rows(feds: &[proto::Federation], chosen: &[Chosen], tree: bool) -> Vec<Vec<String>> {
    let per_cluster = chosen.iter().any(|c| {
        matches!(
            c.field,
            Field::Cluster | Field::FedState | Field::FedStateRaw | Field::Id
        )
    });
    let mut rows = Vec::new();
    for fed in feds {
        let mut members: Vec<Option<&proto::Cluster>> = Vec::new();
        if tree || !per_cluster || fed.clusters.is_empty() {
            members.push(None);
        }
        if per_cluster {
            members.extend(fed.clusters.iter().map(Some));
        }
        for member in members {
            rows.push(
                chosen
                    .iter()
                    .map(|c| value(fed, member, c.field, tree))
                    .collect(),
            );
        }
    }
    rows
}

fn value(
    fed: &proto::Federation,
    member: Option<&proto::Cluster>,
    field: Field,
    tree: bool,
) -> String {
    let fed_level = !(tree && member.is_some());
    match (field, member) {
        (Field::Federation, _) if fed_level => fed.name.clone(),
        (Field::Cluster, Some(c)) => c.name.clone(),
        (Field::Features, Some(c)) => c.features.join(","),
        (Field::FedState, Some(c)) => FedState::name_of_stored(c.fed_state).to_string(),
        (Field::FedStateRaw, Some(c)) => c.fed_state.to_string(),
        (Field::Id, Some(c)) => c.fed_id.to_string(),
        _ => String::new(),
    }
}

/// Names as sacctmgr lists them under a heading: two spaces in, one per line.
pub fn indented(names: &[String]) -> String {
    names.iter().map(|n| format!("  {n}\n")).collect()
}
