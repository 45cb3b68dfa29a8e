//! Where sstat's numbers come from: the controller names a job's nodes, each node daemon tells
//! what the job's steps running there used so far (`StepStats`), and the nodes' parts of a step
//! are merged into one step line as sacct shows a recorded step.

use std::collections::BTreeMap;

use sluice_vocab::JobState;
use sluice_vocab::jobacct::StepUsage;
use sluice_wire::client::{NodedClient, connect_lazy};
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{
    JobInfo, JobRow, ListJobsRequest, ListNodesRequest, LiveStep, StepRecord, StepStatsRequest,
};

use crate::acct::jobsel::{JobSel, step_suffix};
use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::SlurmConf;

/// What the controller and the node daemons know of one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// No such job (or it is long gone).
    Unknown,
    /// Known, but not running.
    NotRunning,
    /// Running: the job and its steps measured so far, in step order.
    Running(Box<JobRow>, Vec<LiveRecord>),
}

/// Asks about job `id`; `Err` is a failure to reach the controller, as Slurm words it, and
/// `warnings` collects node daemons that could not answer.
pub async fn job(conf: &SlurmConf, id: u32, warnings: &mut Vec<String>) -> Result<Found, String> {
    let mut ctld = conf.connect_ctld().await.map_err(|e| e.to_string())?;
    let req = ListJobsRequest {
        job_ids: vec![id],
        include_finished: true,
        ..Default::default()
    };
    let jobs = ctld
        .list_jobs(req)
        .await
        .map_err(|s| status_text(&s, Asker::Jobs))?
        .into_inner()
        .jobs;
    let Some(info) = jobs.into_iter().find(|j| j.job_id == id) else {
        return Ok(Found::Unknown);
    };
    if JobState::from_stored(info.state) != Some(JobState::Running) {
        return Ok(Found::NotRunning);
    }
    let nodes = sluice_vocab::hostlist::expand(&info.node_list).unwrap_or_default();
    let listed = ctld
        .list_nodes(ListNodesRequest { names: nodes })
        .await
        .map_err(|s| status_text(&s, Asker::Jobs))?
        .into_inner()
        .nodes;
    let signer = conf.signer().map_err(|e| e.to_string())?;
    let mut live = Vec::new();
    for node in listed {
        let host = if node.addr.is_empty() {
            &node.name
        } else {
            &node.addr
        };
        let port = u16::try_from(node.port).unwrap_or(0);
        let asked = match connect_lazy(host, port, signer.clone()) {
            Ok(ch) => NodedClient::new(ch)
                .step_stats(StepStatsRequest { job_id: id })
                .await
                .map(|r| r.into_inner().steps)
                .map_err(|s| s.message().to_string()),
            Err(e) => Err(e.to_string()),
        };
        match asked {
            Ok(steps) => live.extend(steps),
            Err(why) => warnings.push(format!("sstat: error: node {}: {why}", node.name)),
        }
    }
    Ok(Found::Running(Box::new(row(&info)), merge(id, &live)))
}

fn row(info: &JobInfo) -> JobRow {
    JobRow {
        job_id: info.job_id,
        array_job_id: info.array_job_id,
        array_task_id: info.array_task_id,
        name: info.name.clone(),
        uid: info.uid,
        ..Default::default()
    }
}

/// A running step as sstat shows it: a step record as sacct's fields read it, and its processes.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRecord {
    /// The step with its usage so far.
    pub record: StepRecord,
    /// Its processes, `pid,pid,...` over its nodes.
    pub pids: String,
}

/// The nodes' parts of each step merged into one record per step, in step order.
pub fn merge(job: u32, live: &[LiveStep]) -> Vec<LiveRecord> {
    let mut steps: BTreeMap<i32, (String, StepUsage, Vec<u32>)> = BTreeMap::new();
    for part in live {
        let Some(usage) = part.usage.as_ref().and_then(StepUsage::from_proto) else {
            continue;
        };
        match steps.get_mut(&part.step_id) {
            Some((_, u, pids)) => {
                u.merge(&usage);
                pids.extend(&part.pids);
            }
            None => {
                let first = (part.node_list.clone(), usage, part.pids.clone());
                steps.insert(part.step_id, first);
            }
        }
    }
    steps
        .into_iter()
        .map(|(step_id, (node_list, usage, pids))| LiveRecord {
            record: record(job, step_id, node_list, &usage),
            pids: pids
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
        })
        .collect()
}

