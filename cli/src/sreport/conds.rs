//! The words after a report name (`start=... end=... format=... Tree TopCount=5 ...`), with
//! the keywords and minimum prefixes each report family accepts in Slurm.
//!
//! A bare word that is no keyword names clusters (cluster and job reports) or users
//! (association and user reports), as in Slurm. Unknown `key=value` words print Slurm's
//! " Unknown condition" text and make the exit code 1, but the report still runs.

use super::error::SreportError;
use super::fields::{add_to_list, atoi};
use crate::words::is_keyword;

/// The report a set of conditions is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `cluster Utilization`.
    Utilization,
    /// `cluster AccountUtilizationByUser`.
    AccountByUser,
    /// `cluster UserUtilizationByAccount`.
    UserByAccount,
    /// `user TopUsage`.
    TopUsage,
    /// `job SizesByAccount`.
    JobSizes,
}

/// What the words asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conds {
    pub clusters: Vec<String>,
    pub all_clusters: bool,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    /// `start=`, parsed (unix seconds); rounding happens in [`super::window`].
    pub start: Option<i64>,
    /// `end=`, parsed.
    pub end: Option<i64>,
    pub format: Vec<String>,
    pub tree: bool,
    pub group: bool,
    pub top_count: u32,
    pub grouping: Vec<String>,
    pub individual: bool,
    pub print_job_count: bool,
    pub flat_view: bool,
    pub acct_as_parent: bool,
}

impl Default for Conds {
    fn default() -> Self {
        Self {
            clusters: Vec::new(),
            all_clusters: false,
            users: Vec::new(),
            accounts: Vec::new(),
            start: None,
            end: None,
            format: Vec::new(),
            tree: false,
            group: false,
            top_count: 10,
            grouping: Vec::new(),
            individual: false,
            print_job_count: false,
            flat_view: false,
            acct_as_parent: false,
        }
    }
}

/// Parses a time given to `start=`/`end=`.
pub type TimeParser<'a> = &'a dyn Fn(&str) -> Result<i64, String>;

/// Parses the words of a `kind` report. `Ok` carries the conditions and the messages to print
/// on stderr (each makes the exit code 1); `Err` stops the report.
pub fn parse(
    kind: Kind,
    words: &[String],
    time: TimeParser<'_>,
) -> Result<(Conds, Vec<String>), SreportError> {
    let mut c = Conds::default();
    let mut warnings = Vec::new();
    for raw in words {
        let (key, value) = match raw.find('=') {
            Some(i) => {
                let v = &raw[i + 1..];
                (&raw[..i], Some(v.strip_prefix('=').unwrap_or(v)))
            }
            None => (raw.as_str(), None),
        };
        let kw = |name: &str, min: usize| is_keyword(key, name, min);
        let assoc = matches!(kind, Kind::AccountByUser | Kind::UserByAccount);
        let job = kind == Kind::JobSizes;
        match value {
            None if kw("all_clusters", 1) => c.all_clusters = true,
            None if assoc && kw("Tree", 4) => c.tree = true,
            None if kind == Kind::TopUsage && kw("group", 1) => c.group = true,
            None if job && kw("PrintJobCount", 2) => c.print_job_count = true,
            None if job && kw("FlatView", 2) => c.flat_view = true,
            None if job && kw("AcctAsParent", 2) => c.acct_as_parent = true,
            None if assoc || kind == Kind::TopUsage => add_to_list(&mut c.users, key),
            None => add_to_list(&mut c.clusters, key),
            Some(v) if (assoc || job || kind == Kind::TopUsage) && kw("Users", 1) => {
                add_to_list(&mut c.users, v)
            }
            Some(v) if kind != Kind::Utilization && (kw("Accounts", 2) || kw("Acct", 4)) => {
                add_to_list(&mut c.accounts, v)
            }
            Some(v) if kw("Clusters", 1) => add_to_list(&mut c.clusters, v),
            Some(v) if kw("End", 1) => c.end = Some(time(v).map_err(SreportError::BadTime)?),
            Some(v) if kw("Format", if job { 2 } else { 1 }) => add_to_list(&mut c.format, v),
            Some(v) if kw("Start", 1) => c.start = Some(time(v).map_err(SreportError::BadTime)?),
            Some(v) if kind == Kind::TopUsage && kw("TopCount", 1) => match top_count(v) {
                Some(n) => c.top_count = n,
                None => warnings.push(SreportError::BadTopCount(v.to_string()).to_string()),
            },
            Some(v) if job && kw("grouping", 2) => {
                if v.starts_with(['i', 'I']) {
                    c.individual = true;
                } else {
                    add_to_list(&mut c.grouping, v);
                }
            }
            Some(_) if unsupported(kind, key) => {
                return Err(SreportError::UnsupportedCondition(key.to_string()));
            }
            Some(_) => warnings.push(format!(
                " Unknown condition: {raw}\nUse keyword set to modify value"
            )),
        }
    }
    Ok((c, warnings))
}

