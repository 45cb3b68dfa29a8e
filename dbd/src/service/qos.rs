//! QOS on the wire: decoding `AddQos`/`ModifyQos`/`DeleteQos`/`ModifyAssocQos` (Slurm's `-1`
//! clears a limit) and encoding listed QOS.

use sluice_vocab::assoc_limits::{TresEdit, parse_edit};
use sluice_vocab::qos::{QosEdit, QosFlags, UsageFactor};
use sluice_wire::proto;
use tonic::Status;

use super::convert::Decoded;
use crate::store::{AddQos, Apply, DeleteQos, ModifyAssocQos, ModifyQos, QosEntry};

/// A count edit: `-1` clears, `0..=u32::MAX - 1` sets; anything else names the limit.
fn count(name: &str, v: Option<i64>) -> Result<Option<Option<u32>>, Status> {
    match v {
        None => Ok(None),
        Some(-1) => Ok(Some(None)),
        Some(n) => u32::try_from(n)
            .ok()
            .filter(|n| *n < u32::MAX)
            .map(|n| Some(Some(n)))
            .ok_or_else(|| Status::invalid_argument(format!("Invalid value for {name}: {n}"))),
    }
}

fn tres(name: &str, v: Option<&str>) -> Result<TresEdit, Status> {
    match v {
        None => Ok(TresEdit::new()),
        Some(s) => parse_edit(s).map_err(|e| Status::invalid_argument(format!("{name}: {e}"))),
    }
}

/// The store's form of a QOS edit.
fn edit(e: Option<proto::QosEdit>) -> Result<QosEdit, Status> {
    let e = e.unwrap_or_default();
    let priority =
        match e.priority {
            None => None,
            // Slurm's -1 resets the priority to 0.
            Some(-1) => Some(0),
            Some(p) => Some(u32::try_from(p).map_err(|_| {
                Status::invalid_argument(format!("Invalid value for Priority: {p}"))
            })?),
        };
    let flags = e
        .flags
        .as_deref()
        .map(QosFlags::parse)
        .transpose()
        .map_err(Status::invalid_argument)?;
    Ok(QosEdit {
        description: e.description,
        priority,
        flags,
        max_wall_minutes: count("MaxWall", e.max_wall_minutes)?,
        max_tres_per_job: tres("MaxTRESPerJob", e.max_tres_per_job.as_deref())?,
        max_tres_per_user: tres("MaxTRESPerUser", e.max_tres_per_user.as_deref())?,
        max_jobs_per_user: count("MaxJobsPerUser", e.max_jobs_per_user)?,
        max_submit_jobs_per_user: count("MaxSubmitJobsPerUser", e.max_submit_jobs_per_user)?,
        grp_tres: tres("GrpTRES", e.grp_tres.as_deref())?,
        grp_jobs: count("GrpJobs", e.grp_jobs)?,
        grp_submit_jobs: count("GrpSubmitJobs", e.grp_submit_jobs)?,
        max_tres_mins_per_job: tres("MaxTRESMinsPerJob", e.max_tres_mins_per_job.as_deref())?,
        max_tres_per_account: tres("MaxTRESPerAccount", e.max_tres_per_account.as_deref())?,
        max_jobs_per_account: count("MaxJobsPerAccount", e.max_jobs_per_account)?,
        max_submit_jobs_per_account: count(
            "MaxSubmitJobsPerAccount",
            e.max_submit_jobs_per_account,
        )?,
        min_tres_per_job: tres("MinTRESPerJob", e.min_tres_per_job.as_deref())?,
        max_tres_per_node: tres("MaxTRESPerNode", e.max_tres_per_node.as_deref())?,
        grp_tres_mins: tres("GrpTRESMins", e.grp_tres_mins.as_deref())?,
        usage_factor: usage_factor(e.usage_factor)?,
    })
}

/// `UsageFactor=`: -1 sets Slurm's default (1.0); else a number from 0 to 1000.
fn usage_factor(v: Option<f64>) -> Result<Option<UsageFactor>, Status> {
    match v {
        None => Ok(None),
        Some(-1.0) => Ok(Some(UsageFactor::ONE)),
        Some(f) => UsageFactor::from_f64(f)
            .map(Some)
            .ok_or_else(|| Status::invalid_argument(format!("Invalid value for UsageFactor: {f}"))),
    }
}

pub(super) fn add(m: proto::AddQosRequest) -> Decoded<AddQos> {
    let req = AddQos {
        names: m.names,
        set: edit(m.set)?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn modify(m: proto::ModifyQosRequest) -> Decoded<ModifyQos> {
    let req = ModifyQos {
        names: m.names,
        set: edit(m.set)?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn delete(m: proto::DeleteQosRequest) -> Decoded<DeleteQos> {
    Ok((DeleteQos { names: m.names }, Apply::from_commit(m.commit)))
}

pub(super) fn modify_assoc(m: proto::ModifyAssocQosRequest) -> Decoded<ModifyAssocQos> {
    let req = ModifyAssocQos {
        user_associations: m.user_associations,
        users: m.users,
        accounts: m.accounts,
        clusters: m.clusters,
        set_list: m.set_list.then_some(m.list),
        add: m.add,
        remove: m.remove,
        default_qos: m.default_qos,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

/// The wire form of a listed QOS.
pub(super) fn encode(e: QosEntry) -> proto::Qos {
    let l = &e.qos.limits;
    proto::Qos {
        id: e.id,
        name: e.qos.name.clone(),
        description: e.qos.description.clone(),
        priority: e.qos.priority,
        flags: e.qos.flags.to_string(),
        limits: Some(proto::QosLimits {
            max_wall_minutes: l.max_wall_minutes,
            max_tres_per_job: l.max_tres_per_job.to_stored(),
            max_tres_per_user: l.max_tres_per_user.to_stored(),
            max_jobs_per_user: l.max_jobs_per_user,
            max_submit_jobs_per_user: l.max_submit_jobs_per_user,
            grp_tres: l.grp_tres.to_stored(),
            grp_jobs: l.grp_jobs,
            grp_submit_jobs: l.grp_submit_jobs,
            max_tres_mins_per_job: l.max_tres_mins_per_job.to_stored(),
            max_tres_per_account: l.max_tres_per_account.to_stored(),
            max_jobs_per_account: l.max_jobs_per_account,
            max_submit_jobs_per_account: l.max_submit_jobs_per_account,
            min_tres_per_job: l.min_tres_per_job.to_stored(),
            max_tres_per_node: l.max_tres_per_node.to_stored(),
            grp_tres_mins: l.grp_tres_mins.to_stored(),
        }),
        deleted: e.deleted,
        // Usage is given only when asked for (`ListQosRequest.usage_cluster`).
        raw_cpu_usage: 0.0,
        raw_mem_usage: 0.0,
        raw_node_usage: 0.0,
        usage_factor: Some(e.qos.usage_factor.as_f64()),
    }
}
