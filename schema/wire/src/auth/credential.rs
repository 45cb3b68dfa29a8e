//! Job credentials (the SLURM design paper's): when the controller allocates, it signs what it
//! allocated (job, step, user, nodes, CPUs per node, an expiry); a node daemon launches a batch
//! script or a step only with a credential that names that job, step, user and node.
//!
//! The signing key is the controller's credential key, derived from `slurm.key` with a label of
//! its own, so it is held by the daemons only: nothing a user can obtain is a credential (the
//! credential service signs request tokens, under `slurm.key` itself, in another format).

use hmac::Mac;
use prost::Message;

use super::{AuthError, Key};
use crate::proto::{JobCredential, JobCredentialBody};

/// How long a credential may be used for a launch after its issue, in seconds (Slurm's
/// default credential lifetime).
pub const CREDENTIAL_LIFETIME: i64 = 120;

/// What the credential key is derived with, and what each signature covers first.
const LABEL: &str = "sluice job credential v1";

/// The controller's key for job credentials; node daemons check them with it.
#[derive(Debug, Clone)]
pub struct CredentialKey(Key);

impl CredentialKey {
    /// The credential key of the cluster whose `slurm.key` is `key`.
    pub fn derive(key: &Key) -> Self {
        let derived = key.mac(LABEL).finalize().into_bytes();
        Self(Key::from_bytes(derived.to_vec()))
    }

    /// Signs `body`.
    pub fn issue(&self, body: &JobCredentialBody) -> JobCredential {
        let body = body.encode_to_vec();
        let signature = self.mac(&body).finalize().into_bytes().to_vec();
        JobCredential { body, signature }
    }

    /// The body of `cred` when its signature is ours and it has not expired at unix time `now`.
    pub fn open(&self, cred: &JobCredential, now: i64) -> Result<JobCredentialBody, AuthError> {
        let bad = |why: &str| AuthError::JobCredential {
            why: why.to_string(),
        };
        self.mac(&cred.body)
            .verify_slice(&cred.signature)
            .map_err(|_| bad("signature does not match"))?;
        let body = JobCredentialBody::decode(cred.body.as_slice())
            .map_err(|_| bad("malformed credential"))?;
        if now > body.expires {
            return Err(AuthError::JobCredential {
                why: format!("expired {} s ago", now - body.expires),
            });
        }
        Ok(body)
    }

    fn mac(&self, body: &[u8]) -> hmac::Hmac<sha2::Sha256> {
        let mut mac = self.0.mac(LABEL);
        mac.update(body);
        mac
    }
}

/// What `cred` says, its signature unchecked: for the holder (srun), who launches what it names;
/// only the node daemons' [`CredentialKey::open`] is a check.
pub fn read_unchecked(cred: &JobCredential) -> Option<JobCredentialBody> {
    JobCredentialBody::decode(cred.body.as_slice()).ok()
}

/// The launch a node daemon is asked for, which a credential must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch<'a> {
    pub job_id: u32,
    /// `None`: the batch script.
    pub step_id: Option<u32>,
    pub uid: u32,
    pub gid: u32,
    /// The node asked to launch.
    pub node: &'a str,
}

