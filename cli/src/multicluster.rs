//! Reaching several clusters' controllers: `-M/--clusters name,...|all` and the local cluster's
//! federation (`--federation`), resolved through the accounting daemon as Slurm's
//! `slurmdb_get_info_cluster` does. A cluster is reachable once its controller has registered
//! (its control host and port are set in the dbd).
//!
//! The choice of clusters ([`select`], [`federation_of`]) is pure; [`resolve`] and
//! [`federation`] fetch the dbd's rows, [`connect`] opens a signed client to one member.

use std::io::Write;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{Cluster, Federation, ListClustersRequest, ListFederationsRequest};

use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::{CliError, SlurmConf};

/// One cluster a command can talk to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The cluster's name.
    pub name: String,
    /// Its controller's address (as it registered).
    pub host: String,
    /// Its controller's port.
    pub port: u16,
    /// Its id in its federation (0 outside one).
    pub fed_id: u32,
    /// Its federation ("" when in none).
    pub federation: String,
}

/// A `-M` value: named clusters or `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These clusters, in the order given (duplicates dropped).
    Names(Vec<String>),
    /// Every registered cluster.
    All,
}

impl Selection {
    /// Parses `-M`: a comma list, or `all` (any case).
    pub fn parse(text: &str) -> Selection {
        if text.trim().eq_ignore_ascii_case("all") {
            return Selection::All;
        }
        let mut names: Vec<String> = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        Selection::Names(names)
    }
}

/// Why the clusters could not be resolved; [`MultiError::lines`] gives Slurm's texts.
#[derive(Debug, thiserror::Error)]
pub enum MultiError {
    /// The dbd does not know this cluster.
    #[error("No cluster '{name}' known by database.")]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// The cluster exists but its controller never registered (or is deleted).
    #[error(
        "'{name}' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters."
    )]
    Unreachable {
        /// The name as given.
        name: String,
    },
    /// `-M all` and no cluster has a controller.
    #[error("No clusters can be reached now. Contact your admin to resolve the problem.")]
    NoneReachable,
    /// The dbd could not be asked.
    #[error(
        "There is a problem talking to the database: {reason}.  Only local cluster communication is available, remove --cluster from your command line or contact your admin to resolve the problem."
    )]
    Dbd {
        /// The failure's text.
        reason: String,
    },
    /// The configuration could not be read.
    #[error("{0}")]
    Conf(#[from] CliError),
}

impl MultiError {
    /// The lines Slurm prints (each after `prog: error: `).
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::Unknown { name } => vec![
                self.to_string(),
                Self::Unreachable { name: name.clone() }.to_string(),
            ],
            other => vec![other.to_string()],
        }
    }

    /// Prints the lines as `prog: error: ...`.
    pub fn print(&self, prog: &str, err: &mut dyn Write) {
        for line in self.lines() {
            let _ = writeln!(err, "{prog}: error: {line}");
        }
    }
}

fn member(c: &Cluster) -> Option<Member> {
    let port = u16::try_from(c.control_port).ok().filter(|p| *p != 0)?;
    if c.deleted || c.control_host.trim().is_empty() {
        return None;
    }
    Some(Member {
        name: c.name.clone(),
        host: c.control_host.clone(),
        port,
        fed_id: c.fed_id,
        federation: c.federation.clone(),
    })
}

/// The clusters `sel` names among the dbd's `clusters`: `all` is every registered cluster by
/// name; names keep their order and must all be known and registered.
pub fn select(clusters: &[Cluster], sel: &Selection) -> Result<Vec<Member>, MultiError> {
    match sel {
        Selection::All => {
            let mut all: Vec<Member> = clusters.iter().filter_map(member).collect();
            all.sort_by(|a, b| a.name.cmp(&b.name));
            if all.is_empty() {
                return Err(MultiError::NoneReachable);
            }
            Ok(all)
        }
        Selection::Names(names) => names
            .iter()
            .map(|name| {
                let row = clusters
                    .iter()
                    .find(|c| c.name == *name && !c.deleted)
                    .ok_or_else(|| MultiError::Unknown { name: name.clone() })?;
                member(row).ok_or_else(|| MultiError::Unreachable { name: name.clone() })
            })
            .collect(),
    }
}

/// The federation holding `local` among the dbd's `federations`, with its reachable members
/// ordered by name (a member whose controller never registered is down: skipped, as Slurm
/// does). `None` when `local` is in no federation.
pub fn federation_of(federations: &[Federation], local: &str) -> Option<(String, Vec<Member>)> {
    let fed = federations
        .iter()
        .filter(|f| !f.deleted)
        .find(|f| f.clusters.iter().any(|c| c.name == local && !c.deleted))?;
    let mut members: Vec<Member> = fed.clusters.iter().filter_map(member).collect();
    members.sort_by(|a, b| a.name.cmp(&b.name));
    Some((fed.name.clone(), members))
}

