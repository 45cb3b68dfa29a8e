//! Wire ↔ domain conversions of the `AccountingRecords` service.

use sluice_vocab::jobacct::StepUsage;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto::{self, acct_record::Kind};
use tonic::Status;

use crate::store::{
    ClusterCapacity, JobEnded, JobQuery, JobResized, JobRun, JobStarted, JobSubmitted,
    JobSuspended, NodeEvent, Record, RecordKind, Step, TextField,
};

/// The records of a batch. A record without a kind or with a seq that cannot be stored
/// (above `i64::MAX`; controllers number from a SQLite rowid) is refused, so the controller
/// hears of the problem instead of losing the record.
pub fn records(batch: Vec<proto::AcctRecord>) -> Result<Vec<Record>, Status> {
    batch.into_iter().map(record).collect()
}

fn record(r: proto::AcctRecord) -> Result<Record, Status> {
    if i64::try_from(r.seq).is_err() {
        return Err(Status::invalid_argument(format!(
            "accounting record seq {} is out of range",
            r.seq
        )));
    }
    let kind = match r.kind {
        Some(Kind::JobSubmitted(j)) => RecordKind::JobSubmitted(Box::new(submitted(j))),
        Some(Kind::JobStarted(j)) => RecordKind::JobStarted(JobStarted {
            job_id: j.job_id,
            run: j.run,
            start: j.start,
            node_list: j.node_list,
            node_count: j.node_count,
            cpus: j.cpus,
            mem_mb: j.mem_mb,
            eligible: j.eligible,
        }),
        Some(Kind::JobEnded(j)) => RecordKind::JobEnded(JobEnded {
            job_id: j.job_id,
            run: j.run,
            end: j.end,
            state: j.state,
            exit_code: j.exit_code,
            signal: j.signal,
            reason: j.reason,
            requester_uid: j.requester_uid,
        }),
        Some(Kind::JobSuspended(j)) => RecordKind::JobSuspended(JobSuspended {
            job_id: j.job_id,
            run: j.run,
            at: j.at,
            suspended: j.suspended,
        }),
        Some(Kind::JobResized(j)) => RecordKind::JobResized(JobResized {
            job_id: j.job_id,
            run: j.run,
            at: j.at,
            node_list: j.node_list,
            node_count: j.node_count,
            cpus: j.cpus,
            mem_mb: j.mem_mb,
        }),
        Some(Kind::Step(s)) => RecordKind::Step(Box::new(step_from(s))),
        // An empty node name is the cluster's own capacity event (the usage rollups keep it).
        Some(Kind::NodeEvent(e)) if e.node.is_empty() => {
            return Err(Status::invalid_argument(format!(
                "accounting record {} is a node event without a node name",
                r.seq
            )));
        }
        Some(Kind::NodeEvent(e)) => RecordKind::NodeEvent(NodeEvent {
            node: e.node,
            at: e.at,
            kind: e.kind,
            reason: e.reason,
            reason_uid: e.reason_uid,
            cpus: e.cpus,
        }),
        Some(Kind::Capacity(c)) => RecordKind::ClusterCapacity(ClusterCapacity {
            at: c.at,
            cpus: c.cpus,
            mem_mb: c.mem_mb,
            nodes: c.nodes,
        }),
        None => {
            return Err(Status::invalid_argument(format!(
                "accounting record {} has no kind",
                r.seq
            )));
        }
    };
    Ok(Record { seq: r.seq, kind })
}

fn submitted(j: proto::JobSubmittedRecord) -> JobSubmitted {
    JobSubmitted {
        job_id: j.job_id,
        array_job_id: j.array_job_id,
        array_task_id: j.array_task_id,
        name: j.name,
        uid: j.uid,
        gid: j.gid,
        user: j.user,
        account: j.account,
        partition: j.partition,
        submit: j.submit,
        eligible: j.eligible,
        time_limit_min: j.time_limit_min,
        req_nodes: j.req_nodes,
        req_cpus: j.req_cpus,
        req_mem_mb: j.req_mem_mb,
        workdir: j.workdir,
        constraint: j.constraint,
        run: j.run,
        comment: j.comment,
        qos: j.qos,
        wckey: j.wckey,
        het_job_id: j.het_job_id,
        het_offset: j.het_offset,
    }
}