impl Launch<'_> {
    /// Checks that `body` allows this launch; the nodes are the expansion of its `node_list`.
    pub fn allowed_by(&self, body: &JobCredentialBody, nodes: &[String]) -> Result<(), AuthError> {
        let bad = |why: String| Err(AuthError::JobCredential { why });
        if body.job_id != self.job_id || body.step_id != self.step_id {
            let step = |s: Option<u32>| s.map_or("batch".to_string(), |s| s.to_string());
            return bad(format!(
                "it is for {}.{}, not {}.{}",
                body.job_id,
                step(body.step_id),
                self.job_id,
                step(self.step_id)
            ));
        }
        if (body.uid, body.gid) != (self.uid, self.gid) {
            return bad(format!(
                "it is for uid {} gid {}, not uid {} gid {}",
                body.uid, body.gid, self.uid, self.gid
            ));
        }
        // An `srun -Z` step's credential names a job id no real job has, and only such a
        // credential does: neither passes for the other.
        if body.no_alloc != sluice_vocab::ids::is_no_alloc(body.job_id) {
            return bad(format!(
                "its no-allocation mark does not fit job id {}",
                body.job_id
            ));
        }
        if !nodes.iter().any(|n| n == self.node) {
            return bad(format!("it does not name node {}", self.node));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> JobCredentialBody {
        JobCredentialBody {
            job_id: 7,
            step_id: Some(0),
            uid: 1000,
            gid: 100,
            node_list: "n[1-2]".into(),
            cpus_per_node: vec![2, 2],
            expires: 1_120,
            restart_count: 0,
            no_alloc: false,
        }
    }

    fn launch(node: &str) -> Launch<'_> {
        Launch {
            job_id: 7,
            step_id: Some(0),
            uid: 1000,
            gid: 100,
            node,
        }
    }

    #[test]
    fn a_credential_opens_under_its_key_until_it_expires() {
        let key = CredentialKey::derive(&Key::from_bytes(vec![1; 64]));
        let cred = key.issue(&body());
        assert_eq!(key.open(&cred, 1_120).unwrap(), body());
        let e = key.open(&cred, 1_121).unwrap_err();
        assert_eq!(e.to_string(), "Invalid job credential: expired 1 s ago");
        let other = CredentialKey::derive(&Key::from_bytes(vec![2; 64]));
        assert!(other.open(&cred, 1_000).is_err());
        let mut changed = cred.clone();
        changed.body = JobCredentialBody { uid: 0, ..body() }.encode_to_vec();
        assert!(key.open(&changed, 1_000).is_err());
    }

    #[test]
    fn a_request_token_is_no_credential() {
        // The token format's MAC under slurm.key itself is not a credential's signature.
        let slurm_key = Key::from_bytes(vec![1; 64]);
        let body = body().encode_to_vec();
        let signature = slurm_key
            .mac("")
            .chain_update(&body)
            .finalize()
            .into_bytes();
        let forged = JobCredential {
            body,
            signature: signature.to_vec(),
        };
        assert!(
            CredentialKey::derive(&slurm_key)
                .open(&forged, 1_000)
                .is_err()
        );
    }

    #[test]
    fn a_credential_allows_only_its_job_step_user_and_nodes() {
        let nodes = vec!["n1".to_string(), "n2".to_string()];
        assert!(launch("n2").allowed_by(&body(), &nodes).is_ok());
        let e = launch("n3").allowed_by(&body(), &nodes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid job credential: it does not name node n3"
        );
        let other_job = Launch {
            job_id: 8,
            ..launch("n1")
        };
        assert_eq!(
            other_job
                .allowed_by(&body(), &nodes)
                .unwrap_err()
                .to_string(),
            "Invalid job credential: it is for 7.0, not 8.0"
        );
        let batch = Launch {
            step_id: None,
            ..launch("n1")
        };
        assert!(batch.allowed_by(&body(), &nodes).is_err());
        let other_user = Launch {
            uid: 1001,
            ..launch("n1")
        };
        assert!(other_user.allowed_by(&body(), &nodes).is_err());
    }

    #[test]
    fn only_no_allocation_ids_go_with_a_no_allocation_mark() {
        let nodes = vec!["n1".to_string()];
        let marked = JobCredentialBody {
            no_alloc: true,
            ..body()
        };
        let e = launch("n1").allowed_by(&marked, &nodes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid job credential: its no-allocation mark does not fit job id 7"
        );
        let id = 0xffff_0007;
        let no_alloc = Launch {
            job_id: id,
            ..launch("n1")
        };
        let unmarked = JobCredentialBody {
            job_id: id,
            ..body()
        };
        assert!(no_alloc.allowed_by(&unmarked, &nodes).is_err());
        let both = JobCredentialBody {
            job_id: id,
            no_alloc: true,
            ..body()
        };
        assert!(no_alloc.allowed_by(&both, &nodes).is_ok());
    }
}
