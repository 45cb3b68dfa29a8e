//! Attaching to a running step: the controller names the job's nodes, each node daemon
//! running part of the step opens an `AttachStep` stream (refused unless the caller owns the
//! step or is an admin), whose first message tells where that node's tasks sit; the output
//! then streams until the step's last message.

use sluice_vocab::JobState;
use sluice_wire::client::{NodedClient, connect_lazy};
use sluice_wire::proto::{
    AttachStepRequest, AttachedStep, ListJobsRequest, ListNodesRequest, StepOutput,
};
use tonic::{Code, Streaming};

use crate::rpc_error::{Asker, status_text};
use crate::slurm_conf::SlurmConf;

/// One node's part of the attached step.
pub struct Attached {
    /// The node's name.
    pub node: String,
    /// Its client (for the step's stdin).
    pub client: NodedClient,
    /// Where its tasks sit in the step.
    pub layout: AttachedStep,
    /// The rest of its output stream.
    pub stream: Streaming<StepOutput>,
}

/// How long a node of the step's list that has no tasks of it yet is asked again (srun is
/// still launching there).
const LAUNCH_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Attaches to every node running part of `job.step`; `Err` is the error text (without the
/// `sattach: error: ` prefix).
pub async fn attach(conf: &SlurmConf, job: u32, step: u32) -> Result<Vec<Attached>, String> {
    let step_name = format!("StepId={job}.{step}");
    let mut ctld = conf.connect_ctld().await.map_err(|e| e.to_string())?;
    let jobs = ctld
        .list_jobs(ListJobsRequest {
            job_ids: vec![job],
            include_finished: true,
            ..Default::default()
        })
        .await
        .map_err(|s| status_text(&s, Asker::Jobs))?
        .into_inner()
        .jobs;
    let Some(info) = jobs.into_iter().find(|j| j.job_id == job) else {
        return Err(format!("Job {job} not found"));
    };
    if JobState::from_stored(info.state) != Some(JobState::Running) {
        return Err(format!("Job {job} is not running"));
    }
    let names = sluice_vocab::hostlist::expand(&info.node_list).unwrap_or_default();
    let nodes = ctld
        .list_nodes(ListNodesRequest { names })
        .await
        .map_err(|s| status_text(&s, Asker::Jobs))?
        .into_inner()
        .nodes;
    let signer = conf.signer().map_err(|e| e.to_string())?;
    let mut attached = Vec::new();
    let mut unanswered = Vec::new();
    for node in nodes {
        match attach_node(&node, &signer, job, step, &step_name).await? {
            Some(part) => attached.push(part),
            None => unanswered.push(node),
        }
    }
    if attached.is_empty() {
        return Err(format!("{step_name} is not running"));
    }
    // srun launches a step on its nodes at once, but not at the same instant: a node of the
    // step's own list that has no tasks yet is asked again for a moment, so that the layout
    // and the streams cover the whole step (a node outside the step's list has none to give).
    let step_nodes =
        sluice_vocab::hostlist::expand(&attached[0].layout.node_list).unwrap_or_default();
    unanswered.retain(|n| step_nodes.contains(&n.name));
    let deadline = tokio::time::Instant::now() + LAUNCH_GRACE;
    while !unanswered.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let mut still = Vec::new();
        for node in unanswered {
            match attach_node(&node, &signer, job, step, &step_name).await? {
                Some(part) => attached.push(part),
                None => still.push(node),
            }
        }
        unanswered = still;
    }
    attached.sort_by_key(|a| a.layout.node_index);
    Ok(attached)
}

/// `--layout`: the step's tasks per node, as Slurm's sattach prints them: every node of the
/// step from the layout srun gave the nodes, also those whose tasks have ended; from the nodes
/// that answered when their daemons were not given it.
pub fn layout_text<'a>(parts: impl IntoIterator<Item = (&'a str, &'a AttachedStep)>) -> String {
    let parts: Vec<(&str, &AttachedStep)> = parts.into_iter().collect();
    let Some(&(_, all)) = parts.first() else {
        return String::new();
    };
    let names = sluice_vocab::hostlist::expand(&all.node_list).unwrap_or_default();
    let mut text = format!(
        "Job step layout:\n\t{} tasks, {} nodes ({})\n\n",
        all.ntasks,
        names.len(),
        all.node_list
    );
    let line = |index: u32, node: &str, ranks: &[u32]| {
        let tasks: String = ranks.iter().map(|t| format!("{t} ")).collect();
        format!(
            "\tNode {index} ({node}), {} task(s): {tasks}\n",
            ranks.len()
        )
    };
    if all.step_layout.is_empty() {
        for (node, layout) in parts {
            text.push_str(&line(layout.node_index, node, &ranks(layout)));
        }
        return text;
    }
    for node in &all.step_layout {
        let name = usize::try_from(node.node)
            .ok()
            .and_then(|i| names.get(i))
            .map_or("?", String::as_str);
        let ranks: Vec<u32> = if node.ranks.is_empty() {
            (node.first..node.first.saturating_add(node.count)).collect()
        } else {
            node.ranks.clone()
        };
        text.push_str(&line(node.node, name, &ranks));
    }
    text
}

