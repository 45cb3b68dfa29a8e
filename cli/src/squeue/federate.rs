//! squeue's federated views: the jobs of every member merged into one list, as Slurm's
//! `_load_fed_jobs` merges them. Without `--sibling` each federated job is shown once: the
//! origin's copy when it holds a live one, else the copy that runs (or the first pending one);
//! the origin's revoked tracker of a job that lives elsewhere is hidden. Non-federated jobs
//! are shown only from the local cluster.

use std::collections::HashSet;

use sluice_vocab::JobState;
use sluice_wire::proto::JobInfo;

/// Whether `j` is the origin's tracker of a job that lives elsewhere: revoked, or (once the
/// run elsewhere ended and the tracker took its final state) not among the active siblings.
fn tracker_only(j: &JobInfo) -> bool {
    j.cluster == j.fed_origin
        && (j.state == JobState::Revoked.stored()
            || (!j.fed_active.is_empty() && !j.fed_active.contains(&j.cluster)))
}

/// Merges the jobs each cluster returned (`per_cluster` in member order); `local` is the
/// cluster the command runs on; `siblings` keeps every copy (`--sibling`).
pub fn merge(per_cluster: Vec<Vec<JobInfo>>, local: &str, siblings: bool) -> Vec<JobInfo> {
    let all: Vec<JobInfo> = per_cluster
        .into_iter()
        .flatten()
        .filter(|j| !j.fed_origin.is_empty() || j.cluster == local)
        .collect();
    if siblings {
        return all;
    }
    // A job id with a copy that is not a tracker: its tracker is hidden.
    let live: HashSet<u32> = all
        .iter()
        .filter(|j| !tracker_only(j))
        .map(|j| j.job_id)
        .collect();
    let mut kept: Vec<JobInfo> = all
        .into_iter()
        .filter(|j| !(tracker_only(j) && live.contains(&j.job_id)))
        .collect();
    // Origin copies first, then running (or ended) copies before pending ones; the first copy
    // of each id wins.
    kept.sort_by_key(|j| {
        let origin = !j.fed_origin.is_empty() && j.cluster == j.fed_origin;
        let pending = j.state == JobState::Pending.stored();
        (!origin, pending)
    });
    let mut seen = HashSet::new();
    kept.retain(|j| seen.insert(j.job_id));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(id: u32, cluster: &str, origin: &str, state: JobState) -> JobInfo {
        JobInfo {
            job_id: id,
            cluster: cluster.into(),
            fed_origin: origin.into(),
            state: state.stored(),
            ..Default::default()
        }
    }

    fn shown(jobs: &[JobInfo]) -> Vec<(u32, String, u32)> {
        let mut v: Vec<_> = jobs
            .iter()
            .map(|j| (j.job_id, j.cluster.clone(), j.state))
            .collect();
        v.sort();
        v
    }

    const J1: u32 = (1 << 26) | 1;
    const J2: u32 = (1 << 26) | 2;
    const J3: u32 = (2 << 26) | 1;

    fn fixture() -> Vec<Vec<JobInfo>> {
        use JobState::*;
        vec![
            // c1: origin of J1 (pending everywhere) and J2 (running on c2: tracker); a local
            // non-federated job 5.
            vec![
                copy(J1, "c1", "c1", Pending),
                copy(J2, "c1", "c1", Revoked),
                copy(5, "c1", "", Running),
            ],
            // c2: sibling copies of J1 (pending) and J2 (running), a non-federated job 7.
            vec![
                copy(J1, "c2", "c1", Pending),
                copy(J2, "c2", "c1", Running),
                copy(7, "c2", "", Pending),
            ],
            // c3: J3 from origin c2 (down here, not listed) pending on c3 only.
            vec![copy(J3, "c3", "c2", Pending)],
        ]
    }

    #[test]
    fn one_line_per_job_from_the_origin_or_the_running_cluster() {
        let got = merge(fixture(), "c1", false);
        let r = JobState::Running.stored();
        let pd = JobState::Pending.stored();
        assert_eq!(
            shown(&got),
            vec![
                (5, "c1".into(), r),
                (J1, "c1".into(), pd),
                (J2, "c2".into(), r),
                (J3, "c3".into(), pd),
            ]
        );
    }

    #[test]
    fn sibling_view_keeps_every_copy_but_only_local_plain_jobs() {
        let got = merge(fixture(), "c1", true);
        assert_eq!(got.len(), 6, "{:?}", shown(&got));
        assert!(got.iter().all(|j| j.job_id != 7));
        assert_eq!(got.iter().filter(|j| j.job_id == J1).count(), 2);
    }

    #[test]
    fn an_ended_tracker_gives_way_to_the_copy_that_ran() {
        use JobState::*;
        let mut tracker = copy(J2, "c1", "c1", Completed);
        tracker.fed_active = vec!["c2".into()];
        let ran = copy(J2, "c2", "c1", Completed);
        let got = merge(vec![vec![tracker], vec![ran]], "c1", false);
        assert_eq!(shown(&got), vec![(J2, "c2".into(), Completed.stored())]);
    }

    #[test]
    fn a_lone_tracker_is_still_shown() {
        let got = merge(
            vec![vec![copy(J2, "c1", "c1", JobState::Revoked)]],
            "c1",
            false,
        );
        assert_eq!(got.len(), 1);
    }
}
