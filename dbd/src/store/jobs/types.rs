//! sacct's job query as the store takes it, and the pages it answers with (the semantics are
//! in [the module doc](super)).

use crate::store::types::records::JobRun;

/// sacct's selection of job runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobQuery {
    /// Clusters to search; empty = every cluster.
    pub clusters: Vec<String>,
    /// Job ids, matched against the job id and the array job id.
    pub job_ids: Vec<u32>,
    pub uids: Vec<u32>,
    /// Runs charged to these accounts match `uids` whoever submitted them (a coordinator's
    /// default sacct: its own jobs and its accounts').
    pub uid_or_accounts: Vec<String>,
    pub accounts: Vec<String>,
    /// Stored `JobState` values.
    pub states: Vec<u32>,
    pub names: Vec<String>,
    pub partitions: Vec<String>,
    /// Host names (sacct `--nodelist`, expanded): runs that used one of them; empty = any.
    pub nodes: Vec<String>,
    /// Window start (unix seconds); 0 = open.
    pub start: i64,
    /// Window end (unix seconds, inclusive); 0 = open.
    pub end: i64,
    /// Every run of every job, not only the newest.
    pub duplicates: bool,
    /// sacct `--federation`: without `duplicates`, a run is left out when the result holds a
    /// run with the same job id submitted more than a day later (see
    /// [`fed_dups`](super::fed_dups)).
    pub federation: bool,
    /// The runs may come without their steps (sacct -X showing no field made from them).
    pub no_steps: bool,
    /// sacct `--wckeys`: only jobs run under one of these wckeys; empty = any.
    pub wckeys: Vec<String>,
    /// The text fields the client reads (sacct's shown fields); `None`: every one. The others
    /// may come empty (see [`JobQuery::reads`]).
    pub fields: Option<Vec<TextField>>,
}

/// A text field of a job row that a reader may leave empty when its client does not show it:
/// reading and sending fewer strings is most of what a projected row saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextField {
    Name,
    User,
    Account,
    Partition,
    NodeList,
    WorkDir,
    Reason,
    Comment,
    WcKey,
    Qos,
}

impl TextField {
    /// The field named `name` in the wire's `JobRow` (`None` for any other name, which
    /// projects nothing away).
    pub fn from_wire(name: &str) -> Option<Self> {
        Some(match name {
            "name" => Self::Name,
            "user" => Self::User,
            "account" => Self::Account,
            "partition" => Self::Partition,
            "node_list" => Self::NodeList,
            "workdir" => Self::WorkDir,
            "reason" => Self::Reason,
            "comment" => Self::Comment,
            "wckey" => Self::WcKey,
            "qos" => Self::Qos,
            _ => return None,
        })
    }
}

impl JobQuery {
    /// Whether rows must carry `field`: the client reads it, or a condition checked on the
    /// rows needs it (`names`, `accounts`, `partitions`, `nodes`, `wckeys`).
    pub fn reads(&self, field: TextField) -> bool {
        let Some(fields) = &self.fields else {
            return true;
        };
        fields.contains(&field)
            || match field {
                TextField::Name => !self.names.is_empty(),
                TextField::Account => !self.accounts.is_empty() || !self.uid_or_accounts.is_empty(),
                TextField::Partition => !self.partitions.is_empty(),
                TextField::NodeList => !self.nodes.is_empty(),
                TextField::WcKey => !self.wckeys.is_empty(),
                TextField::User
                | TextField::WorkDir
                | TextField::Reason
                | TextField::Comment
                | TextField::Qos => false,
            }
    }
}

/// Where the next page of a query starts: just after this run in the result order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCursor {
    pub(super) cluster: String,
    pub(super) submit: i64,
    pub(super) job_id: i64,
    pub(super) run: i32,
}

impl JobCursor {
    /// The position inside its cluster: (submit time, job id, run).
    pub(super) fn key(&self) -> (i64, i64, i32) {
        (self.submit, self.job_id, self.run)
    }
}

/// One page of a job query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobPage {
    /// The runs, in result order, with their steps.
    pub runs: Vec<JobRun>,
    /// Where the next page starts; `None` when this is the last page.
    pub next: Option<JobCursor>,
}
