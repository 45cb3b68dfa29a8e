//! `add|modify|delete|show cluster`.

use sluice_vocab::FedState;
use sluice_wire::proto::{
    self, AddClustersRequest, DeleteClustersRequest, ListEdit, ListOp, ModifyClustersRequest,
};

use super::Verb;
use super::args::{ModeList, Op, Parts, Word, split_list};
use super::error::SacctmgrError;
use super::federation::indented;
use super::fields::{Field, parse_format};
use super::session::{Change, Done, Outcome, Session};
use super::verify;
use crate::words::is_keyword;

/// Slurm's default `show cluster` columns, the limit columns (unless `WOLimits`) and the
/// federation columns (with `WithFed`).
pub const DEFAULT_FORMAT: &str = "Cl,Controlh,Controlp,RPC";
const LIMITS_FORMAT: &str = "Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS";
const FED_FORMAT: &str = "Federation,ID,Features,FedState";

/// Runs a cluster command.
pub async fn run(s: &mut Session<'_>, verb: Verb, words: &[String]) -> Outcome {
    match verb {
        Verb::Add => add(s, &Parts::all(words)).await,
        Verb::List => list(s, &Parts::all(words)).await,
        Verb::Modify => modify(s, Parts::split(words)).await,
        Verb::Delete => delete(s, &Parts::all(words)).await,
    }
}

/// Conditions of a cluster command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ClusterCond {
    pub names: Vec<String>,
    pub federations: Vec<String>,
    pub with_fed: bool,
    pub without_limits: bool,
    pub with_deleted: bool,
    pub format: Vec<String>,
}

/// What a cluster add or modify sets.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ClusterSet {
    pub names: Vec<String>,
    pub federation: Option<String>,
    pub fed_state: Option<FedState>,
    pub features: ModeList,
}

impl ClusterSet {
    fn any(&self) -> bool {
        self.federation.is_some() || self.fed_state.is_some() || self.features.given
    }

    /// Slurm's `sacctmgr_print_cluster` lines for these settings.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        if self.features.given && self.features.items.is_empty() {
            out.push_str("  Feature     = \n");
        }
        for f in &self.features.items {
            match f.chars().next() {
                Some(c @ ('+' | '-')) => out.push_str(&format!("  Feature     {c}= {}\n", &f[1..])),
                _ => out.push_str(&format!("  Feature       = {f}\n")),
            }
        }
        if let Some(fed) = &self.federation {
            out.push_str(&format!("  Federation     = {fed}\n"));
        }
        if let Some(st) = self.fed_state {
            out.push_str(&format!("  FedState       = {st}\n"));
        }
        out
    }

    /// The feature edit as one `ListEdit`. Adds and removes mixed in one command become the
    /// resulting list, computed from the targeted clusters' current features (which must agree).
    fn features_edit(&self, targets: &[proto::Cluster]) -> Result<Option<ListEdit>, SacctmgrError> {
        if !self.features.given {
            return Ok(None);
        }
        let items = &self.features.items;
        let (adds, removes) = (
            items.iter().any(|i| i.starts_with('+')),
            items.iter().any(|i| i.starts_with('-')),
        );
        let bare = |i: &String| verify::bare(i).to_string();
        let (op, items) = match (adds, removes) {
            (true, false) => (ListOp::Add, items.iter().map(bare).collect()),
            (false, true) => (ListOp::Remove, items.iter().map(bare).collect()),
            (false, false) => (ListOp::Set, items.clone()),
            (true, true) => {
                let mut current = targets
                    .first()
                    .map(|c| c.features.clone())
                    .unwrap_or_default();
                if targets.iter().any(|c| c.features != current) {
                    return Err(SacctmgrError::MixedFeatureEdit);
                }
                for i in items {
                    let name = bare(i);
                    current.retain(|f| *f != name);
                    if i.starts_with('+') {
                        current.push(name);
                    }
                }
                (ListOp::Set, current)
            }
        };
        Ok(Some(ListEdit {
            op: op as i32,
            items,
        }))
    }
}