fn record(job: u32, step_id: i32, node_list: String, usage: &StepUsage) -> StepRecord {
    StepRecord {
        job_id: job,
        step_id,
        node_count: u32::try_from(
            sluice_vocab::hostlist::expand(&node_list).map_or(0, |n| n.len()),
        )
        .unwrap_or(0),
        node_list,
        ntasks: usage.tasks,
        usage: Some(usage.to_proto()),
        ..Default::default()
    }
}

/// The steps `sel` shows of a running job's `steps`: the one it names, every one with `-a`,
/// else the lowest numbered srun step (none: nothing, as Slurm shows a job with only its batch
/// script). `Err` is Slurm's error text.
pub fn select<'a>(
    sel: &JobSel,
    all: bool,
    steps: &'a [LiveRecord],
) -> Result<Vec<&'a LiveRecord>, String> {
    if let Some(want) = sel.step {
        return match steps.iter().find(|s| s.record.step_id == want) {
            Some(s) => Ok(vec![s]),
            None => Err(format!(
                "sstat: error: StepId={}.{} not found running.",
                sel.id,
                step_suffix(want)
            )),
        };
    }
    if steps.is_empty() {
        return Err(no_steps(sel.id));
    }
    if all {
        return Ok(steps.iter().collect());
    }
    Ok(steps
        .iter()
        .find(|s| s.record.step_id >= 0)
        .into_iter()
        .collect())
}

/// Slurm's text for a known job with no step running.
pub fn no_steps(id: u32) -> String {
    format!("sstat: error: No steps running for job {id}")
}

/// Slurm's text for a job the controller does not know.
pub fn unknown(id: u32) -> String {
    format!("sstat: error: couldn't get steps for job {id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(step_id: i32, node_list: &str, user_cpu_ms: u64) -> LiveStep {
        let task = sluice_vocab::jobacct::TaskUsage {
            user_ms: user_cpu_ms,
            ..Default::default()
        };
        LiveStep {
            step_id,
            node_list: node_list.into(),
            usage: StepUsage::from_tasks(&[task]).map(|u| u.to_proto()),
            pids: vec![u32::try_from(user_cpu_ms).unwrap()],
        }
    }

    fn sel(step: Option<i32>) -> JobSel {
        JobSel {
            id: 7,
            task: None,
            het: None,
            step,
        }
    }

    #[test]
    fn nodes_parts_of_a_step_are_merged_in_step_order() {
        let steps = merge(
            7,
            &[
                live(1, "n[1-2]", 5),
                live(-4, "n1", 1),
                live(1, "n[1-2]", 7),
            ],
        );
        let ids: Vec<(i32, u32, u32)> = steps
            .iter()
            .map(|s| (s.record.step_id, s.record.ntasks, s.record.node_count))
            .collect();
        assert_eq!(ids, vec![(-4, 1, 1), (1, 2, 2)]);
        let u = StepUsage::from_proto(steps[1].record.usage.as_ref().unwrap()).unwrap();
        assert_eq!(steps[1].pids, "5,7");
        assert_eq!(u.user_cpu_ms, 12);
    }

    #[test]
    fn steps_are_chosen_as_slurm_does() {
        let steps = merge(7, &[live(-4, "n1", 1), live(2, "n1", 1), live(0, "n1", 1)]);
        let ids = |v: Vec<&LiveRecord>| v.iter().map(|s| s.record.step_id).collect::<Vec<_>>();
        assert_eq!(ids(select(&sel(None), false, &steps).unwrap()), vec![0]);
        assert_eq!(
            ids(select(&sel(None), true, &steps).unwrap()),
            vec![-4, 0, 2]
        );
        assert_eq!(
            ids(select(&sel(Some(-4)), false, &steps).unwrap()),
            vec![-4]
        );
        assert_eq!(
            select(&sel(Some(9)), false, &steps).unwrap_err(),
            "sstat: error: StepId=7.9 not found running."
        );
        let batch_only = &steps[..1];
        assert!(select(&sel(None), false, batch_only).unwrap().is_empty());
        assert_eq!(
            select(&sel(None), true, &[]).unwrap_err(),
            "sstat: error: No steps running for job 7"
        );
    }
}
