//! Association limits on the wire: decoding `ModifyAssocLimits` (Slurm's `-1` clears a limit)
//! and encoding the limits in force on a listed association.

use sluice_vocab::assoc_limits::{AssocLimits, AssocLimitsEdit, TresEdit, parse_edit};
use sluice_wire::proto;
use tonic::Status;

use super::convert::Decoded;
use crate::store::{Apply, ModifyAssocLimits};

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

/// The store's form of a `ModifyAssocLimits` request.
pub(super) fn modify(m: proto::ModifyAssocLimitsRequest) -> Decoded<ModifyAssocLimits> {
    let set = edit(m.set.unwrap_or_default())?;
    let fairshare = super::convert::fairshare(m.fairshare)?;
    let qos = match m.qos {
        Some(q) => Some(super::qos::modify_assoc(q)?.0),
        None => None,
    };
    let req = ModifyAssocLimits {
        user_associations: m.user_associations,
        users: m.users,
        accounts: m.accounts,
        clusters: m.clusters,
        set,
        fairshare,
        qos,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

/// The store's form of a limits edit (`modify ... set`, `add user|account ...`).
pub(super) fn edit(s: proto::AssocLimitsEdit) -> Result<AssocLimitsEdit, Status> {
    Ok(AssocLimitsEdit {
        max_jobs: count("MaxJobs", s.max_jobs)?,
        max_submit_jobs: count("MaxSubmitJobs", s.max_submit_jobs)?,
        max_wall_minutes: count("MaxWall", s.max_wall_minutes)?,
        max_tres_per_job: tres("MaxTRESPerJob", s.max_tres_per_job.as_deref())?,
        grp_jobs: count("GrpJobs", s.grp_jobs)?,
        grp_submit_jobs: count("GrpSubmitJobs", s.grp_submit_jobs)?,
        grp_tres: tres("GrpTRES", s.grp_tres.as_deref())?,
        grp_tres_mins: tres("GrpTRESMins", s.grp_tres_mins.as_deref())?,
    })
}

/// A coordinator may change the limits of users' associations with accounts it coordinates
/// (named in the request); account limits and QOS stay with administrators.
pub(super) fn realm(req: &ModifyAssocLimits) -> Option<Vec<String>> {
    (req.user_associations && !req.accounts.is_empty() && req.qos.is_none())
        .then(|| req.accounts.clone())
}

/// The wire form of limits in force.
pub(super) fn encode(l: &AssocLimits) -> proto::AssocLimits {
    proto::AssocLimits {
        max_jobs: l.max_jobs,
        max_submit_jobs: l.max_submit_jobs,
        max_wall_minutes: l.max_wall_minutes,
        max_tres_per_job: l.max_tres_per_job.to_stored(),
        grp_jobs: l.grp_jobs,
        grp_submit_jobs: l.grp_submit_jobs,
        grp_tres: l.grp_tres.to_stored(),
        grp_tres_mins: l.grp_tres_mins.to_stored(),
    }
}
