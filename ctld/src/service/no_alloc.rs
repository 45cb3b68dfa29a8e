//! `NoAllocStep`: the credential of an `srun -Z` (`--no-allocate`) step, which runs on the
//! named nodes without a job. Only root and the SlurmUser may ask (Slurm's rule; not the
//! accounting daemon's administrators); the job id srun made up must lie in
//! [`NO_ALLOC_JOB_IDS`], which no real job's id reaches, and the credential says `no_alloc`,
//! so a node daemon keeps the run out of its reports and the controller never learns of it.
//! Nothing is queued, scheduled or accounted: the core is only read, for the nodes' addresses.

use sluice_vocab::ids::{NO_ALLOC_JOB_IDS, is_no_alloc};
use sluice_wire::auth::credential::CREDENTIAL_LIFETIME;
use sluice_wire::proto::{JobCredentialBody, NoAllocStepReply, NoAllocStepRequest, NodeAddr};
use tonic::{Request, Status};

use super::ControllerService;
use crate::error::CtldError;

/// Answers `NoAllocStep` for root and the SlurmUser; anybody else is refused (logged).
pub async fn no_alloc_step(
    svc: &ControllerService,
    req: Request<NoAllocStepRequest>,
) -> Result<NoAllocStepReply, Status> {
    let uid = sluice_wire::auth::identity(&req)?.uid;
    let r = req.into_inner();
    check(&svc.admins, uid, &r)?;
    let names = r.nodelist.clone();
    let nodes = svc
        .core
        .query(move |cx| {
            names
                .iter()
                .map(|name| {
                    let (addr, port) = cx.node_addr(name).unwrap_or_default();
                    NodeAddr {
                        name: name.clone(),
                        addr,
                        port: u32::from(port),
                    }
                })
                .collect::<Vec<_>>()
        })
        .await?;
    let body = credential(uid, &r, chrono::Utc::now().timestamp());
    tracing::info!(
        uid,
        job = r.job_id,
        step = r.step_id,
        nodes = %body.node_list,
        "no-allocation step granted"
    );
    Ok(NoAllocStepReply {
        node_list: body.node_list.clone(),
        nodes,
        credential: Some(svc.creds.issue(&body)),
    })
}

/// Refuses the request unless `uid` is root or the SlurmUser (`privileged`), its job id is a
/// no-allocation id and it names nodes.
fn check(privileged: &[u32], uid: u32, r: &NoAllocStepRequest) -> Result<(), CtldError> {
    if !privileged.contains(&uid) {
        tracing::warn!(
            uid,
            job = r.job_id,
            "refused srun --no-allocate: not privileged"
        );
        return Err(CtldError::AccessDenied);
    }
    if !is_no_alloc(r.job_id) {
        tracing::warn!(
            uid,
            job = r.job_id,
            "refused srun --no-allocate: job id outside {NO_ALLOC_JOB_IDS:?}"
        );
        return Err(CtldError::InvalidJobId);
    }
    if r.nodelist.is_empty() {
        return Err(CtldError::InvalidNodeName {
            name: String::new(),
        });
    }
    Ok(())
}

/// The credential of the step `r` asks for, run by `uid`, issued at unix time `now`.
fn credential(uid: u32, r: &NoAllocStepRequest, now: i64) -> JobCredentialBody {
    JobCredentialBody {
        job_id: r.job_id,
        step_id: Some(r.step_id),
        uid,
        gid: r.gid,
        node_list: sluice_vocab::hostlist::compress(&r.nodelist),
        cpus_per_node: Vec::new(),
        expires: now + CREDENTIAL_LIFETIME,
        restart_count: 0,
        no_alloc: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(job_id: u32) -> NoAllocStepRequest {
        NoAllocStepRequest {
            job_id,
            step_id: 12,
            gid: 100,
            nodelist: vec!["n1".into(), "n2".into()],
        }
    }

    #[test]
    fn only_root_and_the_slurm_user_get_a_credential() {
        let privileged = [0, 64_030];
        assert!(check(&privileged, 0, &req(0xffff_0001)).is_ok());
        assert!(check(&privileged, 64_030, &req(0xffff_0001)).is_ok());
        let e = check(&privileged, 1000, &req(0xffff_0001)).unwrap_err();
        assert_eq!(e.to_string(), "Access/permission denied");
    }

    #[test]
    fn the_job_id_must_be_a_no_allocation_id() {
        // A real job's id would let root's step pass for that job's on its nodes.
        assert!(check(&[0], 0, &req(42)).is_err());
        assert!(check(&[0], 0, &req(0xffff_fffe)).is_err());
        let none = NoAllocStepRequest {
            nodelist: Vec::new(),
            ..req(0xffff_0001)
        };
        assert!(check(&[0], 0, &none).is_err());
    }

    #[test]
    fn the_credential_names_the_caller_the_nodes_and_no_allocation() {
        let body = credential(1000, &req(0xffff_0001), 500);
        assert_eq!((body.job_id, body.step_id), (0xffff_0001, Some(12)));
        assert_eq!((body.uid, body.gid), (1000, 100));
        assert_eq!(body.node_list, "n[1-2]");
        assert_eq!(body.expires, 500 + CREDENTIAL_LIFETIME);
        assert!(body.no_alloc);
    }
}
