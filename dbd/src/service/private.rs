//! `PrivateData` in the accounting daemon (slurmdbd.conf): what a caller below
//! `AdminLevel=Operator` may read. `jobs`: only their own jobs (sacct); `users`: only their own
//! user record and associations; `accounts`: no account definitions; `usage`: only their own
//! associations' usage (sreport); sreport's job sizes count only their own jobs under `jobs`.
//! As in Slurm, an account coordinator also sees what belongs to the accounts it coordinates
//! (its realm): their associations and users (`users`), their usage rows (`usage`), and
//! their jobs when sacct asks for those accounts (`-A`), and with a plain sacct (the caller's
//! own jobs by default) their own jobs and those charged to the accounts they coordinate.
//! The rules are plain functions over the decoded queries.

use std::collections::BTreeSet;
use std::sync::Arc;

use sluice_vocab::private_data::{Private, PrivateData};
use tonic::Status;

use super::blocking;
use crate::store::usage::AssocUsage;
use crate::store::{AdminLevel, AssociationFilter, JobQuery, Store, UserFilter};

/// Who reads, as the privacy rules need to know them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    /// The caller's uid.
    pub uid: u32,
    /// Their login name (`None`: this host has no such user, or it was not looked up because
    /// nothing is private).
    pub name: Option<String>,
    /// Root, the SlurmUser, or `AdminLevel=Operator` or above: sees everything.
    pub operator: bool,
    /// The accounts they coordinate (granted and below); empty for most users.
    pub realm: BTreeSet<String>,
}

/// What a caller may read, under the daemon's `PrivateData`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privacy {
    /// `PrivateData` of slurmdbd.conf.
    pub private: PrivateData,
    /// The caller.
    pub viewer: Viewer,
}

/// Who `uid` is to the privacy rules: root and the SlurmUser (`admin_uids`) and users with
/// `AdminLevel=Operator` or above see everything.
pub async fn privacy(
    store: &Arc<Store>,
    admin_uids: &[u32],
    private: PrivateData,
    uid: u32,
) -> Result<Privacy, Status> {
    // Without PrivateData nothing is narrowed to the caller's name: the passwd lookup (a read
    // of /etc/passwd per request) is skipped.
    let name = if private == PrivateData::default() {
        None
    } else {
        nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
            .ok()
            .flatten()
            .map(|u| u.name)
    };
    let operator = admin_uids.contains(&uid)
        || match (&name, private == PrivateData::default()) {
            (Some(n), false) => {
                let (store, n) = (Arc::clone(store), n.clone());
                let level = blocking(move || store.admin_level(&n)).await?;
                level.is_some_and(|l| l != AdminLevel::None)
            }
            _ => false,
        };
    let realm = match (&name, operator || private == PrivateData::default()) {
        (Some(n), false) => {
            let (store, n) = (Arc::clone(store), n.clone());
            blocking(move || Ok(store.coordinator_realms()?.remove(&n).unwrap_or_default())).await?
        }
        _ => BTreeSet::new(),
    };
    Ok(Privacy {
        private,
        viewer: Viewer {
            uid,
            name,
            operator,
            realm,
        },
    })
}

/// Narrows `list` (empty: everything) to `me`; `false` when nothing is left to show.
fn narrow<T: PartialEq>(list: &mut Vec<T>, me: Option<T>) -> bool {
    let Some(me) = me else {
        return false;
    };
    if list.is_empty() || list.contains(&me) {
        *list = vec![me];
        true
    } else {
        false
    }
}

impl Privacy {
    /// Whether `kind` is hidden from this caller.
    fn hides(&self, kind: Private) -> bool {
        !self.viewer.operator && self.private.has(kind)
    }

    /// Narrows a job query (sacct) to the caller's own jobs; `false`: no rows at all.
    pub fn jobs(&self, q: &mut JobQuery) -> bool {
        self.job_uids(&mut q.uids)
    }

