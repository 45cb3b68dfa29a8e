//! The fields `format=` may name, with Slurm's headers, default widths and keyword prefixes.
//!
//! Slurm matches a format word against its field list in a fixed order, each with a minimum
//! prefix length, so the order of [`FIELDS`] matters (`Fa` is FairShare, `Fed` Federation).
//! A field Slurm knows but Sluice holds no value for prints blank.

use crate::output::{Column, width};

use super::args::split_list;
use super::error::SacctmgrError;

/// A printable field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Account,
    AdminLevel,
    Classification,
    ClusterNodes,
    Cluster,
    Coordinators,
    ControlHost,
    ControlPort,
    DefaultAccount,
    DefaultQos,
    Description,
    Features,
    Federation,
    FedState,
    FedStateRaw,
    Flags,
    GraceTime,
    GrpTres,
    GrpTresMins,
    GrpTresRunMins,
    GrpJobs,
    GrpMemory,
    GrpNodes,
    GrpSubmit,
    GrpWall,
    Id,
    Lft,
    MaxTres,
    MaxTresMins,
    MaxJobs,
    MaxJobsPerAccount,
    MaxJobsPerUser,
    MaxSubmitPerAccount,
    MaxSubmitPerUser,
    MaxTresPerAccount,
    MaxTresPerUser,
    MinTres,
    MaxTresPerNode,
    MaxNodes,
    MaxSubmit,
    MaxWall,
    Name,
    Organization,
    ParentId,
    ParentName,
    Partition,
    Preempt,
    PreemptExemptTime,
    PreemptMode,
    Priority,
    Qos,
    Reason,
    Rgt,
    Rpc,
    Share,
    Tres,
    UsageFactor,
    UsageThreshold,
    User,
}

/// One row of the table: the keyword, its minimum prefix, the field, header and width.
struct Spec(&'static str, usize, Field, &'static str, i32);

/// Slurm's order (`common.c`), restricted to the fields that make sense for Sluice's entities.
const FIELDS: &[Spec] = &[
    Spec("Account", 3, Field::Account, "Account", 10),
    Spec("Acct", 4, Field::Account, "Account", 10),
    Spec("AdminLevel", 2, Field::AdminLevel, "Admin", 9),
    Spec("TRES", 2, Field::Tres, "TRES", 20),
    Spec("Classification", 3, Field::Classification, "Class", 9),
    Spec("ClusterNodes", 8, Field::ClusterNodes, "Cluster Nodes", 20),
    Spec("Clusters", 2, Field::Cluster, "Cluster", 10),
    Spec("Coordinators", 3, Field::Coordinators, "Coord Accounts", 20),
    Spec("ControlHost", 8, Field::ControlHost, "ControlHost", 15),
    Spec("ControlPort", 8, Field::ControlPort, "ControlPort", 12),
    Spec("DefaultAccount", 8, Field::DefaultAccount, "Def Acct", 10),
    Spec("DefaultQOS", 8, Field::DefaultQos, "Def QOS", 9),
    Spec("Description", 3, Field::Description, "Descr", 20),
    Spec("Features", 3, Field::Features, "Features", 20),
    Spec("Federation", 3, Field::Federation, "Federation", 10),
    Spec("FedState", 4, Field::FedState, "FedState", 12),
    Spec("FedStateRaw", 9, Field::FedStateRaw, "FedStateRaw", 11),
    Spec("Flags", 2, Field::Flags, "Flags", 20),
    Spec("GraceTime", 3, Field::GraceTime, "GraceTime", 10),
    Spec("GrpTRES", 7, Field::GrpTres, "GrpTRES", 13),
    Spec("GrpTRESMins", 7, Field::GrpTresMins, "GrpTRESMins", 13),
    Spec(
        "GrpTRESRunMins",
        7,
        Field::GrpTresRunMins,
        "GrpTRESRunMins",
        13,
    ),
    Spec("GrpJobs", 4, Field::GrpJobs, "GrpJobs", 7),
    Spec("GrpMemory", 4, Field::GrpMemory, "GrpMem", 7),
    Spec("GrpNodes", 4, Field::GrpNodes, "GrpNodes", 8),
    Spec("GrpSubmitJobs", 4, Field::GrpSubmit, "GrpSubmit", 9),
    Spec("GrpWall", 4, Field::GrpWall, "GrpWall", 11),
    Spec("ID", 2, Field::Id, "ID", 6),
    Spec("LFT", 1, Field::Lft, "LFT", 6),
    Spec("MaxTRES", 7, Field::MaxTres, "MaxTRES", 13),
    Spec("MaxTRESPerJob", 11, Field::MaxTres, "MaxTRES", 13),
    Spec(
        "MaxTRESMinsPerJob",
        8,
        Field::MaxTresMins,
        "MaxTRESMins",
        13,
    ),
    Spec("MaxJobs", 4, Field::MaxJobs, "MaxJobs", 7),
    Spec(
        "MaxJobsPerAccount",
        11,
        Field::MaxJobsPerAccount,
        "MaxJobsPA",
        9,
    ),
    Spec("MaxJobsPA", 9, Field::MaxJobsPerAccount, "MaxJobsPA", 9),
    Spec("MaxJobsPerUser", 11, Field::MaxJobsPerUser, "MaxJobsPU", 9),
    Spec("MaxJobsPU", 9, Field::MaxJobsPerUser, "MaxJobsPU", 9),
    Spec(
        "MaxSubmitJobsPerAccount",
        17,
        Field::MaxSubmitPerAccount,
        "MaxSubmitPA",
        11,
    ),
    Spec(
        "MaxSubmitPA",
        11,
        Field::MaxSubmitPerAccount,
        "MaxSubmitPA",
        11,
    ),
    Spec(
        "MaxSubmitJobsPerUser",
        17,
        Field::MaxSubmitPerUser,
        "MaxSubmitPU",
        11,
    ),
    Spec(
        "MaxSubmitPU",
        11,
        Field::MaxSubmitPerUser,
        "MaxSubmitPU",
        11,
    ),
    Spec(
        "MaxTRESPerAccount",
        11,
        Field::MaxTresPerAccount,
        "MaxTRESPA",
        13,
    ),
    Spec("MaxTRESPA", 9, Field::MaxTresPerAccount, "MaxTRESPA", 13),
    Spec("MaxTRESPerUser", 11, Field::MaxTresPerUser, "MaxTRESPU", 13),
    Spec("MaxTRESPU", 9, Field::MaxTresPerUser, "MaxTRESPU", 13),
    Spec("MinTRESPerJob", 4, Field::MinTres, "MinTRES", 13),
    Spec(
        "MaxTRESPerNode",
        11,
        Field::MaxTresPerNode,
        "MaxTRESPerNode",
        14,
    ),
    Spec("MaxNodesPerJob", 4, Field::MaxNodes, "MaxNodes", 8),
    Spec("MaxSubmitJobs", 4, Field::MaxSubmit, "MaxSubmit", 9),
    Spec("MaxWallDurationPerJob", 4, Field::MaxWall, "MaxWall", 11),
    Spec("Name", 2, Field::Name, "Name", 10),
    Spec("Organization", 1, Field::Organization, "Org", 20),
    Spec("ParentID", 7, Field::ParentId, "ParentID", 8),
    Spec("ParentName", 7, Field::ParentName, "ParentName", 10),
    Spec("Partition", 4, Field::Partition, "Partition", 10),
    Spec("Preempt", 7, Field::Preempt, "Preempt", 10),
    Spec(
        "PreemptExemptTime",
        8,
        Field::PreemptExemptTime,
        "PreemptExemptTime",
        19,
    ),
    Spec("PreemptMode", 8, Field::PreemptMode, "PreemptMode", 11),
    Spec("Priority", 3, Field::Priority, "Priority", 10),
    Spec("QOSLevel", 3, Field::Qos, "QOS", 20),
    Spec("Reason", 1, Field::Reason, "Reason", 30),
    Spec("RGT", 1, Field::Rgt, "RGT", 6),
    Spec("RPC", 1, Field::Rpc, "RPC", 5),
    Spec("Share", 1, Field::Share, "Share", 9),
    Spec("FairShare", 2, Field::Share, "Share", 9),
    Spec("UsageFactor", 6, Field::UsageFactor, "UsageFactor", 11),
    Spec("UsageThreshold", 6, Field::UsageThreshold, "UsageThres", 10),
    Spec("User", 1, Field::User, "User", 10),
];