/// Parses condition words.
pub fn parse_cond(words: &[Word]) -> Result<ClusterCond, SacctmgrError> {
    let mut c = ClusterCond::default();
    for w in words {
        match w {
            Word::Bare(b) if is_keyword(b, "WithDeleted", 5) => c.with_deleted = true,
            Word::Bare(b) if is_keyword(b, "WithFed", 5) => c.with_fed = true,
            Word::Bare(b) if is_keyword(b, "WOLimits", 3) => c.without_limits = true,
            Word::Bare(b) => c.names.extend(split_list(b)),
            Word::Pair { key, value, .. }
                if is_keyword(key, "Names", 1) || is_keyword(key, "Clusters", 3) =>
            {
                c.names.extend(split_list(value));
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Federations", 3) => {
                c.federations.extend(split_list(value))
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Format", 2) => {
                c.format.push(value.clone())
            }
            other => return Err(SacctmgrError::UnknownCondition(other.raw())),
        }
    }
    Ok(c)
}

/// Parses setting words (in Slurm's order: `Features` wins `fe`, `Federation` wins `fed`).
pub fn parse_set(words: &[Word]) -> Result<ClusterSet, SacctmgrError> {
    let mut set = ClusterSet::default();
    for w in words {
        match w {
            Word::Bare(b) => set.names.extend(split_list(b)),
            Word::Pair { key, value, .. }
                if is_keyword(key, "Names", 1) || is_keyword(key, "Clusters", 3) =>
            {
                set.names.extend(split_list(value));
            }
            Word::Pair { key, op, value } if is_keyword(key, "Features", 2) => {
                if value.is_empty() && *op != Op::Set {
                    let action = if *op == Op::Remove { "remove" } else { "add" };
                    return Err(SacctmgrError::EmptyEdit {
                        what: "features",
                        action,
                    });
                }
                set.features.apply(*op, value)?;
            }
            Word::Pair { key, value, .. } if is_keyword(key, "Federation", 3) => {
                set.federation = Some(value.clone())
            }
            Word::Pair { key, value, .. } if is_keyword(key, "FedState", 2) => {
                let st = FedState::parse_settable(value)
                    .ok_or_else(|| SacctmgrError::InvalidFedState(value.clone()))?;
                set.fed_state = Some(st);
            }
            other => return Err(SacctmgrError::UnknownOption(other.raw())),
        }
    }
    Ok(set)
}

async fn add(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let set = parse_set(words)?;
    if set.names.is_empty() {
        return Err(SacctmgrError::NeedName("cluster"));
    }
    if set.names.iter().any(|n| n.trim().is_empty()) {
        return Err(SacctmgrError::BlankName);
    }
    let existing = s
        .list_clusters(proto::ListClustersRequest {
            names: set.names.clone(),
            ..Default::default()
        })
        .await?;
    let mut new = Vec::new();
    for n in &set.names {
        if existing.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            s.out(&format!(" This cluster {n} already exists.  Not adding.\n"));
        } else {
            new.push(n.clone());
        }
    }
    if new.is_empty() {
        return Ok(Done::Failed);
    }
    if let Some(fed) = set.federation.as_ref().filter(|f| !f.is_empty()) {
        verify::federations_exist(s, std::slice::from_ref(fed)).await?;
    }
    s.out(" Adding Cluster(s)\n");
    for n in &new {
        s.out(&format!("  Name           = {n}\n"));
    }
    if set.any() {
        s.out(&format!(" Setting\n{}", set.lines()));
    }
    let mut change = Change::AddClusters(AddClustersRequest {
        names: new,
        federation: set.federation.clone().filter(|f| !f.is_empty()),
        fed_state: set.fed_state.map(FedState::stored),
        features: set
            .features
            .items
            .iter()
            .map(|i| verify::bare(i).to_string())
            .collect(),
        commit: false,
    });
    s.preview(&mut change, "Problem adding clusters").await?;
    s.confirm(&mut change, "Problem adding clusters").await
}

