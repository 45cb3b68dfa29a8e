//! Account coordinators, as the accounting daemon names them: a coordinator of an account may
//! act on the jobs charged to it (cancel, signal, hold, release, requeue, update), as an
//! administrator may, and sees them where `PrivateData=jobs` hides other users' jobs. Running
//! steps in a job stays its owner's. The runtime hands the core each coordinator's realm (the
//! accounts granted and every account below them) whenever it fetches the dbd's users.

use std::collections::{BTreeSet, HashMap};

use super::{Caller, Core, Job};
use crate::error::CtldError;

/// Each coordinator's realm, by uid.
pub type Realms = HashMap<u32, BTreeSet<String>>;

/// Replaces the coordinators the core knows.
pub fn set(core: &mut Core, realms: Realms) {
    core.coordinators = realms;
}

/// Whether `caller` coordinates the account `job` is charged to.
pub fn coordinates(realms: &Realms, caller: Caller, job: &Job) -> bool {
    realms
        .get(&caller.uid)
        .is_some_and(|realm| realm.contains(&job.launch.account))
}

/// Whether `caller` may manage `job`: an administrator, its owner, or a coordinator of its
/// account.
pub fn may_manage(realms: &Realms, caller: Caller, job: &Job) -> Result<(), CtldError> {
    if caller.admin || caller.uid == job.uid || coordinates(realms, caller, job) {
        Ok(())
    } else {
        Err(CtldError::AccessDenied)
    }
}
