//! The launch check: a batch script or a step starts here only with a job credential of the
//! controller naming this node, that job (and step) and that user. Whoever asks (the controller
//! for batch scripts, srun for steps) forwards the credential it got from the controller; a
//! request without one, or with one for something else, is refused and logged, and nothing runs.

use sluice_vocab::hostlist;
use sluice_wire::auth::credential::{CredentialKey, Launch};
use sluice_wire::auth::{AuthError, Identity};
use sluice_wire::proto::{JobCredential, LaunchBatchRequest, RunStepRequest};

use crate::error::NodedError;

/// Checks `cred` for `launch` at unix time `now`, and logs a refusal with who asked.
pub fn check(
    key: &CredentialKey,
    cred: Option<&JobCredential>,
    launch: Launch<'_>,
    caller: Identity,
    now: i64,
) -> Result<(), NodedError> {
    let verdict = cred
        .ok_or_else(|| AuthError::JobCredential {
            why: "none given".into(),
        })
        .and_then(|cred| key.open(cred, now))
        .and_then(|body| {
            let nodes =
                hostlist::expand(&body.node_list).map_err(|e| AuthError::JobCredential {
                    why: format!("its node list {:?}: {e}", body.node_list),
                })?;
            launch.allowed_by(&body, &nodes)
        });
    verdict.map_err(|e| {
        tracing::warn!(
            job = launch.job_id,
            step = ?launch.step_id,
            uid = launch.uid,
            caller = caller.uid,
            "launch refused: {e}"
        );
        NodedError::Credential(e)
    })
}

/// The launch a batch request asks of `node`.
pub fn batch_launch<'a>(req: &LaunchBatchRequest, node: &'a str) -> Launch<'a> {
    Launch {
        job_id: req.job_id,
        step_id: None,
        uid: req.uid,
        gid: req.gid,
        node,
    }
}

/// The launch a step request asks of `node`.
pub fn step_launch<'a>(req: &RunStepRequest, node: &'a str) -> Launch<'a> {
    Launch {
        job_id: req.job_id,
        step_id: Some(req.step_id),
        uid: req.uid,
        gid: req.gid,
        node,
    }
}

/// The current unix time.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
