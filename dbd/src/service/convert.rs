//! Wire messages to store requests and store records to wire messages: the only place that
//! knows both.

use sluice_wire::proto;
use tonic::Status;

use crate::store::{
    AccountFilter, AddAccounts, AddClusters, AddFederations, AddUsers, AdminLevel, Apply,
    AssociationFilter, Change, ClusterFilter, CoordChange, Coordinators, DeleteClusters,
    DeleteUsers, FederationFilter, ListEdit, ModifyAccounts, ModifyClusters, ModifyFederations,
    ModifyUsers, StoreError, UserFilter,
};

/// A change request decoded: what to do and whether to commit it.
pub(super) type Decoded<T> = Result<(T, Apply), Status>;

fn admin_level(s: &str) -> Result<AdminLevel, Status> {
    AdminLevel::parse(s).ok_or_else(|| {
        StoreError::InvalidAdminLevel {
            value: s.to_string(),
        }
        .into()
    })
}

pub(super) fn fairshare(
    s: Option<String>,
) -> Result<Option<sluice_vocab::fairshare::Shares>, Status> {
    s.map(|v| {
        sluice_vocab::fairshare::Shares::parse(&v)
            .ok_or_else(|| StoreError::InvalidFairshare { value: v }.into())
    })
    .transpose()
}

fn admin_levels(items: &[String]) -> Result<Vec<AdminLevel>, Status> {
    items.iter().map(|s| admin_level(s)).collect()
}

fn list_edit(edit: proto::ListEdit) -> Result<ListEdit, Status> {
    match proto::ListOp::try_from(edit.op) {
        Ok(proto::ListOp::Set) => Ok(ListEdit::Set(edit.items)),
        Ok(proto::ListOp::Add) => Ok(ListEdit::Add(edit.items)),
        Ok(proto::ListOp::Remove) => Ok(ListEdit::Remove(edit.items)),
        Ok(proto::ListOp::Unspecified) | Err(_) => Err(Status::invalid_argument(format!(
            "invalid list operation {}",
            edit.op
        ))),
    }
}