/// The global ranks of the tasks one node runs: listed by the node when a cyclic, plane or
/// arbitrary distribution made them other than consecutive from the node's first task.
pub fn ranks(layout: &AttachedStep) -> Vec<u32> {
    if layout.task_ranks.is_empty() {
        (layout.first_task..layout.first_task + layout.tasks_here).collect()
    } else {
        layout.task_ranks.clone()
    }
}

/// Attaches to `node`'s part of `job.step`: `None` when the node runs none of its tasks (not
/// one of its nodes, not launched there yet, or already ended there).
async fn attach_node(
    node: &sluice_wire::proto::NodeInfo,
    signer: &sluice_wire::auth::Signer,
    job: u32,
    step: u32,
    step_name: &str,
) -> Result<Option<Attached>, String> {
    let host = if node.addr.is_empty() {
        &node.name
    } else {
        &node.addr
    };
    let port = u16::try_from(node.port).unwrap_or(0);
    let channel =
        connect_lazy(host, port, signer.clone()).map_err(|e| format!("node {}: {e}", node.name))?;
    let mut client = NodedClient::new(channel);
    let req = AttachStepRequest {
        job_id: job,
        step_id: step,
    };
    let mut stream = match client.attach_step(req).await {
        Ok(resp) => resp.into_inner(),
        Err(s) if s.code() == Code::NotFound => return Ok(None),
        Err(s) if s.code() == Code::PermissionDenied => {
            return Err(format!(
                "Unable to attach to {step_name}: Access/permission denied"
            ));
        }
        Err(s) => return Err(format!("node {}: {}", node.name, s.message())),
    };
    let layout = match stream.message().await {
        Ok(Some(StepOutput {
            attached: Some(layout),
            ..
        })) => layout,
        // The step ended between the two messages.
        Ok(_) => return Ok(None),
        Err(s) => return Err(format!("node {}: {}", node.name, s.message())),
    };
    Ok(Some(Attached {
        node: node.name.clone(),
        client,
        layout,
        stream,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_ranks_are_its_list_or_consecutive_from_its_first() {
        let block = AttachedStep {
            first_task: 2,
            tasks_here: 3,
            ..Default::default()
        };
        assert_eq!(ranks(&block), [2, 3, 4]);
        let cyclic = AttachedStep {
            first_task: 1,
            tasks_here: 2,
            task_ranks: vec![1, 3],
            ..Default::default()
        };
        assert_eq!(ranks(&cyclic), [1, 3]);
    }

    #[test]
    fn the_layout_lists_every_node_of_the_step_also_those_done() {
        use sluice_wire::proto::StepNodeTasks;
        let layout = AttachedStep {
            node_list: "n[1-3]".into(),
            node_index: 0,
            ntasks: 5,
            first_task: 0,
            tasks_here: 2,
            step_layout: vec![
                StepNodeTasks {
                    node: 0,
                    first: 0,
                    count: 2,
                    ranks: Vec::new(),
                },
                StepNodeTasks {
                    node: 1,
                    first: 1,
                    count: 2,
                    ranks: vec![1, 3],
                },
                StepNodeTasks {
                    node: 2,
                    first: 4,
                    count: 1,
                    ranks: Vec::new(),
                },
            ],
            ..Default::default()
        };
        // Only n1 answered: the others' tasks have ended.
        assert_eq!(
            layout_text([("n1", &layout)]),
            "Job step layout:\n\t5 tasks, 3 nodes (n[1-3])\n\n\
             \tNode 0 (n1), 2 task(s): 0 1 \n\
             \tNode 1 (n2), 2 task(s): 1 3 \n\
             \tNode 2 (n3), 1 task(s): 4 \n"
        );
        // From a node daemon that was not given the layout: the nodes that answered.
        let old = AttachedStep {
            step_layout: Vec::new(),
            ..layout
        };
        assert_eq!(
            layout_text([("n1", &old)]),
            "Job step layout:\n\t5 tasks, 3 nodes (n[1-3])\n\n\tNode 0 (n1), 2 task(s): 0 1 \n"
        );
    }
}
