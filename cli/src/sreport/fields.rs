//! The `format=` fields of each report family, with Slurm's headers, default widths and
//! keyword prefixes.
//!
//! Slurm matches a format word against its list in a fixed order, each entry with a minimum
//! prefix, so the order of the tables matters (`pl` is Planned, `PLNDDown` PLND Down).
//! `name%N` sets the width (negative: left-justified). Usage columns are resized from the data
//! afterwards, as Slurm's `sreport_set_usage_col_width` does, whatever width was asked for.
//! Fields Slurm knows but Sluice keeps no data for (QOS, WCKeys, job durations) print blank.

use crate::output::{Column, width};

use super::units::TimeFormat;
use crate::words::is_keyword;

/// A printable field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Cluster,
    Account,
    Login,
    Proper,
    Used,
    Energy,
    TresName,
    TresCount,
    Allocated,
    Down,
    PlannedDown,
    Idle,
    Planned,
    Reported,
    Over,
    Qos,
    QosId,
    WcKey,
    Duration,
    JobCount,
    NodeCount,
    User,
}

/// Which report family's field table applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `cluster ...` reports.
    Cluster,
    /// `user TopUsage`.
    User,
    /// `job SizesByAccount`.
    Job,
}

/// One table entry: keyword, minimum prefix, field, header, width, and width for `*Per`.
struct Spec(&'static str, usize, Field, &'static str, i32, i32);

const CLUSTER: &[Spec] = &[
    Spec("Accounts", 2, Field::Account, "Account", 15, 15),
    Spec("allocated", 2, Field::Allocated, "Allocated", 12, 20),
    Spec("Cluster", 2, Field::Cluster, "Cluster", 9, 9),
    Spec("down", 1, Field::Down, "Down", 10, 18),
    Spec("idle", 1, Field::Idle, "Idle", 12, 20),
    Spec("Login", 1, Field::Login, "Login", 9, 9),
    Spec("overcommitted", 1, Field::Over, "Over Comm", 9, 18),
    Spec("planned", 2, Field::Planned, "Planned", 9, 18),
    Spec("reserved", 3, Field::Planned, "Planned", 9, 18),
    Spec("PlannedDown", 2, Field::PlannedDown, "PLND Down", 10, 18),
    Spec("PLNDDown", 2, Field::PlannedDown, "PLND Down", 10, 18),
    Spec("Proper", 2, Field::Proper, "Proper Name", 15, 15),
    Spec("QOS", 1, Field::Qos, "QOS", 12, 12),
    Spec("QOSID", 4, Field::QosId, "QOS ID", 8, 8),
    Spec("reported", 3, Field::Reported, "Reported", 12, 20),
    Spec("TresCount", 5, Field::TresCount, "TRES Count", 10, 10),
    Spec("cpucount", 2, Field::TresCount, "TRES Count", 10, 10),
    Spec("count", 2, Field::TresCount, "TRES Count", 10, 10),
    Spec("TresName", 5, Field::TresName, "TRES Name", 14, 14),
    Spec("Used", 1, Field::Used, "Used", 10, 18),
    Spec("WCKey", 2, Field::WcKey, "WCKey", 15, 15),
    Spec("Energy", 1, Field::Energy, "Energy", 10, 18),
];

const USER: &[Spec] = &[
    Spec("Accounts", 1, Field::Account, "Account", 15, 15),
    Spec("Cluster", 1, Field::Cluster, "Cluster", 9, 9),
    Spec("Energy", 1, Field::Energy, "Energy", 10, 18),
    Spec("Login", 1, Field::Login, "Login", 9, 9),
    Spec("Proper", 1, Field::Proper, "Proper Name", 15, 15),
    Spec("TresName", 5, Field::TresName, "TRES Name", 14, 14),
    Spec("Used", 1, Field::Used, "Used", 10, 18),
];

const JOB: &[Spec] = &[
    Spec("Account", 1, Field::Account, "Account", 9, 9),
    Spec("Acct", 4, Field::Account, "Account", 9, 9),
    Spec("Cluster", 2, Field::Cluster, "Cluster", 9, 9),
    Spec("Duration", 1, Field::Duration, "Duration", 12, 12),
    Spec("JobCount", 2, Field::JobCount, "Job Count", 9, 9),
    Spec("NodeCount", 2, Field::NodeCount, "Node Count", 9, 9),
    Spec("TresCount", 5, Field::TresCount, "TRES Count", 10, 10),
    Spec("CpuCount", 2, Field::TresCount, "TRES Count", 10, 10),
    Spec("count", 2, Field::TresCount, "TRES Count", 10, 10),
    Spec("User", 1, Field::User, "User", 9, 9),
    Spec("Wckey", 1, Field::WcKey, "Wckey", 9, 9),
];

/// A field chosen for output, with its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub field: Field,
    pub column: Column,
}

