//! The checks sacctmgr makes before a federation change (Slurm does them client-side by
//! listing first; the dbd still enforces every rule inside its transaction).

use sluice_wire::proto::{ListClustersRequest, ListFederationsRequest};

use super::args::is_edit;
use super::error::SacctmgrError;
use super::session::Session;

/// Fails naming every federation in `names` that does not exist.
pub async fn federations_exist(s: &mut Session<'_>, names: &[String]) -> Result<(), SacctmgrError> {
    if names.is_empty() {
        return Ok(());
    }
    let feds = s
        .list_federations(ListFederationsRequest {
            names: names.to_vec(),
            ..Default::default()
        })
        .await?;
    let missing: Vec<String> = names
        .iter()
        .filter(|n| !feds.iter().any(|f| f.name.eq_ignore_ascii_case(n)))
        .cloned()
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(SacctmgrError::FederationsMissing(missing))
    }
}

/// The cluster items (`c`, `+c`, `-c`) that remain after Slurm's `verify_fed_clusters`, and
/// whether one of them belongs to another federation (sacctmgr then asks before moving it).
///
/// * a cluster not in the database fails the command;
/// * adding a cluster already in `fed` drops it (" ... is already assigned ...");
/// * removing a cluster that is not in `fed` drops it (" ... isn't assigned ...");
/// * adding a cluster that is in another federation is reported and kept.
pub async fn fed_clusters(
    s: &mut Session<'_>,
    items: Vec<String>,
    fed: Option<&str>,
) -> Result<(Vec<String>, bool), SacctmgrError> {
    let names: Vec<String> = items.iter().map(|i| bare(i).to_string()).collect();
    let db = s
        .list_clusters(ListClustersRequest {
            names,
            ..Default::default()
        })
        .await?;
    let mut kept = Vec::new();
    let mut missing = Vec::new();
    let mut elsewhere = String::new();
    for item in items {
        let name = bare(&item);
        let Some(rec) = db.iter().find(|c| c.name.eq_ignore_ascii_case(name)) else {
            missing.push(name.to_string());
            continue;
        };
        let removing = item.starts_with('-');
        if !removing && !rec.federation.is_empty() {
            if fed == Some(rec.federation.as_str()) {
                s.err(&format!(
                    " The cluster {} is already assigned to federation {}\n",
                    rec.name, rec.federation
                ));
                continue;
            }
            elsewhere.push_str(&format!(
                " The cluster {} is assigned to federation {}\n",
                rec.name, rec.federation
            ));
        } else if removing && fed.is_some_and(|f| f != rec.federation) {
            s.err(&format!(
                " The cluster {} isn't assigned to federation {}\n",
                rec.name,
                fed.unwrap_or_default()
            ));
            continue;
        }
        kept.push(item);
    }
    if !missing.is_empty() {
        return Err(SacctmgrError::ClustersMissing(missing));
    }
    let moving = !elsewhere.is_empty();
    s.err(&elsewhere);
    Ok((kept, moving))
}

/// The clusters an account or user add applies to: the ones named (each must exist), or
/// every cluster when none is named (`what` names the entity for the "no cluster" error).
pub async fn target_clusters(
    s: &mut Session<'_>,
    named: &[String],
    what: &'static str,
) -> Result<Vec<String>, SacctmgrError> {
    let db = s
        .list_clusters(ListClustersRequest {
            names: named.to_vec(),
            ..Default::default()
        })
        .await?;
    if named.is_empty() {
        if db.is_empty() {
            return Err(SacctmgrError::NoClusters(what));
        }
        return Ok(db.into_iter().map(|c| c.name).collect());
    }
    for n in named {
        if !db.iter().any(|c| c.name.eq_ignore_ascii_case(n)) {
            return Err(SacctmgrError::ClusterUnknown(n.clone()));
        }
    }
    Ok(named.to_vec())
}

/// An item's cluster name, without its `+`/`-`.
pub fn bare(item: &str) -> &str {
    if is_edit(item) { &item[1..] } else { item }
}