    /// Narrows the users of a job query (sacct, sreport's job sizes) to the caller; `false`:
    /// no jobs at all.
    pub fn job_uids(&self, uids: &mut Vec<u32>) -> bool {
        !self.hides(Private::Jobs) || narrow(uids, Some(self.viewer.uid))
    }

    /// [`Self::jobs`] for sacct, which may name accounts: a coordinator asking only for
    /// accounts it coordinates sees all their jobs; its plain sacct (`own_by_default`: the
    /// uids are sacct's default, the caller) its own jobs and its accounts' jobs.
    pub fn sacct_jobs(&self, q: &mut JobQuery, own_by_default: bool) -> bool {
        let coordinated =
            !q.accounts.is_empty() && q.accounts.iter().all(|a| self.viewer.realm.contains(a));
        if coordinated {
            return true;
        }
        if !self.jobs(q) {
            return false;
        }
        if own_by_default && self.hides(Private::Jobs) && !self.viewer.realm.is_empty() {
            q.uid_or_accounts = self.viewer.realm.iter().cloned().collect();
        }
        true
    }

    /// Narrows a user listing to the caller; `false`: no rows at all. A coordinator's listing
    /// is not narrowed here but by [`Self::retain_users`].
    pub fn users(&self, f: &mut UserFilter) -> bool {
        !self.hides(Private::Users)
            || !self.viewer.realm.is_empty()
            || narrow(&mut f.names, self.viewer.name.clone())
    }

    /// Keeps, for a coordinator under `users`, itself and the users `in_realm` (those with an
    /// association in an account it coordinates).
    pub fn retain_users(&self, rows: &mut Vec<crate::store::User>, in_realm: &BTreeSet<String>) {
        if self.hides(Private::Users) && !self.viewer.realm.is_empty() {
            rows.retain(|u| {
                Some(&u.name) == self.viewer.name.as_ref() || in_realm.contains(&u.name)
            });
        }
    }

    /// Narrows an association listing to the caller's; `false`: no rows at all. A
    /// coordinator's listing is not narrowed here but by [`Self::retain_associations`].
    pub fn associations(&self, f: &mut AssociationFilter) -> bool {
        !self.hides(Private::Users)
            || !self.viewer.realm.is_empty()
            || narrow(&mut f.users, self.viewer.name.clone())
    }

    /// Keeps, under `users`, the caller's own associations and those of accounts it
    /// coordinates.
    pub fn retain_associations(&self, rows: &mut Vec<crate::store::Association>) {
        rows.retain(|a| self.shows_association(a));
    }

    /// Whether the caller may see association `a` (see [`Self::retain_associations`]).
    pub fn shows_association(&self, a: &crate::store::Association) -> bool {
        !self.hides(Private::Users)
            || Some(&a.user) == self.viewer.name.as_ref()
            || self.viewer.realm.contains(&a.account)
    }

    /// The accounts this caller coordinates.
    pub fn realm(&self) -> &BTreeSet<String> {
        &self.viewer.realm
    }

    /// Whether account definitions may be listed.
    pub fn accounts(&self) -> bool {
        !self.hides(Private::Accounts)
    }

