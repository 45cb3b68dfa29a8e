//! The faults a soak injects, drawn from its seeded generator: `kill -9` of a daemon (the
//! accounting daemon, a controller, a node daemon), after which `sluice up` starts it again;
//! SIGSTOP of a daemon for longer than its peers wait for it, then SIGCONT; or, where the
//! controllers' state directories are small tmpfs mounts (see [`Site::prepare`]), a
//! controller's state directory filled up for a few seconds, then freed.

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
    /// The controller's state directory filled up for the given time, then freed.
    Fill,
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
            Blow::Fill => "disk full",
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

/// Draws a fault on one of `site`'s daemons, each kind as likely (six, or seven where a full
/// state directory can be staged). A stopped node daemon stays stopped past `SlurmdTimeout`
/// (its node goes DOWN and its jobs are requeued); a stopped controller or dbd past
/// `MessageTimeout` (its clients' requests fail meanwhile); a state directory stays full for
/// 2 to 6 s.
pub fn draw(rng: &mut StdRng, site: &Site) -> Fault {
    let daemons = site.daemons();
    let kinds = if site.state_tmpfs.is_empty() { 6 } else { 7 };
    let k = rng.random_range(0..kinds);
    if k == 6 {
        let ctlds: Vec<&DaemonId> = daemons
            .iter()
            .filter(|d| site.state_dir(d).is_some())
            .collect();
        return Fault {
            blow: Blow::Fill,
            daemon: ctlds[rng.random_range(0..ctlds.len())].clone(),
            hold: Duration::from_millis(rng.random_range(2000..6000)),
        };
    }
    // Weigh the kinds evenly whatever the number of nodes.
    let kind = [Kind::Dbd, Kind::Ctld, Kind::Noded][k / 2];
    let of_kind: Vec<&DaemonId> = daemons.iter().filter(|d| d.kind == kind).collect();
    let daemon = of_kind[rng.random_range(0..of_kind.len())].clone();
    let (blow, hold) = match (k % 2, kind) {
        (0, _) => (Blow::Kill, Duration::ZERO),
        (_, Kind::Noded) => (
            Blow::Stop,
            SLURMD_TIMEOUT + Duration::from_millis(rng.random_range(2000..5000)),
        ),
        _ => (
            Blow::Stop,
            MESSAGE_TIMEOUT + Duration::from_millis(rng.random_range(1000..3000)),
        ),
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
            state_tmpfs: Vec::new(),
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
                (Blow::Fill, _) => panic!("no tmpfs state directory to fill"),
            }
        }
        assert_eq!(kinds.len(), 6, "{kinds:?}");
        // With the controller's state on a tmpfs, its filling is a seventh kind.
        let mut site = site;
        site.state_tmpfs = vec!["/s/c/state".into()];
        let fills: Vec<Fault> = (0..200)
            .map(|_| draw(&mut rng, &site))
            .filter(|f| f.blow == Blow::Fill)
            .collect();
        assert!(fills.len() > 10, "{}", fills.len());
        for f in &fills {
            assert_eq!(f.daemon.id, "ctld-c");
            assert!((2..6).contains(&f.hold.as_secs()), "{:?}", f.hold);
        }
        assert_eq!(fills[0].kind().to_string(), "disk full ctld");
        assert_eq!(
            FaultKind(Blow::Stop, Kind::Noded).to_string(),
            "SIGSTOP noded"
        );
    }
}
