//! `sbatch -M a,b` and `srun -M a,b`: which cluster gets the job. As Slurm's `slurmdb_get_first_avail_cluster`,
//! one listed cluster is used as is; with several, each controller is asked when the job would
//! start (a `--test-only` request) and the job goes to the soonest; ties go to the local
//! cluster, then to the first listed. The `-M` list still travels with the job, so a
//! federation offers siblings only to those clusters.

use sluice_wire::proto::SubmitJobRequest;

use crate::multicluster::{self, Member, Selection};
use crate::slurm_conf::SlurmConf;

/// `-M` named clusters of which none can take the job: one error line each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct NoCluster(pub Vec<String>);

/// Slurm's text when no listed cluster could run the job.
pub const NO_CLUSTER: &str = "Can't run on any of the clusters given";

/// One cluster's answer to the will-run question: its position in the `-M` list and the
/// expected start (unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WillRun {
    /// The cluster's name.
    pub cluster: String,
    /// Its position in the `-M` list.
    pub order: usize,
    /// When the job would start there.
    pub start: i64,
}

/// The index in `answers` of the cluster to submit to: earliest start, then the local cluster,
/// then the first listed. `None` when nobody can run the job.
pub fn soonest(answers: &[WillRun], local: Option<&str>) -> Option<usize> {
    answers
        .iter()
        .enumerate()
        .min_by_key(|(_, w)| (w.start, Some(w.cluster.as_str()) != local, w.order))
        .map(|(i, _)| i)
}

fn unreachable(list: &str, e: &multicluster::MultiError) -> NoCluster {
    let mut lines = e.lines();
    if matches!(e, multicluster::MultiError::Dbd { .. }) {
        return NoCluster(lines);
    }
    if !lines.iter().any(|l| l.contains("can't be reached now")) {
        lines.push(
            multicluster::MultiError::Unreachable {
                name: list.to_string(),
            }
            .to_string(),
        );
    }
    NoCluster(lines)
}

/// The controller to submit `request` to when `-M` was given (`None` without `-M`).
pub async fn pick(
    conf: &SlurmConf,
    request: &SubmitJobRequest,
) -> Result<Option<Member>, NoCluster> {
    if request.clusters.is_empty() {
        return Ok(None);
    }
    let list = request.clusters.join(",");
    let members = multicluster::resolve(conf, &Selection::parse(&list))
        .await
        .map_err(|e| unreachable(&list, &e))?;
    if members.len() == 1 {
        return Ok(members.into_iter().next());
    }
    let probe = SubmitJobRequest {
        test_only: true,
        ..request.clone()
    };
    let mut answers = Vec::new();
    for (order, m) in members.iter().enumerate() {
        let Ok(mut client) = multicluster::connect(conf, m).await else {
            continue;
        };
        if let Ok(reply) = client.submit(probe.clone()).await {
            answers.push(WillRun {
                cluster: m.name.clone(),
                order,
                start: reply.into_inner().test_start,
            });
        }
    }
    let Some(best) = soonest(&answers, conf.cluster_name.as_deref()) else {
        return Err(NoCluster(vec![
            NO_CLUSTER.to_string(),
            multicluster::MultiError::Unreachable { name: list }.to_string(),
        ]));
    };
    let name = &answers[best].cluster;
    Ok(members.into_iter().find(|m| &m.name == name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cluster: &str, order: usize, start: i64) -> WillRun {
        WillRun {
            cluster: cluster.into(),
            order,
            start,
        }
    }

    #[test]
    fn the_earliest_start_wins() {
        let a = [w("c1", 0, 200), w("c2", 1, 100), w("c3", 2, 300)];
        assert_eq!(soonest(&a, Some("c1")), Some(1));
    }

    #[test]
    fn ties_go_to_the_local_cluster_then_the_first_listed() {
        let a = [w("c2", 0, 100), w("c3", 1, 100), w("c1", 2, 100)];
        assert_eq!(soonest(&a, Some("c1")), Some(2));
        assert_eq!(soonest(&a, Some("other")), Some(0));
        assert_eq!(soonest(&a, None), Some(0));
        assert_eq!(soonest(&[], None), None);
    }
}
