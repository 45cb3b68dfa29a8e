//! The trackable resources (TRES) the rollups account, with Slurm's ids and names.

use std::fmt;

/// A tracked resource. Usage of a TRES is counted in TRES-seconds: a CPU busy for an hour is
/// 3600 cpu-seconds, a node down for an hour 3600 node-seconds, 1 MB of memory allocated for
/// an hour 3600 mem-seconds (memory counts in MB, as in Slurm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tres {
    Cpu,
    Mem,
    Node,
}

impl Tres {
    /// Every tracked TRES, in Slurm's id order.
    pub const ALL: [Tres; 3] = [Tres::Cpu, Tres::Mem, Tres::Node];

    /// Slurm's TRES id (`cpu` 1, `mem` 2, `node` 4), as stored in the usage tables.
    pub fn id(self) -> i32 {
        match self {
            Tres::Cpu => 1,
            Tres::Mem => 2,
            Tres::Node => 4,
        }
    }

    /// The TRES with stored id `id`.
    pub fn from_id(id: i32) -> Option<Tres> {
        Tres::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The TRES's name as sreport shows it (`cpu`, `mem`, `node`).
    pub fn name(self) -> &'static str {
        match self {
            Tres::Cpu => "cpu",
            Tres::Mem => "mem",
            Tres::Node => "node",
        }
    }

    /// A TRES by name, case-insensitively (`CPU`, `cpu`, `Mem`...).
    pub fn parse(name: &str) -> Option<Tres> {
        Tres::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The position of this TRES in [`Tres::ALL`].
    pub fn index(self) -> usize {
        match self {
            Tres::Cpu => 0,
            Tres::Mem => 1,
            Tres::Node => 2,
        }
    }
}

impl fmt::Display for Tres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A count of each tracked TRES: a node's or a cluster's size, or a job's allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TresCounts {
    pub cpu: u64,
    /// Megabytes.
    pub mem: u64,
    pub node: u64,
}

impl TresCounts {
    /// Counts from the three values.
    pub fn new(cpu: u64, mem: u64, node: u64) -> Self {
        Self { cpu, mem, node }
    }

    /// The count of `tres`.
    pub fn get(&self, tres: Tres) -> u64 {
        match tres {
            Tres::Cpu => self.cpu,
            Tres::Mem => self.mem,
            Tres::Node => self.node,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_round_trip() {
        for t in Tres::ALL {
            assert_eq!(Tres::from_id(t.id()), Some(t));
            assert_eq!(Tres::parse(&t.name().to_uppercase()), Some(t));
            assert_eq!(Tres::ALL[t.index()], t);
        }
        assert_eq!(Tres::from_id(3), None);
        assert_eq!(Tres::parse("gres/gpu"), None);
        assert_eq!(
            TresCounts::new(4, 8, 1).get(Tres::Mem),
            8,
            "mem is the second count"
        );
    }
}
