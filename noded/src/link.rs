//! The node daemon's side of the controller protocol: register, heartbeat, report exits.
//!
//! Registration is retried until the controller answers. A heartbeat the controller refuses
//! (not one it could not answer in time), or a controller whose `Ping` shows another start time
//! than at registration, sends the node back to registering: that is how a restarted controller learns the node's running jobs again. The
//! node kills nothing on re-registering but what the reply lists in `kill_jobs`. Exit reports are
//! sent oldest first and dropped only once acknowledged; each names the node, the job, the run
//! (the launch's `restart_count`) and the step, so a controller that has requeued the job since
//! drops it.

use sluice_wire::jobacct::StepUsageWire;
use std::sync::Arc;
use std::time::Duration;

use sluice_wire::client::CtldClient;
use sluice_wire::proto::{
    HeartbeatRequest, JobExitedRequest, NodeRun, NodeScriptFailure, PingRequest,
    RegisterNodeRequest,
};
use tonic::Code;

use crate::node::Node;
use crate::outbox::{ExitReport, NodeScript};
use crate::resources;
use sluice_vocab::jobacct::StepUsage;

/// How long one RPC to the controller may take.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);
/// The step id of a batch script in reports (`123.batch` in sacct).
const BATCH_STEP: i32 = -4;
/// The step id of a report about the job as a whole on this node (a failed prolog or epilog
/// on a node running only its steps).
const WHOLE_JOB: i32 = -6;
/// Heartbeat interval when the controller gives none.
const DEFAULT_HEARTBEAT: u32 = 30;
/// First and longest pause between retries while the controller does not answer.
const RETRY_MIN: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Doubling pauses between retries, capped.
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Self(RETRY_MIN)
    }
    fn reset(&mut self) {
        self.0 = RETRY_MIN;
    }
    fn next(&mut self) -> Duration {
        let d = self.0;
        self.0 = (self.0 * 2).min(RETRY_MAX);
        d
    }
}

fn request<T>(msg: T) -> tonic::Request<T> {
    let mut req = tonic::Request::new(msg);
    req.set_timeout(RPC_TIMEOUT);
    req
}

/// Registers and heartbeats forever.
pub async fn keep_registered(node: Arc<Node>, mut client: CtldClient) {
    let mut backoff = Backoff::new();
    let boot_time = resources::boot_time();
    // Only this daemon's first registration says the node (re)started.
    let mut again = false;
    loop {
        let c = &node.config;
        let req = RegisterNodeRequest {
            name: c.node_name.clone(),
            cpus: c.cpus,
            real_memory_mb: c.real_memory_mb,
            tmp_disk_mb: c.tmp_disk_mb,
            boot_time,
            running_jobs: node.reported_jobs(),
            addr: c.addr.clone(),
            port: u32::from(node.port),
            pid: std::process::id(),
            running_runs: wire_runs(&node),
            again,
        };
        // Asked before registering, so a restart right after is noticed at the next beat.
        let started = ctld_started(&mut client).await;
        let reply = match client.register_node(request(req)).await {
            Ok(reply) => reply.into_inner(),
            Err(status) => {
                tracing::debug!("registration failed: {}", status.message());
                tokio::time::sleep(backoff.next()).await;
                continue;
            }
        };
        backoff.reset();
        again = true;
        tracing::info!(cluster = %reply.cluster, "registered with the controller");
        // A controller of the previous version names jobs only.
        for job in &reply.kill_jobs {
            if node.kill_job(*job) {
                tracing::warn!(job, "killed: the controller does not know this job");
            }
        }
        for r in &reply.kill_runs {
            if node.jobs.kill_run(r.job_id, r.restart_count, &r.steps) {
                tracing::warn!(
                    job = r.job_id,
                    run = r.restart_count,
                    steps = ?r.steps,
                    "killed: the controller does not hold this run here"
                );
            }
            if r.steps.is_empty() {
                // Ended while this daemon was away: nobody will ask for its adopted steps.
                crate::step_adopt::forget_job(&node, r.job_id, Some(r.restart_count));
            }
            // The run is over here: its epilog is due (once its processes are gone).
            if r.steps.is_empty() && node.here.run_of(r.job_id) == Some(r.restart_count) {
                crate::node_scripts::on_terminate(&node, r.job_id);
            }
        }
        // A controller that is back may also take the exit reports that waited for it.
        node.outbox.kick();
        let secs = match reply.heartbeat_secs {
            0 => DEFAULT_HEARTBEAT,
            s => s,
        };
        let interval = Duration::from_secs(u64::from(secs));
        loop {
            tokio::select! {
                () = tokio::time::sleep(interval) => {}
                () = node.register_now.notified() => {
                    tracing::info!("registering again: the controller asks");
                    break;
                }
            }
            let beat = HeartbeatRequest {
                name: node.config.node_name.clone(),
                running_jobs: node.reported_jobs(),
                running_runs: wire_runs(&node),
            };
            if let Err(status) = client.heartbeat(request(beat)).await {
                // A controller away or slow for a moment is asked again at the next beat (a
                // restart shows in its start time); registering again is for a controller that
                // asks for it, since a registration may bring a node an administrator set
                // DOWN back into service (ReturnToService=2).
                if transient(&status) {
                    tracing::debug!("heartbeat failed, trying again: {}", status.message());
                    continue;
                }
                tracing::warn!("heartbeat refused, registering again: {}", status.message());
                break;
            }
            if let (Some(before), Some(now)) = (started, ctld_started(&mut client).await)
                && before != now
            {
                tracing::info!("the controller restarted, registering again");
                break;
            }
        }
    }
}

