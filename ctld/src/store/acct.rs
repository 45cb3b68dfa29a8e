//! The core's accounting records in their wire form (`AcctRecord` of `AccountingRecords`), as
//! they are written to the outbox and shipped to the dbd.

use crate::conf::TimeLimit;
use crate::core::{AcctRecord, NodeEventKind, SimTime};
use sluice_vocab::jobacct::StepUsage;
use sluice_wire::jobacct::StepUsageWire;
use sluice_wire::proto;
use sluice_wire::proto::acct_record::Kind;

/// `rec` as the wire record numbered `seq`.
pub fn to_proto(rec: &AcctRecord, seq: u64) -> proto::AcctRecord {
    let kind = match rec {
        AcctRecord::JobSubmitted {
            job,
            array,
            run,
            name,
            uid,
            gid,
            partition,
            submit,
            eligible,
            time_limit,
            min_nodes,
            cpus,
            mem_per_node_mb,
            constraint,
            launch,
            het,
        } => Kind::JobSubmitted(proto::JobSubmittedRecord {
            job_id: job.get(),
            array_job_id: array.map_or(0, |a| a.job.get()),
            array_task_id: array.map(|a| a.task),
            name: name.clone(),
            uid: *uid,
            gid: *gid,
            user: launch.user.clone(),
            account: launch.account.clone(),
            partition: partition.clone(),
            submit: secs(*submit),
            eligible: secs(*eligible),
            time_limit_min: match time_limit {
                TimeLimit::Minutes(m) => i64::from(*m),
                TimeLimit::Unlimited => -1,
            },
            req_nodes: *min_nodes,
            req_cpus: *cpus,
            req_mem_mb: *mem_per_node_mb,
            workdir: launch.workdir.clone(),
            constraint: constraint.clone().unwrap_or_default(),
            run: *run,
            comment: launch.comment.clone(),
            qos: launch.qos.clone(),
            wckey: launch.wckey.clone(),
            het_job_id: het.map_or(0, |h| h.leader.get()),
            het_offset: het.map_or(0, |h| h.offset),
        }),
        AcctRecord::JobStarted {
            job,
            run,
            start,
            node_list,
            node_count,
            cpus,
            mem_mb,
        } => Kind::JobStarted(proto::JobStartedRecord {
            job_id: job.get(),
            run: *run,
            start: secs(*start),
            node_list: node_list.clone(),
            node_count: *node_count,
            cpus: *cpus,
            mem_mb: *mem_mb,
            eligible: 0,
        }),
        AcctRecord::JobResized {
            job,
            run,
            at,
            node_list,
            node_count,
            cpus,
            mem_mb,
        } => Kind::JobResized(proto::JobResizedRecord {
            job_id: job.get(),
            run: *run,
            at: secs(*at),
            node_list: node_list.clone(),
            node_count: *node_count,
            cpus: *cpus,
            mem_mb: *mem_mb,
        }),
        AcctRecord::JobSuspended {
            job,
            run,
            at,
            suspended,
        } => Kind::JobSuspended(proto::JobSuspendedRecord {
            job_id: job.get(),
            run: *run,
            at: secs(*at),
            suspended: *suspended,
        }),
        AcctRecord::JobEnded {
            job,
            run,
            end,
            state,
            exit_code,
            signal,
            reason,
            requester_uid,
        } => Kind::JobEnded(proto::JobEndedRecord {
            job_id: job.get(),
            run: *run,
            end: secs(*end),
            state: state.stored(),
            exit_code: *exit_code,
            signal: *signal,
            reason: reason.as_str().to_string(),
            requester_uid: *requester_uid,
        }),
        AcctRecord::Step {
            job,
            run,
            step,
            name,
            start,
            end,
            state,
            exit_code,
            signal,
            node_list,
            node_count,
            ntasks,
            cpus,
            usage,
        } => Kind::Step(proto::StepRecord {
            job_id: job.get(),
            run: *run,
            step_id: *step,
            name: name.clone(),
            start: secs(*start),
            end: end.map_or(0, secs),
            state: state.stored(),
            exit_code: *exit_code,
            signal: *signal,
            node_list: node_list.clone(),
            node_count: *node_count,
            ntasks: *ntasks,
            cpus: *cpus,
            usage: usage.as_deref().map(StepUsage::to_proto),
        }),
        AcctRecord::NodeEvent {
            node,
            at,
            kind,
            reason,
            reason_uid,
            cpus,
        } => Kind::NodeEvent(proto::NodeEventRecord {
            node: node.clone(),
            at: secs(*at),
            kind: match kind {
                NodeEventKind::Down => "down",
                NodeEventKind::Drain => "drain",
                NodeEventKind::Up => "up",
                NodeEventKind::PowerDown => "power_down",
                NodeEventKind::PowerUp => "power_up",
            }
            .to_string(),
            reason: reason.clone().unwrap_or_default(),
            reason_uid: *reason_uid,
            cpus: *cpus,
        }),
        AcctRecord::ClusterCapacity {
            at,
            cpus,
            mem_mb,
            nodes,
        } => Kind::Capacity(proto::ClusterCapacityRecord {
            at: secs(*at),
            cpus: *cpus,
            mem_mb: *mem_mb,
            nodes: *nodes,
        }),
    };
    proto::AcctRecord {
        seq,
        kind: Some(kind),
    }
}

