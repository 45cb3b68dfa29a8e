//! The store's domain types: records it returns and the change requests it takes. The gRPC
//! service converts the wire messages to and from these at its edge.
//!
//! They sit below everything else in the store (row models convert to and from them, the rules
//! take and return them) and use nothing of it. Here: the admin entities (clusters,
//! federations, accounts, users, associations, leases); [`records`]: accounting records and
//! the job runs sacct gets back; [`fed`]: the federation arbiter's jobs, events and views.

pub mod fed;
pub mod records;

use std::fmt;

/// Whether a change request commits or is a dry run that reports what it would do and rolls
/// back (sacctmgr's preview before "Would you like to commit changes?").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Apply {
    Commit,
    DryRun,
}

impl Apply {
    /// `Commit` when `commit` is true.
    pub fn from_commit(commit: bool) -> Self {
        if commit { Self::Commit } else { Self::DryRun }
    }
}

/// What a change request did (or would do, for a dry run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Whether the change was committed.
    pub committed: bool,
    /// The objects touched, in the order sacctmgr lists them.
    pub names: Vec<String>,
}

impl Change {
    /// Whether nothing matched (a delete that found nothing to delete).
    pub fn nothing_changed(&self) -> bool {
        self.names.is_empty()
    }
}

/// A user's administrative level, stored as 0, 1, 2 as Slurm does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum AdminLevel {
    #[default]
    None,
    Operator,
    Administrator,
}

impl AdminLevel {
    /// The stored value.
    pub const fn stored(self) -> i32 {
        match self {
            Self::None => 0,
            Self::Operator => 1,
            Self::Administrator => 2,
        }
    }

    /// The level a stored value denotes; an unknown value grants nothing.
    pub fn from_stored(v: i32) -> Self {
        match v {
            1 => Self::Operator,
            2 => Self::Administrator,
            _ => Self::None,
        }
    }

    /// Slurm's display name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::Operator => "Operator",
            Self::Administrator => "Administrator",
        }
    }

    /// Parses a case-insensitive prefix of `None`, `Operator`, `Administrator` (or Slurm's
    /// older `SuperUser`).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        let is_prefix = |full: &str| {
            full.len() >= s.len() && full.as_bytes()[..s.len()].eq_ignore_ascii_case(s.as_bytes())
        };
        [
            ("None", Self::None),
            ("Operator", Self::Operator),
            ("Administrator", Self::Administrator),
            ("SuperUser", Self::Administrator),
        ]
        .into_iter()
        .find(|(full, _)| is_prefix(full))
        .map(|(_, level)| level)
    }
}

impl fmt::Display for AdminLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A list edit as sacctmgr spells it: `x=a,b`, `x+=a`, `x-=a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListEdit {
    /// Replace the list (an empty list clears it).
    Set(Vec<String>),
    /// Append the items not already present.
    Add(Vec<String>),
    /// Remove the items.
    Remove(Vec<String>),
}

/// A cluster as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    pub control_host: String,
    pub control_port: u32,
    pub rpc_version: u32,
    pub classification: String,
    /// `""` when in no federation.
    pub federation: String,
    /// 0 when in no federation.
    pub fed_id: u32,
    /// The stored fed state (see `sluice_vocab::FedState`); may be a value we do not know.
    pub fed_state: u32,
    pub features: Vec<String>,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
}

/// A federation with its live member clusters, ordered by fed id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Federation {
    pub name: String,
    pub flags: u32,
    pub creation_time: i64,
    pub mod_time: i64,
    pub deleted: bool,
    pub clusters: Vec<Cluster>,
}

/// An account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub description: String,
    pub organization: String,
    /// `""` for root.
    pub parent: String,
    pub deleted: bool,
    /// Its coordinators: users granted it or an account above it, by name.
    pub coordinators: Vec<String>,
}

/// A user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub default_account: String,
    pub admin_level: AdminLevel,
    pub deleted: bool,
    /// The accounts it coordinates: those granted and every account below them, by name.
    pub coord_accounts: Vec<String>,
}

/// A live association of (cluster, account, user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Association {
    pub id: u64,
    pub cluster: String,
    pub account: String,
    /// `""` for the account's own association.
    pub user: String,
    /// The parent account of an account association; `""` for users' and root's.
    pub parent_account: String,
    /// The limits in force (`Max*` inherited down the account tree, `Grp*` as set here).
    pub limits: sluice_vocab::assoc_limits::AssocLimits,
    /// The QOS it may use, in force (inherited down the tree), sorted by name.
    pub qos: Vec<String>,
    /// Its default QOS in force; `""` for none.
    pub default_qos: String,
}

/// A block `[first, first + count)` of local job ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobIdRange {
    pub first: u32,
    pub count: u32,
}
