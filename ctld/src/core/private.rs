//! `PrivateData` in the controller: what a user who is neither an administrator nor an
//! operator may see. With `jobs` only their own jobs are listed, and to account coordinators
//! also the jobs charged to the accounts they coordinate; with `nodes` or
//! `partitions` those lists are refused as a whole, as Slurm's controller refuses them.
//! `cloud` works the other way: powered-down cloud nodes are listed only with it, to
//! everyone (Slurm hides them otherwise, even from root).

use super::{Caller, Core, Job};
use crate::error::CtldError;
use sluice_vocab::private_data::Private;

/// Whether `caller` may see `job`.
pub fn sees_job(core: &Core, caller: Caller, job: &Job) -> bool {
    caller.operator
        || job.uid == caller.uid
        || !core.conf.private_data.has(Private::Jobs)
        || super::coordinators::coordinates(&core.coordinators, caller, job)
}

/// Whether `node` is listed (sinfo, scontrol show node): not a powered-down cloud node
/// unless `PrivateData` has `cloud`.
pub fn lists_node(core: &Core, node: &super::Node) -> bool {
    !(node.power.cloud && node.power.status == super::PowerStatus::Off)
        || core.conf.private_data.has(Private::Cloud)
}

/// Refuses `caller` the list of `kind` (`Nodes`, `Partitions`) when it is private.
pub fn may_list(core: &Core, caller: Caller, kind: Private) -> Result<(), CtldError> {
    if caller.operator || !core.conf.private_data.has(kind) {
        Ok(())
    } else {
        Err(CtldError::AccessDenied)
    }
}
