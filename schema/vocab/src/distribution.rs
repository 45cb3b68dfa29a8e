//! `-m/--distribution={*|block|cyclic|arbitrary|plane=<size>}[:{*|block|cyclic|fcyclic}
//! [:{*|block|cyclic|fcyclic}]][,{Pack|NoPack}]`: how a step's tasks are laid out over its
//! nodes (the first level), and over sockets and cores within a node (second and third).
//!
//! What Slurm 22.05's srun does with the words, as seen on a real cluster: they are read
//! without regard to case; `*` is the default of its level (`block` first, `cyclic` second,
//! the second's value third), so `-m '*:*:*'` shows as `block:cyclic:cyclic`; `fcyclic` is only
//! a second or third level; `plane` needs `=<size>` with a positive size and nothing after it
//! (`plane=2,nopack` is refused as a bad plane size); `Pack`/`NoPack` may come once, alone
//! or after a comma; anything else is "Invalid --distribution specification" (srun exits 255).
//! The tasks see the text back lowercased in `SLURM_DISTRIBUTION` (`plane` without the size,
//! which goes to `SLURM_DIST_PLANESIZE`).
//!
//! [`place`] turns the first level into each node's task ranks.

/// How tasks go over nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeDist {
    /// Consecutive ranks fill a node before the next.
    Block,
    /// Rank `r` on the next node round-robin that still has room.
    Cyclic,
    /// Blocks of `size` consecutive ranks, round-robin over the nodes.
    Plane(u32),
    /// Task `i` on the `i`-th host of the `-w` list (which may repeat hosts).
    Arbitrary,
}

/// How tasks go over sockets or cores within a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InnerDist {
    Block,
    Cyclic,
    /// Cyclic, each task's CPUs taken one per socket/core in turn.
    Fcyclic,
}

impl InnerDist {
    fn word(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Cyclic => "cyclic",
            Self::Fcyclic => "fcyclic",
        }
    }
}

/// A parsed `--distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Distribution {
    /// Over nodes (`None`: not given, only `Pack`/`NoPack`).
    pub nodes: Option<NodeDist>,
    /// Over sockets (second level), when given.
    pub sockets: Option<InnerDist>,
    /// Over cores (third level), when given.
    pub cores: Option<InnerDist>,
    /// `Some(true)`: `Pack`, `Some(false)`: `NoPack`.
    pub pack: Option<bool>,
}

/// Why srun refuses a `--distribution`, in Slurm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistributionError {
    /// `plane` without a positive size; Slurm prints both lines.
    #[error("Invalid plane size or size not specified")]
    PlaneSize,
    /// Anything else.
    #[error("Invalid --distribution specification")]
    Invalid,
}

impl DistributionError {
    /// The line srun prints last for any bad distribution.
    pub const LAST: &'static str = "Invalid --distribution specification";
}

