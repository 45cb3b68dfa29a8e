//! Change requests and list filters the store takes. Empty lists in conditions mean "any".

use super::error::{ObjectKind, StoreError};
use super::types::{AdminLevel, ListEdit};

/// `sacctmgr add cluster`.
#[derive(Debug, Clone, Default)]
pub struct AddClusters {
    pub names: Vec<String>,
    pub federation: Option<String>,
    pub fed_state: Option<u32>,
    pub features: Vec<String>,
}

/// `sacctmgr modify cluster`: conditions (ANDed) and settings.
#[derive(Debug, Clone, Default)]
pub struct ModifyClusters {
    pub names: Vec<String>,
    pub where_federations: Vec<String>,
    /// `Some("")` leaves the federation.
    pub federation: Option<String>,
    pub fed_state: Option<u32>,
    pub features: Option<ListEdit>,
    pub control_host: Option<String>,
    pub control_port: Option<u32>,
    pub rpc_version: Option<u32>,
}

/// `sacctmgr delete cluster`.
#[derive(Debug, Clone, Default)]
pub struct DeleteClusters {
    pub names: Vec<String>,
    pub where_federations: Vec<String>,
}

/// `sacctmgr show cluster`.
#[derive(Debug, Clone, Default)]
pub struct ClusterFilter {
    pub names: Vec<String>,
    pub federations: Vec<String>,
    pub with_deleted: bool,
}

/// `sacctmgr add federation`; `clusters` entries are `c` (set exactly), `+c`, `-c`.
#[derive(Debug, Clone, Default)]
pub struct AddFederations {
    pub names: Vec<String>,
    pub clusters: Vec<String>,
}

/// `sacctmgr modify federation`; `clusters` as in [`AddFederations`].
#[derive(Debug, Clone, Default)]
pub struct ModifyFederations {
    pub names: Vec<String>,
    pub clusters: Vec<String>,
}

/// `sacctmgr show federation`.
#[derive(Debug, Clone, Default)]
pub struct FederationFilter {
    pub names: Vec<String>,
    /// Federations holding any of these clusters.
    pub clusters: Vec<String>,
    pub with_deleted: bool,
}

/// `sacctmgr add account`.
#[derive(Debug, Clone, Default)]
pub struct AddAccounts {
    pub names: Vec<String>,
    pub description: Option<String>,
    pub organization: Option<String>,
    /// Default `root`.
    pub parent: Option<String>,
    /// Default: every cluster.
    pub clusters: Vec<String>,
    /// `Fairshare=` of the new associations.
    pub fairshare: Option<sluice_vocab::fairshare::Shares>,
    /// Limits of the new associations (`MaxJobs=`, `GrpTRES=` ...).
    pub limits: sluice_vocab::assoc_limits::AssocLimitsEdit,
}

/// `sacctmgr modify account`.
#[derive(Debug, Clone, Default)]
pub struct ModifyAccounts {
    pub names: Vec<String>,
    pub where_description: Option<String>,
    pub where_organization: Option<String>,
    pub description: Option<String>,
    pub organization: Option<String>,
    pub parent: Option<String>,
    /// `Fairshare=` of the accounts' own associations.
    pub fairshare: Option<sluice_vocab::fairshare::Shares>,
}

/// `sacctmgr show account`.
#[derive(Debug, Clone, Default)]
pub struct AccountFilter {
    pub names: Vec<String>,
    pub descriptions: Vec<String>,
    pub organizations: Vec<String>,
    pub with_deleted: bool,
}

/// `sacctmgr add user`.
#[derive(Debug, Clone, Default)]
pub struct AddUsers {
    pub names: Vec<String>,
    /// Accounts to associate the users with.
    pub accounts: Vec<String>,
    /// Default: the first of `accounts`.
    pub default_account: Option<String>,
    pub admin_level: Option<AdminLevel>,
    /// Default: every cluster the account is on.
    pub clusters: Vec<String>,
    /// `Fairshare=` of the new associations.
    pub fairshare: Option<sluice_vocab::fairshare::Shares>,
    /// Limits of the new associations (`MaxJobs=`, `GrpTRES=` ...).
    pub limits: sluice_vocab::assoc_limits::AssocLimitsEdit,
}

/// `sacctmgr modify user`.
#[derive(Debug, Clone, Default)]
pub struct ModifyUsers {
    pub names: Vec<String>,
    pub where_accounts: Vec<String>,
    pub where_admin_levels: Vec<AdminLevel>,
    pub default_account: Option<String>,
    pub admin_level: Option<AdminLevel>,
    /// `Fairshare=` of the users' associations (with `where_accounts` when given).
    pub fairshare: Option<sluice_vocab::fairshare::Shares>,
}

/// `sacctmgr delete user`: whole users, or only their associations with `accounts`.
#[derive(Debug, Clone, Default)]
pub struct DeleteUsers {
    pub names: Vec<String>,
    pub accounts: Vec<String>,
}

/// `sacctmgr show user`.
#[derive(Debug, Clone, Default)]
pub struct UserFilter {
    pub names: Vec<String>,
    pub default_accounts: Vec<String>,
    pub admin_levels: Vec<AdminLevel>,
    pub with_deleted: bool,
}

/// `sacctmgr show association`.
#[derive(Debug, Clone, Default)]
pub struct AssociationFilter {
    pub clusters: Vec<String>,
    pub accounts: Vec<String>,
    pub users: Vec<String>,
}

/// The longest name a key column holds (VARCHAR(255) on MySQL).
const MAX_NAME_LEN: usize = 255;

/// Checks one object name: not empty, at most 255 bytes, and free of the characters sacctmgr
/// uses as separators (`,`, `=`, quotes, whitespace) or as edit prefixes (`+`, `-` in front).
pub(crate) fn check_name(kind: ObjectKind, name: &str) -> Result<(), StoreError> {
    let bad = name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name.starts_with(['+', '-'])
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, ',' | '=' | '\'' | '"'));
    if bad {
        return Err(StoreError::InvalidName {
            kind,
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Checks every name of an add request and drops repeats, keeping the first occurrence.
pub(crate) fn checked_names(kind: ObjectKind, names: &[String]) -> Result<Vec<String>, StoreError> {
    if names.is_empty() {
        return Err(StoreError::NoNames { kind });
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        check_name(kind, name)?;
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// `sacctmgr add|delete coordinator`: users and the accounts granted (or revoked).
#[derive(Debug, Clone, Default)]
pub struct Coordinators {
    pub names: Vec<String>,
    pub accounts: Vec<String>,
}
