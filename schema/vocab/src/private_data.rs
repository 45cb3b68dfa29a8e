//! `PrivateData` (slurm.conf and slurmdbd.conf): which kinds of data a user who is not an
//! administrator may see only as far as it is their own. Shared by the controller, the
//! accounting daemon and `scontrol show config`.

use std::fmt;

/// The kinds of `PrivateData`, in the order Slurm prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Private {
    /// `accounts`: account definitions (the dbd).
    Accounts,
    /// `cloud`: the opposite of the others, as in Slurm: powered-down cloud nodes are listed
    /// (sinfo, scontrol show node) only with it, for everyone including administrators.
    Cloud,
    /// `events`: node events (the dbd).
    Events,
    /// `jobs`: other users' jobs (controller and dbd).
    Jobs,
    /// `nodes`: node state (controller).
    Nodes,
    /// `partitions`: partition state (controller).
    Partitions,
    /// `reservations`: reservations (none in Sluice yet).
    Reservations,
    /// `usage`: other users' usage (the dbd's reports).
    Usage,
    /// `users`: other users' records (the dbd).
    Users,
}

const ALL: [(Private, &str); 9] = [
    (Private::Accounts, "accounts"),
    (Private::Cloud, "cloud"),
    (Private::Events, "events"),
    (Private::Jobs, "jobs"),
    (Private::Nodes, "nodes"),
    (Private::Partitions, "partitions"),
    (Private::Reservations, "reservations"),
    (Private::Usage, "usage"),
    (Private::Users, "users"),
];

/// A set of [`Private`] kinds; empty (the default) hides nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrivateData(u16);

impl PrivateData {
    /// Parses Slurm's comma-separated list (`jobs,usage`, `all`, `none`); an unknown word is
    /// named in the error.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut set = Self::default();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let w = word.to_ascii_lowercase();
            match w.as_str() {
                "all" => ALL.iter().for_each(|(k, _)| set.insert(*k)),
                "none" => {}
                // Slurm's plural and singular spellings both work.
                _ => match ALL
                    .iter()
                    .find(|(_, n)| w == *n || n.strip_suffix('s') == Some(w.as_str()))
                {
                    Some((k, _)) => set.insert(*k),
                    None => return Err(format!("unknown PrivateData value {word}")),
                },
            }
        }
        Ok(set)
    }

    /// Adds `kind`.
    pub fn insert(&mut self, kind: Private) {
        self.0 |= 1 << kind as u16;
    }

    /// Whether `kind` is private.
    pub fn has(self, kind: Private) -> bool {
        self.0 & (1 << kind as u16) != 0
    }
}

impl fmt::Display for PrivateData {
    /// Slurm's `scontrol show config` form: the kinds joined by commas, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = ALL
            .iter()
            .filter(|(k, _)| self.has(*k))
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_all_none_and_singulars() {
        let p = PrivateData::parse("jobs, Usage,user").unwrap();
        assert!(p.has(Private::Jobs) && p.has(Private::Usage) && p.has(Private::Users));
        assert!(!p.has(Private::Nodes));
        assert_eq!(p.to_string(), "jobs,usage,users");
        assert_eq!(PrivateData::parse("none").unwrap().to_string(), "none");
        let all = PrivateData::parse("all").unwrap();
        assert_eq!(
            all.to_string(),
            "accounts,cloud,events,jobs,nodes,partitions,reservations,usage,users"
        );
        assert!(PrivateData::parse("cloud").unwrap().has(Private::Cloud));
        assert!(PrivateData::parse("clou").is_err());
        let err = PrivateData::parse("jobs,secrets").unwrap_err();
        assert!(err.contains("secrets"), "{err}");
    }
}