/// Seconds since the epoch on the wire (`NEVER` saturates).
fn secs(t: SimTime) -> i64 {
    i64::try_from(t.secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{JobReason, LaunchSpec};
    use sluice_vocab::{FedJobId, JobState};
    use std::sync::Arc;

    #[test]
    fn submitted_carries_the_launch_fields_and_unlimited_is_minus_one() {
        let launch = Arc::new(LaunchSpec {
            user: "alice".into(),
            account: "physics".into(),
            workdir: "/home/alice".into(),
            wckey: "proj7".into(),
            ..LaunchSpec::default()
        });
        let rec = AcctRecord::JobSubmitted {
            job: FedJobId::from_raw(42).unwrap(),
            array: None,
            het: None,
            run: 2,
            name: "sim".into(),
            uid: 1000,
            gid: 100,
            partition: "debug".into(),
            submit: SimTime::from_secs(10),
            eligible: SimTime::from_secs(20),
            time_limit: TimeLimit::Unlimited,
            min_nodes: 1,
            cpus: 4,
            mem_per_node_mb: 512,
            constraint: None,
            launch,
        };
        let p = to_proto(&rec, 7);
        assert_eq!(p.seq, 7);
        let Some(Kind::JobSubmitted(s)) = p.kind else {
            panic!("wrong kind: {:?}", p.kind);
        };
        assert_eq!(
            (s.job_id, s.run, s.user.as_str(), s.account.as_str()),
            (42, 2, "alice", "physics")
        );
        assert_eq!(
            (s.time_limit_min, s.eligible, s.array_task_id),
            (-1, 20, None)
        );
        assert_eq!(s.workdir, "/home/alice");
        assert_eq!(s.wckey, "proj7");
    }

    #[test]
    fn ended_carries_the_stored_state_and_reason() {
        let rec = AcctRecord::JobEnded {
            job: FedJobId::from_raw(5).unwrap(),
            run: 1,
            end: SimTime::from_secs(99),
            state: JobState::Requeued,
            exit_code: 0,
            signal: 15,
            reason: JobReason::TimeLimit,
            requester_uid: Some(1000),
        };
        let Some(Kind::JobEnded(e)) = to_proto(&rec, 1).kind else {
            panic!("wrong kind");
        };
        assert_eq!((e.state, e.run, e.signal), (1024, 1, 15));
        assert_eq!(e.reason, "TimeLimit");
        assert_eq!(e.requester_uid, Some(1000));
    }

    #[test]
    fn capacity_sums_the_configured_nodes() {
        let rec = AcctRecord::capacity(
            [(4, 8_000), (8, 16_000), (64, 512_000)],
            SimTime::from_secs(30),
        );
        let p = to_proto(&rec, 3);
        let Some(Kind::Capacity(c)) = p.kind else {
            panic!("wrong kind: {:?}", p.kind);
        };
        assert_eq!((c.at, c.cpus, c.mem_mb, c.nodes), (30, 76, 536_000, 3));
    }
}
