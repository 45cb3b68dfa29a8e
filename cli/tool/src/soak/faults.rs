//! The faults a soak injects, drawn from its seeded generator: `kill -9` of a daemon (the
//! accounting daemon, a controller, a node daemon), after which `sluice up` starts it again;
//! or SIGSTOP of a daemon for longer than its peers wait for it, then SIGCONT.

use std::fmt;
use std::time::Duration;

use rand::Rng;
use rand::rngs::StdRng;

use super::site::{DaemonId, MESSAGE_TIMEOUT, SLURMD_TIMEOUT, Site};
use crate::up::daemons::Kind;

/// How a daemon is hurt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Blow {
    /// `kill -9`, then `sluice up` restarts it.
    Kill,
    /// SIGSTOP for the given time, then SIGCONT.
    Stop,
}

/// One fault to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// How.
    pub blow: Blow,
    /// Whom.
    pub daemon: DaemonId,
    /// How long a stopped daemon stays stopped (zero for a kill).
    pub hold: Duration,
}

/// The kind of a fault, as the counts name it (`kill -9 noded`, `SIGSTOP ctld`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FaultKind(pub Blow, pub Kind);

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let blow = match self.0 {
            Blow::Kill => "kill -9",
            Blow::Stop => "SIGSTOP",
        };
        let who = match self.1 {
            Kind::Dbd => "dbd",
            Kind::Ctld => "ctld",
            Kind::Noded => "noded",
        };
        write!(f, "{blow} {who}")
    }
}

impl Fault {
    /// Its kind.
    pub fn kind(&self) -> FaultKind {
        FaultKind(self.blow, self.daemon.kind)
    }
}

/// Draws a fault on one of `site`'s daemons. A stopped node daemon stays stopped past
/// `SlurmdTimeout` (its node goes DOWN and its jobs are requeued); a stopped controller or
/// dbd past `MessageTimeout` (its clients' requests fail meanwhile).
pub fn draw(rng: &mut StdRng, site: &Site) -> Fault {
    let daemons = site.daemons();
    // Weigh the kinds evenly whatever the number of nodes.
    let kind = [Kind::Dbd, Kind::Ctld, Kind::Noded][rng.random_range(0..3)];
    let of_kind: Vec<&DaemonId> = daemons.iter().filter(|d| d.kind == kind).collect();
    let daemon = of_kind[rng.random_range(0..of_kind.len())].clone();
    let blow = if rng.random_bool(0.5) {
        Blow::Kill
    } else {
        Blow::Stop
    };
    let hold = match (blow, kind) {
        (Blow::Kill, _) => Duration::ZERO,
        (Blow::Stop, Kind::Noded) => {
            SLURMD_TIMEOUT + Duration::from_millis(rng.random_range(2000..5000))
        }
        (Blow::Stop, _) => MESSAGE_TIMEOUT + Duration::from_millis(rng.random_range(1000..3000)),
    };
    Fault { blow, daemon, hold }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn site() -> Site {
        Site {
            layout: crate::up::layout::Layout::new(std::path::Path::new("/s")).unwrap(),
            bin_dir: "/b".into(),
            clusters: vec![(
                "c".into(),
                "/s/c/slurm.conf".into(),
                vec!["cn1".into(), "cn2".into()],
            )],
            work: "/s/work".into(),
        }
    }

    #[test]
    fn every_kind_is_drawn_and_stops_outlast_the_peers_timeouts() {
        let site = site();
        let mut rng = StdRng::seed_from_u64(3);
        let mut kinds = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let f = draw(&mut rng, &site);
            kinds.insert(f.kind());
            match (f.blow, f.daemon.kind) {
                (Blow::Kill, _) => assert_eq!(f.hold, Duration::ZERO),
                (Blow::Stop, Kind::Noded) => assert!(f.hold > SLURMD_TIMEOUT),
                (Blow::Stop, _) => assert!(f.hold > MESSAGE_TIMEOUT),
            }
        }
        assert_eq!(kinds.len(), 6, "{kinds:?}");
        assert_eq!(
            FaultKind(Blow::Stop, Kind::Noded).to_string(),
            "SIGSTOP noded"
        );
    }
}