impl Distribution {
    /// Parses the option's value.
    pub fn parse(spec: &str) -> Result<Self, DistributionError> {
        let lower = spec.to_ascii_lowercase();
        let mut parts = lower.split(',');
        let levels = parts.next().unwrap_or_default();
        let flag = parts.next();
        if parts.next().is_some() {
            return Err(DistributionError::Invalid);
        }
        let pack_of = |w: &str| match w {
            "pack" => Ok(true),
            "nopack" => Ok(false),
            _ => Err(DistributionError::Invalid),
        };
        // `Pack` or `NoPack` alone.
        if flag.is_none() && matches!(levels, "pack" | "nopack") {
            return Ok(Self {
                nodes: None,
                sockets: None,
                cores: None,
                pack: Some(pack_of(levels)?),
            });
        }
        if let Some(size) = levels.strip_prefix("plane") {
            let size = size
                .strip_prefix('=')
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse::<u32>().ok())
                .filter(|n| *n > 0);
            // Slurm reads the size up to the end of the value, so a flag after it is a bad size.
            return match (size, flag) {
                (Some(n), None) => Ok(Self {
                    nodes: Some(NodeDist::Plane(n)),
                    sockets: None,
                    cores: None,
                    pack: None,
                }),
                _ => Err(DistributionError::PlaneSize),
            };
        }
        let words: Vec<&str> = levels.split(':').collect();
        if words.len() > 3 {
            return Err(DistributionError::Invalid);
        }
        let nodes = match words[0] {
            "*" | "block" => NodeDist::Block,
            "cyclic" => NodeDist::Cyclic,
            "arbitrary" => NodeDist::Arbitrary,
            _ => return Err(DistributionError::Invalid),
        };
        let inner = |w: &str, default: InnerDist| match w {
            "*" => Ok(default),
            "block" => Ok(InnerDist::Block),
            "cyclic" => Ok(InnerDist::Cyclic),
            "fcyclic" => Ok(InnerDist::Fcyclic),
            _ => Err(DistributionError::Invalid),
        };
        let sockets = words
            .get(1)
            .map(|w| inner(w, InnerDist::Cyclic))
            .transpose()?;
        let cores = match (words.get(2), sockets) {
            (Some(w), Some(s)) => Some(inner(w, s)?),
            _ => None,
        };
        Ok(Self {
            nodes: Some(nodes),
            sockets,
            cores,
            pack: flag.map(pack_of).transpose()?,
        })
    }

    /// `SLURM_DISTRIBUTION`'s value: `block:cyclic`, `plane`, `cyclic,pack`, `nopack`.
    pub fn env_value(&self) -> String {
        let mut text = match self.nodes {
            None => String::new(),
            Some(NodeDist::Block) => "block".to_string(),
            Some(NodeDist::Cyclic) => "cyclic".to_string(),
            Some(NodeDist::Arbitrary) => "arbitrary".to_string(),
            Some(NodeDist::Plane(_)) => "plane".to_string(),
        };
        for level in [self.sockets, self.cores].into_iter().flatten() {
            text.push(':');
            text.push_str(level.word());
        }
        if let Some(pack) = self.pack {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(if pack { "pack" } else { "nopack" });
        }
        text
    }

    /// The variables the job's tasks see (`SLURM_DISTRIBUTION`, and `SLURM_DIST_PLANESIZE`
    /// for `plane`).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![("SLURM_DISTRIBUTION", self.env_value())];
        if let Some(NodeDist::Plane(n)) = self.nodes {
            vars.push(("SLURM_DIST_PLANESIZE", n.to_string()));
        }
        vars
    }

    /// Reads the option back from the variables of [`Distribution::env`] (what `srun`
    /// inside a batch job or `salloc` is given): `None` when unset or unreadable.
    pub fn from_env(dist: Option<&str>, plane_size: Option<&str>) -> Option<Self> {
        let dist = dist?;
        if dist.eq_ignore_ascii_case("plane") {
            return Self::parse(&format!("plane={}", plane_size?)).ok();
        }
        Self::parse(dist).ok()
    }
}

/// Each node's task ranks (ascending), for `ntasks` tasks on nodes that run `counts[k]`
/// tasks each (their sum is `ntasks`), laid out as `dist` says. `Arbitrary` is laid out by
/// [`arbitrary`] instead and is taken as `Block` here.
pub fn place(dist: NodeDist, counts: &[u32]) -> Vec<Vec<u32>> {
    let mut left: Vec<u32> = counts.to_vec();
    let mut ranks: Vec<Vec<u32>> = vec![Vec::new(); counts.len()];
    let total: u32 = counts.iter().sum();
    let chunk = match dist {
        NodeDist::Block | NodeDist::Arbitrary => u32::MAX,
        NodeDist::Cyclic => 1,
        NodeDist::Plane(n) => n.max(1),
    };
    let mut next = 0u32;
    while next < total {
        let before = next;
        for (node, room) in left.iter_mut().enumerate() {
            let take = (*room).min(chunk).min(total - next);
            ranks[node].extend(next..next + take);
            *room -= take;
            next += take;
        }
        if next == before {
            break;
        }
    }
    ranks
}

/// How many tasks each of `nodes` nodes runs when srun lays `ntasks` out itself: even
/// (block and cyclic: the first `ntasks % nodes` nodes one more), or by planes of `size`.
pub fn counts(dist: NodeDist, ntasks: u32, nodes: usize) -> Vec<u32> {
    let Ok(n) = u32::try_from(nodes) else {
        return Vec::new();
    };
    if n == 0 {
        return Vec::new();
    }
    match dist {
        NodeDist::Plane(size) => {
            let size = size.max(1);
            let mut out = vec![0u32; nodes];
            let mut left = ntasks;
            let mut node = 0;
            while left > 0 {
                let take = left.min(size);
                out[node] += take;
                left -= take;
                node = (node + 1) % nodes;
            }
            out
        }
        _ => (0..n)
            .map(|k| ntasks / n + u32::from(k < ntasks % n))
            .collect(),
    }
}