/// Conditions Slurm accepts that filter on data Sluice does not keep for the report; running
/// the report without the filter would print wrong numbers, so they stop it.
fn unsupported(kind: Kind, key: &str) -> bool {
    let kw = |name: &str, min: usize| is_keyword(key, name, min);
    match kind {
        Kind::AccountByUser | Kind::UserByAccount => kw("QosLevel", 1),
        Kind::JobSizes => {
            kw("Associations", 2)
                || kw("Gid", 2)
                || kw("Jobs", 1)
                || kw("Nodes", 1)
                || kw("Partitions", 2)
                || kw("Wckeys", 2)
        }
        Kind::Utilization | Kind::TopUsage => false,
    }
}

/// Slurm's `get_uint`: `strtol`, an error only for a non-number; negative means "no limit".
fn top_count(v: &str) -> Option<u32> {
    let v = v.trim_matches(|c| c == '"' || c == '\'');
    let n = atoi(v);
    if n == 0 && !v.trim_start().starts_with(['0', '+', '-']) {
        return None;
    }
    Some(u32::try_from(n).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(v: &str) -> Result<i64, String> {
        v.parse::<i64>().map_err(|_| v.to_string())
    }

    fn run(kind: Kind, words: &[&str]) -> Result<(Conds, Vec<String>), SreportError> {
        let w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
        parse(kind, &w, &time)
    }

    #[test]
    fn common_words() {
        let (c, warn) = run(
            Kind::Utilization,
            &[
                "start=100",
                "E=200",
                "format=Cl,al",
                "Format=al,rep",
                "c2",
                "clusters=c3,c2",
                "a",
            ],
        )
        .unwrap();
        assert!(warn.is_empty());
        assert_eq!((c.start, c.end), (Some(100), Some(200)));
        assert_eq!(c.format, ["Cl", "al", "rep"]);
        assert_eq!(c.clusters, ["c2", "c3"]);
        assert!(c.all_clusters);
    }

    #[test]
    fn report_specific_words() {
        let (c, _) = run(
            Kind::AccountByUser,
            &["tree", "alice", "users=bob", "acc=phys"],
        )
        .unwrap();
        assert!(c.tree);
        assert_eq!(
            (c.users.as_slice(), c.accounts.as_slice()),
            (
                &["alice".to_string(), "bob".into()][..],
                &["phys".to_string()][..]
            )
        );
        let (t, warn) = run(Kind::TopUsage, &["TopCount=3", "group", "topcount=x"]).unwrap();
        assert_eq!((t.top_count, t.group), (3, true));
        assert_eq!(warn, ["sreport: error: Invalid value for TopCount (x)"]);
        let (j, _) = run(
            Kind::JobSizes,
            &["printjob", "flat", "grouping=10,20", "gr=individual"],
        )
        .unwrap();
        assert!(j.print_job_count && j.flat_view && j.individual);
        assert_eq!(j.grouping, ["10", "20"]);
    }

    #[test]
    fn unknown_conditions_warn_and_unsupported_filters_stop() {
        let (_, warn) = run(Kind::Utilization, &["tree=1", "accounts=x"]).unwrap();
        assert_eq!(
            warn,
            [
                " Unknown condition: tree=1\nUse keyword set to modify value",
                " Unknown condition: accounts=x\nUse keyword set to modify value"
            ]
        );
        assert!(matches!(
            run(Kind::JobSizes, &["partitions=debug"]),
            Err(SreportError::UnsupportedCondition(_))
        ));
        let (j, warn) = run(Kind::JobSizes, &["users=alice,bob", "u=carol"]).unwrap();
        assert!(warn.is_empty());
        assert_eq!(j.users, ["alice", "bob", "carol"]);
        assert!(matches!(
            run(Kind::Utilization, &["start=yesterday"]),
            Err(SreportError::BadTime(_))
        ));
    }
}