/// A field chosen for output, with its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub field: Field,
    pub column: Column,
}

/// Parses one format word (`Cluster`, `cl%20`, `ID%-4`).
pub fn parse_field(word: &str) -> Result<Chosen, SacctmgrError> {
    let (name, width) = match word.split_once('%') {
        Some((name, w)) => (name, width::parse_signed(w)),
        None => (word, 0),
    };
    let key = name.trim();
    let spec = FIELDS
        .iter()
        .find(|s| crate::words::is_keyword(key, s.0, s.1))
        .ok_or_else(|| SacctmgrError::UnknownField(key.to_string()))?;
    Ok(Chosen {
        field: spec.2,
        column: Column::new(spec.3, if width == 0 { spec.4 } else { width }),
    })
}

/// Parses a comma-separated format list (`Cl,Controlh,ID%2`).
pub fn parse_format(list: &str) -> Result<Vec<Chosen>, SacctmgrError> {
    split_list(list).iter().map(|w| parse_field(w)).collect()
}

/// The columns of a chosen field list.
pub fn columns(chosen: &[Chosen]) -> Vec<Column> {
    chosen.iter().map(|c| c.column.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &str) -> Vec<(Field, String, i32)> {
        parse_format(list)
            .unwrap()
            .into_iter()
            .map(|c| (c.field, c.column.header, c.column.width))
            .collect()
    }

    #[test]
    fn slurm_default_cluster_format_resolves() {
        let f = fields(
            "Cl,Controlh,Controlp,RPC,Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS",
        );
        let headers: Vec<&str> = f.iter().map(|(_, h, _)| h.as_str()).collect();
        assert_eq!(
            headers,
            [
                "Cluster",
                "ControlHost",
                "ControlPort",
                "RPC",
                "Share",
                "GrpJobs",
                "GrpTRES",
                "GrpSubmit",
                "MaxJobs",
                "MaxTRES",
                "MaxSubmit",
                "MaxWall",
                "QOS",
                "Def QOS"
            ]
        );
    }

    #[test]
    fn prefixes_follow_slurms_order_and_widths_override() {
        assert_eq!(
            fields("fed,feds,fedstateraw,fea"),
            [
                (Field::Federation, "Federation".into(), 10),
                (Field::FedState, "FedState".into(), 12),
                (Field::FedStateRaw, "FedStateRaw".into(), 11),
                (Field::Features, "Features".into(), 20),
            ]
        );
        assert_eq!(
            fields("ID%2,cluster%-20,acc%x"),
            [
                (Field::Id, "ID".into(), 2),
                (Field::Cluster, "Cluster".into(), -20),
                (Field::Account, "Account".into(), 10),
            ]
        );
        assert_eq!(fields("Acc,Des,O,U,DefaultA,Ad").len(), 6);
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = parse_format("cluster,xyz").unwrap_err();
        assert_eq!(e.to_string(), "Unknown field 'xyz'");
        assert!(
            parse_format("c").is_err(),
            "one letter is too short for Clusters"
        );
    }
}
