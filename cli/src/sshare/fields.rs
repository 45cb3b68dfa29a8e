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
    GrpTresRaw,
    Id,
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
    ("GrpTRESRaw", Field::GrpTresRaw, "GrpTRESRaw", 11),
    ("ID", Field::Id, "ID", 6),
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

/// `--helpformat`: the field names, several to a line as Slurm prints them.
pub fn help_format() -> String {
    let mut names: Vec<&str> = TABLE.iter().map(|s| s.0).collect();
    names.sort_unstable();
    let mut out = String::new();
    for chunk in names.chunks(5) {
        let line: Vec<String> = chunk.iter().map(|n| format!("{n:<14}")).collect();
        out.push_str(line.join("").trim_end());
        out.push('\n');
    }
    out
}

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
    /// The association's id in the accounting database.
    pub id: u64,
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
        Field::LevelFs => match r.level_fs {
            Some(v) if v.is_infinite() => "inf".into(),
            Some(v) => format!("{v:.6}"),
            None => String::new(),
        },
        Field::Id => l.id.to_string(),
        // The decayed usage in TRES-minutes: Sluice charges CPUs only.
        Field::GrpTresRaw => format!("cpu={:.0}", r.raw_usage / 60.0),
        // No partition associations and no TRES-minute limits (sacctmgr cannot set
        // GrpTRESMins here): Slurm prints these empty when unset.
        Field::FairShare | Field::Partition | Field::GrpTresMins => String::new(),
    }
}