fn step_from(s: proto::StepRecord) -> Step {
    Step {
        job_id: s.job_id,
        run: s.run,
        step_id: s.step_id,
        name: s.name,
        start: s.start,
        end: s.end,
        state: s.state,
        exit_code: s.exit_code,
        signal: s.signal,
        node_list: s.node_list,
        node_count: s.node_count,
        ntasks: s.ntasks,
        cpus: s.cpus,
        // A malformed usage is dropped, not the step.
        usage: s.usage.as_ref().and_then(StepUsage::from_proto),
    }
}

fn step_to(s: Step) -> proto::StepRecord {
    proto::StepRecord {
        job_id: s.job_id,
        run: s.run,
        step_id: s.step_id,
        name: s.name,
        start: s.start,
        end: s.end,
        state: s.state,
        exit_code: s.exit_code,
        signal: s.signal,
        node_list: s.node_list,
        node_count: s.node_count,
        ntasks: s.ntasks,
        cpus: s.cpus,
        usage: s.usage.as_ref().map(StepUsage::to_proto),
    }
}

/// sacct's query; a `nodelist` that is not a hostlist expression is refused.
/// The store's query for sacct's `q`, and whether its uids are sacct's default (the caller).
pub fn job_query(q: proto::JobQuery) -> Result<(JobQuery, bool), Status> {
    let own_by_default = q.own_by_default;
    Ok((query_of(q)?, own_by_default))
}

fn query_of(q: proto::JobQuery) -> Result<JobQuery, Status> {
    let nodes = if q.nodelist.is_empty() {
        Vec::new()
    } else {
        sluice_vocab::hostlist::expand(&q.nodelist)
            .map_err(|e| Status::invalid_argument(e.to_string()))?
    };
    Ok(JobQuery {
        clusters: q.clusters,
        job_ids: q.job_ids,
        uids: q.uids,
        uid_or_accounts: Vec::new(),
        accounts: q.accounts,
        states: q.states,
        names: q.names,
        partitions: q.partitions,
        start: q.start,
        end: q.end,
        duplicates: q.duplicates,
        federation: q.federation,
        no_steps: q.no_steps,
        wckeys: q.wckeys,
        nodes,
        // Other names are of fields this dbd always sends.
        fields: q.fields.map(|f| {
            f.names
                .iter()
                .filter_map(|n| TextField::from_wire(n))
                .collect()
        }),
    })
}

/// One row of sacct's stream.
pub fn job_row(r: JobRun) -> proto::JobRow {
    proto::JobRow {
        cluster: r.cluster,
        job_id: r.job_id,
        array_job_id: r.array_job_id,
        array_task_id: r.array_task_id,
        run: r.run,
        name: r.name,
        uid: r.uid,
        gid: r.gid,
        user: r.user,
        account: r.account,
        partition: r.partition,
        state: r.state,
        exit_code: r.exit_code,
        signal: r.signal,
        submit: r.submit,
        eligible: r.eligible,
        start: r.start,
        end: r.end,
        suspended_secs: r.suspended_secs,
        time_limit_min: r.time_limit_min,
        node_list: r.node_list,
        node_count: r.node_count,
        cpus: r.cpus,
        req_cpus: r.req_cpus,
        req_mem_mb: r.req_mem_mb,
        workdir: r.workdir,
        reason: r.reason,
        comment: r.comment,
        steps: r.steps.into_iter().map(step_to).collect(),
        mem_mb: r.mem_mb,
        requester_uid: r.requester_uid,
        qos: r.qos,
        wckey: r.wckey,
        het_job_id: r.het_job_id,
        het_offset: r.het_offset,
    }
}