pub(super) fn add_clusters(m: proto::AddClustersRequest) -> Decoded<AddClusters> {
    let req = AddClusters {
        names: m.names,
        federation: m.federation,
        fed_state: m.fed_state,
        features: m.features,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn modify_clusters(m: proto::ModifyClustersRequest) -> Decoded<ModifyClusters> {
    let req = ModifyClusters {
        names: m.names,
        where_federations: m.where_federations,
        federation: m.federation,
        fed_state: m.fed_state,
        features: m.features.map(list_edit).transpose()?,
        control_host: m.control_host,
        control_port: m.control_port,
        rpc_version: m.rpc_version,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn delete_clusters(m: proto::DeleteClustersRequest) -> Decoded<DeleteClusters> {
    let req = DeleteClusters {
        names: m.names,
        where_federations: m.where_federations,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn cluster_filter(m: proto::ListClustersRequest) -> ClusterFilter {
    ClusterFilter {
        names: m.names,
        federations: m.federations,
        with_deleted: m.with_deleted,
    }
}

pub(super) fn add_federations(m: proto::AddFederationsRequest) -> Decoded<AddFederations> {
    let req = AddFederations {
        names: m.names,
        clusters: m.clusters,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn modify_federations(m: proto::ModifyFederationsRequest) -> Decoded<ModifyFederations> {
    let req = ModifyFederations {
        names: m.names,
        clusters: m.clusters,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn delete_federations(m: proto::DeleteFederationsRequest) -> Decoded<Vec<String>> {
    Ok((m.names, Apply::from_commit(m.commit)))
}

pub(super) fn federation_filter(m: proto::ListFederationsRequest) -> FederationFilter {
    FederationFilter {
        names: m.names,
        clusters: m.clusters,
        with_deleted: m.with_deleted,
    }
}

pub(super) fn add_accounts(m: proto::AddAccountsRequest) -> Decoded<AddAccounts> {
    let req = AddAccounts {
        names: m.names,
        description: m.description,
        organization: m.organization,
        parent: m.parent,
        clusters: m.clusters,
        fairshare: fairshare(m.fairshare)?,
        limits: super::limits::edit(m.limits.unwrap_or_default())?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn modify_accounts(m: proto::ModifyAccountsRequest) -> Decoded<ModifyAccounts> {
    let req = ModifyAccounts {
        names: m.names,
        where_description: m.where_description,
        where_organization: m.where_organization,
        description: m.description,
        organization: m.organization,
        parent: m.parent,
        fairshare: fairshare(m.fairshare)?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn delete_accounts(m: proto::DeleteAccountsRequest) -> Decoded<Vec<String>> {
    Ok((m.names, Apply::from_commit(m.commit)))
}

pub(super) fn account_filter(m: proto::ListAccountsRequest) -> AccountFilter {
    AccountFilter {
        names: m.names,
        descriptions: m.descriptions,
        organizations: m.organizations,
        with_deleted: m.with_deleted,
    }
}

pub(super) fn add_users(m: proto::AddUsersRequest) -> Decoded<AddUsers> {
    let req = AddUsers {
        names: m.names,
        accounts: m.accounts,
        default_account: m.default_account,
        admin_level: m.admin_level.as_deref().map(admin_level).transpose()?,
        clusters: m.clusters,
        fairshare: fairshare(m.fairshare)?,
        limits: super::limits::edit(m.limits.unwrap_or_default())?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn modify_users(m: proto::ModifyUsersRequest) -> Decoded<ModifyUsers> {
    let req = ModifyUsers {
        names: m.names,
        where_accounts: m.where_accounts,
        where_admin_levels: admin_levels(&m.where_admin_levels)?,
        default_account: m.default_account,
        admin_level: m.admin_level.as_deref().map(admin_level).transpose()?,
        fairshare: fairshare(m.fairshare)?,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn delete_users(m: proto::DeleteUsersRequest) -> Decoded<DeleteUsers> {
    let req = DeleteUsers {
        names: m.names,
        accounts: m.accounts,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn user_filter(m: proto::ListUsersRequest) -> Result<UserFilter, Status> {
    Ok(UserFilter {
        names: m.names,
        default_accounts: m.default_accounts,
        admin_levels: admin_levels(&m.admin_levels)?,
        with_deleted: m.with_deleted,
    })
}

pub(super) fn association_filter(m: proto::ListAssociationsRequest) -> AssociationFilter {
    AssociationFilter {
        clusters: m.clusters,
        accounts: m.accounts,
        users: m.users,
    }
}

pub(super) fn change_reply(c: Change) -> proto::ChangeReply {
    proto::ChangeReply {
        committed: c.committed,
        nothing_changed: c.nothing_changed(),
        names: c.names,
        revoked: Vec::new(),
    }
}

pub(super) fn coordinators(m: proto::CoordinatorsRequest) -> Decoded<Coordinators> {
    let req = Coordinators {
        names: m.names,
        accounts: m.accounts,
    };
    Ok((req, Apply::from_commit(m.commit)))
}

pub(super) fn coord_change_reply(c: CoordChange) -> proto::ChangeReply {
    proto::ChangeReply {
        committed: c.committed,
        nothing_changed: c.revoked.is_empty(),
        names: c.revoked.iter().map(|(u, _)| u.clone()).collect(),
        revoked: c
            .revoked
            .into_iter()
            .map(|(user, account)| proto::CoordinatorGrant { user, account })
            .collect(),
    }
}

pub(super) fn cluster(c: crate::store::Cluster) -> proto::Cluster {
    proto::Cluster {
        name: c.name,
        control_host: c.control_host,
        control_port: c.control_port,
        rpc_version: c.rpc_version,
        federation: c.federation,
        fed_id: c.fed_id,
        fed_state: c.fed_state,
        features: c.features,
        creation_time: c.creation_time,
        mod_time: c.mod_time,
        deleted: c.deleted,
        classification: c.classification,
    }
}

pub(super) fn federation(f: crate::store::Federation) -> proto::Federation {
    proto::Federation {
        name: f.name,
        flags: f.flags,
        creation_time: f.creation_time,
        mod_time: f.mod_time,
        deleted: f.deleted,
        clusters: f.clusters.into_iter().map(cluster).collect(),
    }
}

pub(super) fn account(a: crate::store::Account) -> proto::Account {
    proto::Account {
        name: a.name,
        description: a.description,
        organization: a.organization,
        parent: a.parent,
        deleted: a.deleted,
        coordinators: a.coordinators,
    }
}

pub(super) fn user(u: crate::store::User) -> proto::User {
    proto::User {
        name: u.name,
        default_account: u.default_account,
        admin_level: u.admin_level.name().to_string(),
        deleted: u.deleted,
        coord_accounts: u.coord_accounts,
    }
}

pub(super) fn association(a: crate::store::Association) -> proto::Association {
    proto::Association {
        id: a.id,
        cluster: a.cluster,
        account: a.account,
        user: a.user,
        parent_account: a.parent_account,
        limits: Some(super::limits::encode(&a.limits)),
        qos: a.qos,
        default_qos: a.default_qos,
        ..Default::default()
    }
}

/// An association with its fair-share data (`ListAssociationsRequest.with_usage`).
pub(super) fn association_share(s: crate::store::fairshare::AssocShare) -> proto::Association {
    proto::Association {
        shares: s.shares,
        raw_usage: s.raw_usage,
        raw_mem_usage: s.mem_usage,
        raw_node_usage: s.node_usage,
        run_cpu_mins: s.run_cpu_mins,
        ..association(s.assoc)
    }
}

pub(super) fn job_id_range(r: crate::store::JobIdRange) -> proto::JobIdRange {
    proto::JobIdRange {
        first: r.first,
        count: r.count,
    }
}