/// The runs `node` holds, for the controller.
fn wire_runs(node: &Node) -> Vec<NodeRun> {
    node.reported_runs()
        .into_iter()
        .map(|r| NodeRun {
            job_id: r.job,
            restart_count: r.run,
            batch: r.batch,
            steps: r.steps,
        })
        .collect()
}

/// Whether a failed heartbeat says nothing about the controller's view of this node: it could
/// not be reached or did not answer in time.
fn transient(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::ResourceExhausted
    )
}

/// When the controller started (its `Ping`), to notice a restart that no heartbeat missed.
async fn ctld_started(client: &mut CtldClient) -> Option<i64> {
    let reply = client.ping(request(PingRequest {})).await.ok()?;
    Some(reply.into_inner().started).filter(|s| *s != 0)
}

/// Sends queued exit reports forever.
pub async fn report_exits(node: Arc<Node>, mut client: CtldClient) {
    let mut backoff = Backoff::new();
    loop {
        let mut failed = false;
        for (key, report) in node.outbox.pending() {
            match send(&node, &mut client, &report).await {
                Sent::Acknowledged => node.outbox.ack(&key).await,
                Sent::Refused(status) => {
                    tracing::error!(
                        job = report.job_id,
                        "controller refused the exit report, dropped: {status}"
                    );
                    node.outbox.ack(&key).await;
                }
                Sent::Failed(status) => {
                    tracing::debug!(
                        job = report.job_id,
                        "exit report not delivered: {}",
                        status.message()
                    );
                    failed = true;
                    break;
                }
            }
        }
        if failed {
            tokio::select! {
                _ = tokio::time::sleep(backoff.next()) => {}
                _ = node.outbox.queued() => {}
            }
        } else {
            backoff.reset();
            node.outbox.queued().await;
        }
    }
}

enum Sent {
    Acknowledged,
    /// The controller answered that it can never take this report.
    Refused(tonic::Status),
    /// Not delivered now; retried.
    Failed(tonic::Status),
}

async fn send(node: &Node, client: &mut CtldClient, r: &ExitReport) -> Sent {
    let req = JobExitedRequest {
        node: node.config.node_name.clone(),
        job_id: r.job_id,
        restart_count: r.restart,
        step_id: if r.whole_job { WHOLE_JOB } else { BATCH_STEP },
        prolog_done: r.prolog_done,
        exit_code: r.exit_code,
        signal: r.signal,
        at: r.at,
        usage: r.usage.as_ref().map(StepUsage::to_proto),
        failed: match r.failed {
            None => NodeScriptFailure::None,
            Some(NodeScript::Prolog) => NodeScriptFailure::Prolog,
            Some(NodeScript::Epilog) => NodeScriptFailure::Epilog,
            Some(NodeScript::KillTask) => NodeScriptFailure::KillTask,
        } as i32,
    };
    match client.job_exited(request(req)).await {
        Ok(_) => Sent::Acknowledged,
        Err(s) if matches!(s.code(), Code::InvalidArgument | Code::NotFound) => Sent::Refused(s),
        Err(s) => Sent::Failed(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_its_cap_and_resets() {
        let mut b = Backoff::new();
        assert_eq!(b.next(), RETRY_MIN);
        assert_eq!(b.next(), RETRY_MIN * 2);
        for _ in 0..10 {
            b.next();
        }
        assert_eq!(b.next(), RETRY_MAX);
        b.reset();
        assert_eq!(b.next(), RETRY_MIN);
    }
}