/// `--distribution=arbitrary`: task `i` on host `hosts[i]` (the `-w` list as given, hosts
/// repeated); each of `nodes` (the step's distinct nodes, in order) gets its ranks. `None`
/// when the list names a host that is not among `nodes`.
pub fn arbitrary(hosts: &[String], nodes: &[String]) -> Option<Vec<Vec<u32>>> {
    let mut ranks = vec![Vec::new(); nodes.len()];
    for (task, host) in hosts.iter().enumerate() {
        let at = nodes.iter().position(|n| n == host)?;
        ranks[at].push(u32::try_from(task).ok()?);
    }
    Some(ranks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(spec: &str) -> String {
        Distribution::parse(spec).unwrap().env_value()
    }

    /// Each pair as Slurm 22.05's srun showed it in `SLURM_DISTRIBUTION`.
    #[test]
    fn words_and_defaults_as_slurm_shows_them() {
        for (spec, env) in [
            ("*", "block"),
            ("*:*", "block:cyclic"),
            ("*:*:*", "block:cyclic:cyclic"),
            ("cyclic:*:*", "cyclic:cyclic:cyclic"),
            ("block:block:*", "block:block:block"),
            ("Cyclic", "cyclic"),
            ("cyclic:fcyclic", "cyclic:fcyclic"),
            ("block:cyclic:fcyclic,Pack", "block:cyclic:fcyclic,pack"),
            ("cyclic,nopack", "cyclic,nopack"),
            ("NoPack", "nopack"),
            ("plane=2", "plane"),
            ("arbitrary", "arbitrary"),
        ] {
            assert_eq!(shown(spec), env, "{spec}");
        }
        let plane = Distribution::parse("plane=3").unwrap();
        assert_eq!(plane.nodes, Some(NodeDist::Plane(3)));
        assert_eq!(plane.env()[1], ("SLURM_DIST_PLANESIZE", "3".to_string()));
        assert_eq!(
            Distribution::from_env(Some("plane"), Some("3")),
            Some(plane)
        );
        assert_eq!(
            Distribution::from_env(Some("cyclic:block"), None).map(|d| d.env_value()),
            Some("cyclic:block".to_string())
        );
    }

    #[test]
    fn bad_specs_are_refused_as_slurm_refuses_them() {
        for bad in [
            "bogus",
            "fcyclic",
            "block:bogus",
            "block,pack,nopack",
            "block:cyclic:cyclic:block",
            "",
        ] {
            assert_eq!(
                Distribution::parse(bad),
                Err(DistributionError::Invalid),
                "{bad}"
            );
        }
        for bad in ["plane", "plane=0", "plane=x", "plane=2,nopack"] {
            assert_eq!(
                Distribution::parse(bad),
                Err(DistributionError::PlaneSize),
                "{bad}"
            );
        }
    }

    #[test]
    fn block_cyclic_and_plane_layouts() {
        assert_eq!(
            place(NodeDist::Block, &[3, 2]),
            vec![vec![0, 1, 2], vec![3, 4]]
        );
        assert_eq!(
            place(NodeDist::Cyclic, &[3, 2]),
            vec![vec![0, 2, 4], vec![1, 3]]
        );
        // A node that is full is skipped by the round.
        assert_eq!(
            place(NodeDist::Cyclic, &[1, 3, 2]),
            vec![vec![0], vec![1, 3, 5], vec![2, 4]]
        );
        assert_eq!(
            place(NodeDist::Plane(2), &[4, 3]),
            vec![vec![0, 1, 4, 5], vec![2, 3, 6]]
        );
        assert_eq!(place(NodeDist::Cyclic, &[0, 2]), vec![vec![], vec![0, 1]]);
    }

    #[test]
    fn counts_per_node() {
        assert_eq!(counts(NodeDist::Block, 5, 2), vec![3, 2]);
        assert_eq!(counts(NodeDist::Cyclic, 5, 2), vec![3, 2]);
        assert_eq!(counts(NodeDist::Plane(4), 6, 2), vec![4, 2]);
        assert_eq!(counts(NodeDist::Plane(2), 5, 2), vec![3, 2]);
        assert!(counts(NodeDist::Block, 3, 0).is_empty());
    }

    #[test]
    fn arbitrary_follows_the_host_list() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            arbitrary(&s(&["b", "a", "b"]), &s(&["a", "b"])),
            Some(vec![vec![1], vec![0, 2]])
        );
        assert_eq!(arbitrary(&s(&["c"]), &s(&["a"])), None);
    }
}
