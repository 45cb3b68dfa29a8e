//! Wire ↔ domain conversions of the `Reports` service.

use sluice_reports::Tres;
use sluice_wire::proto;
use tonic::Status;

use crate::store::usage::{AssocUsage, ClusterUsage, JobSizesQuery, JobSizesRow, UsageQuery};

/// A TRES by name, or `invalid_argument` naming it.
fn tres(name: &str) -> Result<Tres, Status> {
    Tres::parse(name).ok_or_else(|| {
        Status::invalid_argument(format!("Unknown TRES '{name}': use cpu, mem or node"))
    })
}

/// A window must not end before it starts.
fn window(start: i64, end: i64) -> Result<(), Status> {
    if end < start {
        return Err(Status::invalid_argument(format!(
            "Start time ({start}) requested is after end time ({end})."
        )));
    }
    Ok(())
}

/// A usage query; an empty TRES list means cpu.
pub fn usage_query(q: proto::UsageQuery) -> Result<UsageQuery, Status> {
    window(q.start, q.end)?;
    Ok(UsageQuery {
        clusters: q.clusters,
        start: q.start,
        end: q.end,
        tres: q.tres.iter().map(|t| tres(t)).collect::<Result<_, _>>()?,
        accounts: q.accounts,
        users: q.users,
    })
}

/// A job-sizes query; an empty TRES means cpu.
pub fn job_sizes_query(q: proto::JobSizesQuery) -> Result<JobSizesQuery, Status> {
    window(q.start, q.end)?;
    Ok(JobSizesQuery {
        clusters: q.clusters,
        start: q.start,
        end: q.end,
        grouping: q.grouping.into_iter().map(u64::from).collect(),
        tres: if q.tres.is_empty() {
            Tres::Cpu
        } else {
            tres(&q.tres)?
        },
        accounts: q.accounts,
        uids: q.uids,
        individual: q.individual,
    })
}

/// A cluster's usage on the wire.
pub fn cluster_usage(u: ClusterUsage) -> proto::ClusterUsage {
    proto::ClusterUsage {
        cluster: u.cluster,
        tres: u.tres.name().to_string(),
        count: u.usage.count,
        alloc_secs: u.usage.alloc,
        down_secs: u.usage.down,
        pdown_secs: u.usage.pdown,
        idle_secs: u.usage.idle,
        plan_secs: u.usage.plan,
        over_secs: u.usage.over,
        total_secs: u.usage.total,
    }
}

/// An association's usage on the wire.
pub fn assoc_usage(u: AssocUsage) -> proto::AssocUsage {
    proto::AssocUsage {
        cluster: u.cluster,
        account: u.account,
        user: u.user,
        parent_account: u.parent_account,
        tres: u.tres.name().to_string(),
        alloc_secs: u.alloc_secs,
    }
}

/// A job-sizes row on the wire.
pub fn job_sizes_row(r: JobSizesRow) -> proto::JobSizesRow {
    proto::JobSizesRow {
        cluster: r.cluster,
        account: r.account,
        parent_account: r.parent_account,
        bucket_secs: r.bucket_secs,
        bucket_jobs: r.bucket_jobs,
    }
}