/// Resolves a format list (`Cl,al,Used%20`). Unknown words are skipped and returned as
/// Slurm's ` Unknown field '...'` messages; the report still runs with the rest.
pub fn parse_format(
    family: Family,
    items: &[String],
    tree: bool,
    time: TimeFormat,
) -> (Vec<Chosen>, Vec<String>) {
    let table = match family {
        Family::Cluster => CLUSTER,
        Family::User => USER,
        Family::Job => JOB,
    };
    let mut chosen = Vec::new();
    let mut errors = Vec::new();
    for item in items {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n, width::parse_signed(w)),
            None => (item.as_str(), 0),
        };
        let Some(spec) = table.iter().find(|s| is_keyword(name, s.0, s.1)) else {
            errors.push(format!(" Unknown field '{name}'"));
            continue;
        };
        let mut default = if time.is_per() { spec.5 } else { spec.4 };
        if spec.2 == Field::Account && family == Family::Cluster && tree {
            default = -20;
        }
        chosen.push(Chosen {
            field: spec.2,
            column: Column::new(spec.3, if width == 0 { default } else { width }),
        });
    }
    (chosen, errors)
}

/// Splits comma lists as Slurm's `slurm_addto_char_list` does: blanks dropped, quotes
/// stripped, duplicates (case-insensitive) kept once, order kept; appends to `list`.
pub fn add_to_list(list: &mut Vec<String>, value: &str) {
    for item in value.split(',') {
        let item = item.trim().trim_matches(|c| c == '"' || c == '\'');
        if !item.is_empty() && !list.iter().any(|l| l.eq_ignore_ascii_case(item)) {
            list.push(item.to_string());
        }
    }
}

/// C's `atoi`: an optional sign and the digits that follow; anything else is 0.
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i32>().map_or(0, |n| sign * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(family: Family, list: &str, tree: bool, t: TimeFormat) -> Vec<(Field, String, i32)> {
        let mut items = Vec::new();
        add_to_list(&mut items, list);
        let (chosen, errors) = parse_format(family, &items, tree, t);
        assert!(errors.is_empty(), "{errors:?}");
        chosen
            .into_iter()
            .map(|c| (c.field, c.column.header, c.column.width))
            .collect()
    }

    #[test]
    fn utilization_default_format_resolves() {
        let c = cols(
            Family::Cluster,
            "Cl,al,d,PLNDDown,i,res,rep",
            false,
            TimeFormat::Minutes,
        );
        let headers: Vec<&str> = c.iter().map(|(_, h, _)| h.as_str()).collect();
        assert_eq!(
            headers,
            [
                "Cluster",
                "Allocated",
                "Down",
                "PLND Down",
                "Idle",
                "Planned",
                "Reported"
            ]
        );
        assert_eq!(c[1].2, 12);
        let per = cols(
            Family::Cluster,
            "al,pl,PlannedDown,over",
            false,
            TimeFormat::MinPer,
        );
        assert_eq!(
            per.iter().map(|c| (c.0, c.2)).collect::<Vec<_>>(),
            [
                (Field::Allocated, 20),
                (Field::Planned, 18),
                (Field::PlannedDown, 18),
                (Field::Over, 18)
            ]
        );
    }

    #[test]
    fn prefixes_widths_and_tree_accounts() {
        let c = cols(
            Family::Cluster,
            "Ac,Login%-12,Proper,count,TresN",
            true,
            TimeFormat::Minutes,
        );
        assert_eq!(
            c,
            [
                (Field::Account, "Account".into(), -20),
                (Field::Login, "Login".into(), -12),
                (Field::Proper, "Proper Name".into(), 15),
                (Field::TresCount, "TRES Count".into(), 10),
                (Field::TresName, "TRES Name".into(), 14),
            ]
        );
        let u = cols(
            Family::User,
            "Cl,L,P,A,U,Energy",
            false,
            TimeFormat::Minutes,
        );
        assert_eq!(
            u.iter().map(|c| c.2).collect::<Vec<_>>(),
            [9, 9, 15, 15, 10, 10]
        );
        let j = cols(Family::Job, "Cl,a%-20", false, TimeFormat::Minutes);
        assert_eq!(
            j,
            [
                (Field::Cluster, "Cluster".into(), 9),
                (Field::Account, "Account".into(), -20)
            ]
        );
    }

    #[test]
    fn unknown_fields_are_reported_and_skipped() {
        let items = vec!["Cl".to_string(), "xyz%3".to_string(), "c".to_string()];
        let (chosen, errors) = parse_format(Family::Cluster, &items, false, TimeFormat::Minutes);
        assert_eq!(chosen.len(), 1);
        assert_eq!(errors, [" Unknown field 'xyz'", " Unknown field 'c'"]);
    }

    #[test]
    fn lists_dedupe_case_insensitively() {
        let mut l = vec!["a".to_string()];
        add_to_list(&mut l, "'b,,A, c'");
        assert_eq!(l, ["a", "b", "c"]);
        assert_eq!((atoi("20x"), atoi("-5"), atoi("x")), (20, -5, 0));
    }
}