async fn modify(s: &mut Session<'_>, parts: Parts) -> Outcome {
    let mut cond = parse_cond(&parts.cond)?;
    let set = parse_set(&parts.set)?;
    if !set.any() {
        return Err(SacctmgrError::NothingToSet);
    }
    if cond.names.is_empty()
        && cond.federations.is_empty()
        && !s.commit_check(
            "You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?",
        )
    {
        s.out("Aborted\n");
        return Ok(Done::Ok);
    }
    if let Some(fed) = set.federation.as_ref().filter(|f| !f.is_empty()) {
        verify::federations_exist(s, std::slice::from_ref(fed)).await?;
        if !cond.names.is_empty() {
            let (kept, moving) =
                verify::fed_clusters(s, std::mem::take(&mut cond.names), Some(fed)).await?;
            if kept.is_empty() {
                s.out("  Nothing to change\n");
                return Ok(Done::Failed);
            }
            if moving && !s.commit_check("\nAre you sure you want to continue?") {
                return Ok(Done::Failed);
            }
            cond.names = kept;
        }
    }
    s.out(&format!(" Setting\n{}", set.lines()));
    let targets = if set.features.is_edit() {
        s.list_clusters(proto::ListClustersRequest {
            names: cond.names.clone(),
            federations: cond.federations.clone(),
            with_deleted: false,
        })
        .await?
    } else {
        Vec::new()
    };
    let features = set.features_edit(&targets)?;
    let mut change = Change::ModifyClusters(ModifyClustersRequest {
        names: cond.names,
        where_federations: cond.federations,
        federation: set.federation.clone(),
        fed_state: set.fed_state.map(FedState::stored),
        features,
        commit: false,
        ..Default::default()
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(if reply.nothing_changed {
            "  Nothing to change\n"
        } else {
            " Nothing modified\n"
        });
        return Ok(Done::Failed);
    }
    s.out(&format!(" Modified cluster...\n{}", indented(&reply.names)));
    s.confirm(&mut change, "Error with request").await
}

async fn delete(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    if cond.names.is_empty() && cond.federations.is_empty() {
        return Err(SacctmgrError::NoConditions);
    }
    // Slurm's remove simply matches nothing for unknown names.
    let found = s
        .list_clusters(proto::ListClustersRequest {
            names: cond.names.clone(),
            federations: cond.federations.clone(),
            with_deleted: false,
        })
        .await?;
    if found.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    let names = if cond.names.is_empty() {
        cond.names
    } else {
        found.into_iter().map(|c| c.name).collect()
    };
    let mut change = Change::DeleteClusters(DeleteClustersRequest {
        names,
        where_federations: cond.federations,
        commit: false,
    });
    let reply = s.preview(&mut change, "Error with request").await?;
    if reply.names.is_empty() {
        s.out(" Nothing deleted\n");
        return Ok(Done::Failed);
    }
    s.out(&format!(
        " Deleting clusters...\n{}",
        indented(&reply.names)
    ));
    s.confirm(&mut change, "Error with request").await
}

async fn list(s: &mut Session<'_>, words: &[Word]) -> Outcome {
    let cond = parse_cond(words)?;
    let format = if cond.format.is_empty() {
        let mut f = vec![DEFAULT_FORMAT];
        if !cond.without_limits {
            f.push(LIMITS_FORMAT);
        }
        if cond.with_fed {
            f.push(FED_FORMAT);
        }
        f.join(",")
    } else {
        cond.format.join(",")
    };
    let chosen = parse_format(&format)?;
    let clusters = s
        .list_clusters(proto::ListClustersRequest {
            names: cond.names,
            federations: cond.federations,
            with_deleted: cond.with_deleted,
        })
        .await?;
    let rows: Vec<Vec<String>> = clusters
        .iter()
        .map(|c| chosen.iter().map(|f| value(c, f.field)).collect())
        .collect();
    s.print_table(&chosen, &rows);
    Ok(Done::Ok)
}

/// A cluster's value for a field; limits Sluice does not hold print blank, Share is Slurm's 1.
pub fn value(c: &proto::Cluster, field: Field) -> String {
    match field {
        Field::Cluster | Field::Name => c.name.clone(),
        Field::ControlHost => c.control_host.clone(),
        Field::ControlPort => c.control_port.to_string(),
        Field::Rpc => c.rpc_version.to_string(),
        Field::Classification => c.classification.clone(),
        Field::Features => c.features.join(","),
        Field::Federation => c.federation.clone(),
        Field::FedState => FedState::name_of_stored(c.fed_state).to_string(),
        Field::FedStateRaw => c.fed_state.to_string(),
        Field::Id => c.fed_id.to_string(),
        Field::Share => "1".to_string(),
        _ => String::new(),
    }
}