fn dbd_error(e: impl std::fmt::Display) -> MultiError {
    MultiError::Dbd {
        reason: e.to_string(),
    }
}

/// Asks the dbd for the clusters `sel` names and resolves them ([`select`]).
pub async fn resolve(conf: &SlurmConf, sel: &Selection) -> Result<Vec<Member>, MultiError> {
    let mut dbd = conf.connect_dbd().await.map_err(dbd_error)?;
    let clusters = dbd
        .list_clusters(ListClustersRequest::default())
        .await
        .map_err(|s| dbd_error(status_text(&s, Asker::Views)))?
        .into_inner()
        .clusters;
    select(&clusters, sel)
}

/// The local cluster's (`ClusterName`) federation and its reachable members, from the dbd;
/// `None` outside a federation.
pub async fn federation(conf: &SlurmConf) -> Result<Option<(String, Vec<Member>)>, MultiError> {
    let Some(local) = conf.cluster_name.clone() else {
        return Ok(None);
    };
    let mut dbd = conf.connect_dbd().await.map_err(dbd_error)?;
    let feds = dbd
        .list_federations(ListFederationsRequest {
            clusters: vec![local.clone()],
            ..Default::default()
        })
        .await
        .map_err(|s| dbd_error(status_text(&s, Asker::Views)))?
        .into_inner()
        .federations;
    Ok(federation_of(&feds, &local))
}

/// Opens a signed client to `m`'s controller.
pub async fn connect(conf: &SlurmConf, m: &Member) -> Result<CtldClient, CliError> {
    conf.connect_ctld_at(&m.host, m.port).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(name: &str, host: &str, port: u32, fed: &str, id: u32) -> Cluster {
        Cluster {
            name: name.into(),
            control_host: host.into(),
            control_port: port,
            federation: fed.into(),
            fed_id: id,
            ..Default::default()
        }
    }

    fn rows() -> Vec<Cluster> {
        vec![
            cluster("c2", "10.0.0.2", 6817, "fed1", 2),
            cluster("c1", "10.0.0.1", 7817, "fed1", 1),
            cluster("down", "", 0, "", 0),
        ]
    }

    #[test]
    fn selections_parse_lists_and_all() {
        assert_eq!(Selection::parse("ALL"), Selection::All);
        assert_eq!(
            Selection::parse("c2, c1,c2,"),
            Selection::Names(vec!["c2".into(), "c1".into()])
        );
    }

    #[test]
    fn names_keep_their_order_and_addresses() {
        let got = select(&rows(), &Selection::parse("c2,c1")).unwrap();
        let names: Vec<_> = got.iter().map(|m| (m.name.as_str(), m.port)).collect();
        assert_eq!(names, vec![("c2", 6817), ("c1", 7817)]);
        assert_eq!(got[1].host, "10.0.0.1");
        let all = select(&rows(), &Selection::All).unwrap();
        let names: Vec<_> = all.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec!["c1", "c2"], "unregistered clusters are skipped");
    }

    #[test]
    fn unknown_and_unregistered_clusters_are_slurms_errors() {
        let e = select(&rows(), &Selection::parse("c1,nope")).unwrap_err();
        assert_eq!(
            e.lines(),
            vec![
                "No cluster 'nope' known by database.".to_string(),
                "'nope' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters.".to_string(),
            ]
        );
        let e = select(&rows(), &Selection::parse("down")).unwrap_err();
        assert_eq!(e.lines().len(), 1);
        assert!(e.lines()[0].starts_with("'down' can't be reached now"));
        assert_eq!(
            select(&[], &Selection::All).unwrap_err().to_string(),
            "No clusters can be reached now. Contact your admin to resolve the problem."
        );
    }

    #[test]
    fn the_local_federation_lists_its_registered_members() {
        let fed = Federation {
            name: "fed1".into(),
            clusters: vec![
                cluster("c3", "", 0, "fed1", 3),
                cluster("c2", "h2", 2, "fed1", 2),
                cluster("c1", "h1", 1, "fed1", 1),
            ],
            ..Default::default()
        };
        let other = Federation {
            name: "fed2".into(),
            clusters: vec![cluster("x", "hx", 9, "fed2", 1)],
            ..Default::default()
        };
        let (name, members) = federation_of(&[other, fed], "c3").unwrap();
        assert_eq!(name, "fed1");
        let names: Vec<_> = members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec!["c1", "c2"]);
        assert!(federation_of(&[], "c1").is_none());
    }
}
