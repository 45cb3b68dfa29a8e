//! sshare's fields: names, headers, widths and each association's values (Slurm 22.05's
//! default and `-l` lists), and `-o name[%width],...`.

use crate::output::Column;
use sluice_vocab::fairshare::ShareRow;

/// One sshare field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Account,
    Cluster,
    User,
    Partition,
    RawShares,
    NormShares,
    RawUsage,
    NormUsage,
    EffectvUsage,
    FairShare,
    LevelFs,
    GrpTresMins,
    TresRunMins,
}

/// (name, field, header, width; negative is left-justified), in the order prefixes match.
const TABLE: &[(&str, Field, &str, i32)] = &[
    ("Account", Field::Account, "Account", -20),
    ("Cluster", Field::Cluster, "Cluster", 10),
    ("User", Field::User, "User", 10),
    ("Partition", Field::Partition, "Partition", 12),
    ("RawShares", Field::RawShares, "RawShares", 10),
    ("NormShares", Field::NormShares, "NormShares", 11),
    ("RawUsage", Field::RawUsage, "RawUsage", 11),
    ("NormUsage", Field::NormUsage, "NormUsage", 11),
    ("EffectvUsage", Field::EffectvUsage, "EffectvUsage", 13),
    ("FairShare", Field::FairShare, "FairShare", 10),
    ("LevelFS", Field::LevelFs, "LevelFS", 10),
    ("GrpTRESMins", Field::GrpTresMins, "GrpTRESMins", 11),
    ("TRESRunMins", Field::TresRunMins, "TRESRunMins", 20),
];

/// Slurm 22.05's default fields.
pub const DEFAULT: &[&str] = &[
    "Account",
    "User",
    "RawShares",
    "NormShares",
    "RawUsage",
    "EffectvUsage",
    "FairShare",
];

/// `-l`'s fields.
pub const LONG: &[&str] = &[
    "Account",
    "User",
    "RawShares",
    "NormShares",
    "RawUsage",
    "NormUsage",
    "EffectvUsage",
    "FairShare",
    "LevelFS",
    "GrpTRESMins",
    "TRESRunMins",
];

/// Parses field names (`name[%width]`): an exact name, else the first that starts with it
/// (any case). `Err` is Slurm's message.
pub fn parse(names: &[String]) -> Result<Vec<(Field, Column)>, String> {
    names
        .iter()
        .map(|item| {
            let (name, width) = match item.split_once('%') {
                Some((n, w)) => (n, w.parse::<i32>().ok()),
                None => (item.as_str(), None),
            };
            let lower = name.to_ascii_lowercase();
            let spec = TABLE
                .iter()
                .find(|s| s.0.eq_ignore_ascii_case(name))
                .or_else(|| {
                    (!lower.is_empty())
                        .then(|| {
                            TABLE
                                .iter()
                                .find(|s| s.0.to_ascii_lowercase().starts_with(&lower))
                        })
                        .flatten()
                })
                .ok_or_else(|| format!("sshare: error: Invalid field requested: \"{name}\""))?;
            let w = width.map_or(spec.3, |w| if spec.3 < 0 { -w.abs() } else { w });
            Ok((spec.1, Column::new(spec.2, w)))
        })
        .collect()
}

/// One printed association: its numbers and its running jobs' CPU-minutes left.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The fair-share numbers.
    pub row: ShareRow,
    /// The cluster.
    pub cluster: String,
    /// CPU-minutes its (subtree's) running jobs have left.
    pub run_cpu_mins: u64,
}

/// A line's value for `field`.
pub fn value(l: &Line, field: Field) -> String {
    let r = &l.row;
    let user_line = !r.user.is_empty();
    match field {
        Field::Account => format!("{}{}", " ".repeat(r.depth), r.account),
        Field::Cluster => l.cluster.clone(),
        Field::User => r.user.clone(),
        Field::RawShares => r.shares.map(|s| s.to_string()).unwrap_or_default(),
        Field::NormShares => format!("{:.6}", r.norm_shares),
        Field::RawUsage => format!("{:.0}", r.raw_usage),
        Field::NormUsage => format!("{:.6}", r.norm_usage),
        Field::EffectvUsage => format!("{:.6}", r.effective_usage),
        // Classic fair share gives users their factor; accounts only pass theirs down.
        Field::FairShare if user_line => format!("{:.6}", r.fairshare),
        Field::TresRunMins => format!("cpu={}", l.run_cpu_mins),
        // No partition associations, no Fair Tree level factor, no TRES-minute limits here.
        Field::FairShare | Field::Partition | Field::LevelFs | Field::GrpTresMins => String::new(),
    }
}