    /// Keeps the usage rows the caller may see (their own user's associations, and a
    /// coordinator's accounts' rows).
    pub fn usage(&self, rows: &mut Vec<AssocUsage>) {
        if self.hides(Private::Usage) {
            rows.retain(|r| {
                Some(&r.user) == self.viewer.name.as_ref() || self.viewer.realm.contains(&r.account)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn privacy(private: &str, operator: bool) -> Privacy {
        Privacy {
            private: PrivateData::parse(private).unwrap(),
            viewer: Viewer {
                uid: 1001,
                name: Some("alice".into()),
                operator,
                realm: BTreeSet::new(),
            },
        }
    }

    #[test]
    fn private_jobs_narrow_a_query_to_the_callers_own() {
        let p = privacy("jobs", false);
        let mut all = JobQuery::default();
        assert!(p.jobs(&mut all));
        assert_eq!(all.uids, [1001]);
        let mut theirs = JobQuery {
            uids: vec![1002],
            ..JobQuery::default()
        };
        assert!(!p.jobs(&mut theirs), "another user's jobs: nothing");
        let mut both = JobQuery {
            uids: vec![1002, 1001],
            ..JobQuery::default()
        };
        assert!(p.jobs(&mut both));
        assert_eq!(both.uids, [1001]);
        for p in [privacy("jobs", true), privacy("usage", false)] {
            let mut q = JobQuery::default();
            assert!(p.jobs(&mut q));
            assert!(q.uids.is_empty(), "{p:?}");
        }
    }

    #[test]
    fn private_users_accounts_and_usage() {
        let p = privacy("users,accounts,usage", false);
        let mut f = UserFilter::default();
        assert!(p.users(&mut f));
        assert_eq!(f.names, ["alice"]);
        let mut a = AssociationFilter {
            users: vec!["bob".into()],
            ..AssociationFilter::default()
        };
        assert!(!p.associations(&mut a));
        assert!(!p.accounts());
        assert!(privacy("users,accounts", true).accounts());
        let row = |user: &str| AssocUsage {
            cluster: "c".into(),
            account: "a".into(),
            user: user.into(),
            parent_account: "a".into(),
            tres: sluice_reports::Tres::Cpu,
            alloc_secs: 1,
        };
        let mut rows = vec![row("alice"), row("bob"), row("")];
        p.usage(&mut rows);
        assert_eq!(rows, [row("alice")]);
    }

    #[test]
    fn coordinators_see_their_accounts() {
        let mut p = privacy("users,usage,jobs", false);
        p.viewer.realm = ["chem".to_string()].into_iter().collect();
        let mut f = AssociationFilter::default();
        assert!(p.associations(&mut f));
        assert!(f.users.is_empty(), "narrowed after the listing");
        let assoc = |account: &str, user: &str| crate::store::Association {
            id: 1,
            cluster: "c".into(),
            account: account.into(),
            user: user.into(),
            parent_account: String::new(),
            limits: Default::default(),
            qos: Vec::new(),
            default_qos: String::new(),
        };
        let mut rows = vec![
            assoc("chem", "bob"),
            assoc("phys", "bob"),
            assoc("phys", "alice"),
        ];
        p.retain_associations(&mut rows);
        assert_eq!(rows, [assoc("chem", "bob"), assoc("phys", "alice")]);
        let mut theirs = JobQuery {
            accounts: vec!["chem".into()],
            ..JobQuery::default()
        };
        assert!(p.sacct_jobs(&mut theirs, false));
        assert!(theirs.uids.is_empty(), "all of chem's jobs");
        let mut other = JobQuery {
            accounts: vec!["phys".into()],
            ..JobQuery::default()
        };
        assert!(p.sacct_jobs(&mut other, false));
        assert_eq!(other.uids, [1001], "only their own jobs elsewhere");
        assert!(other.uid_or_accounts.is_empty());
        let mut plain = JobQuery {
            uids: vec![1001],
            ..JobQuery::default()
        };
        assert!(p.sacct_jobs(&mut plain, true));
        assert_eq!(plain.uids, [1001]);
        assert_eq!(plain.uid_or_accounts, ["chem"], "and the jobs of chem");
        let usage = |account: &str, user: &str| AssocUsage {
            cluster: "c".into(),
            account: account.into(),
            user: user.into(),
            parent_account: String::new(),
            tres: sluice_reports::Tres::Cpu,
            alloc_secs: 1,
        };
        let mut rows = vec![
            usage("chem", "bob"),
            usage("phys", "bob"),
            usage("chem", ""),
        ];
        p.usage(&mut rows);
        assert_eq!(rows, [usage("chem", "bob"), usage("chem", "")]);
    }
}
