//! srun's `--mem-bind=[{quiet|verbose},]{none|local|rank|map_mem:<list>|mask_mem:<list>}
//! [,prefer][,sort|nosort]`: the NUMA memory policy each task starts with, parsed by srun
//! (bad input is refused before anything runs), sent as text and turned into each task's
//! policy by the node daemon, which sets it with `set_mempolicy` before the task runs.
//!
//! As Slurm 22.05 shows them to the task (seen on a real cluster): `SLURM_MEM_BIND` is the
//! verbosity then the type (`quiet,local`, `quiet,map_mem:0`), `SLURM_MEM_BIND_TYPE` the type
//! word (`map_mem:` keeps its colon), `SLURM_MEM_BIND_LIST` the list as given,
//! `SLURM_MEM_BIND_VERBOSE` `quiet` or `verbose`; an unknown word is `unrecognized --mem-bind
//! argument "X"` and srun exits 255. `prefer` asks for a preferred node (`MPOL_PREFERRED`)
//! instead of a strict binding (`MPOL_BIND`); `sort`/`nosort` reorder the kernel's free page
//! lists in Slurm (a zone-sort that needs root and a Slurm kernel module): they are kept in
//! `SLURM_MEM_BIND_SORT` and change nothing else, as on a node without that module.

use crate::cpu_bind::{self, CpuBindError};

/// How a task's memory is bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemKind {
    /// No policy (`none`, `no`).
    None,
    /// The NUMA nodes of the task's CPUs.
    Local,
    /// Task `local` on NUMA node `local % nodes`.
    Rank,
    /// Task `local` on node `list[local % len]`.
    MapMem(Vec<u32>),
    /// Task `local` on the nodes of `masks[local % len]`.
    MaskMem(Vec<Vec<u32>>),
}

/// A parsed `--mem-bind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemBind {
    /// `verbose`: each task reports its binding on stderr.
    pub verbose: bool,
    /// `prefer`: a preferred node rather than a strict binding.
    pub prefer: bool,
    /// `sort` (true) / `nosort` (false), when given.
    pub sort: Option<bool>,
    /// The binding.
    pub kind: MemKind,
    /// The list after `map_mem:`/`mask_mem:` as given.
    pub list: String,
}

/// A `--mem-bind` that Slurm would refuse, in srun's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemBindError {
    /// A word that is no binding.
    #[error("unrecognized --mem-bind argument \"{0}\"")]
    Unrecognized(String),
    /// `map_mem:`/`mask_mem:` without a list.
    #[error("missing list for \"--mem-bind={0}:<list>\"")]
    MissingList(&'static str),
    /// A bad list item.
    #[error("{0}")]
    List(String),
}

/// What `--mem-bind=help` prints (srun then exits 255, as Slurm's does).
pub const HELP: &str = "Memory bind options:
    --mem-bind=         Bind memory to locality domains (ldom)
        nosort          avoid sorting pages at startup
        sort            sort pages at startup
        q[uiet]         quietly bind before task runs (default)
        v[erbose]       verbosely report binding before task runs
        no[ne]          don't bind tasks to memory (default)
        rank            bind by task rank
        local           bind to memory local to processor
        map_mem:<list>  specify a memory binding for each task
                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>
        mask_mem:<list> specify a memory binding mask for each tasks
                        where <list> is <mask1>,<mask2>,...<maskN>
        help            show this help message
";

/// The kernel's memory policy modes (`<linux/mempolicy.h>`).
pub const MPOL_PREFERRED: i32 = 1;
/// Strict binding.
pub const MPOL_BIND: i32 = 2;

impl MemBind {
    /// Parses the option's value.
    pub fn parse(spec: &str) -> Result<Self, MemBindError> {
        let mut bind = Self {
            verbose: false,
            prefer: false,
            sort: None,
            kind: MemKind::None,
            list: String::new(),
        };
        let mut tokens = spec.split(',').peekable();
        while let Some(token) = tokens.next() {
            let unrecognized = || MemBindError::Unrecognized(token.to_string());
            let (word, rest) = token.split_once(':').unwrap_or((token, ""));
            let word = word.to_ascii_lowercase();
            let has_list = matches!(word.as_str(), "map_mem" | "mask_mem");
            if !rest.is_empty() && !has_list {
                return Err(unrecognized());
            }
            match word.as_str() {
                "q" | "quiet" => bind.verbose = false,
                "v" | "verbose" => bind.verbose = true,
                "p" | "prefer" => bind.prefer = true,
                "sort" => bind.sort = Some(true),
                "nosort" => bind.sort = Some(false),
                "no" | "none" => bind.kind = MemKind::None,
                "local" => bind.kind = MemKind::Local,
                "rank" => bind.kind = MemKind::Rank,
                "map_mem" | "mask_mem" => {
                    let map = word == "map_mem";
                    let name = if map { "map_mem" } else { "mask_mem" };
                    if rest.is_empty() {
                        return Err(MemBindError::MissingList(name));
                    }
                    let mut items = vec![rest.to_string()];
                    while let Some(next) = tokens.next_if(|t| is_list_item(t)) {
                        items.push(next.to_string());
                    }
                    bind.list = items.join(",");
                    let list_error =
                        |e: CpuBindError| MemBindError::List(e.to_string().replace("_cpu", "_mem"));
                    bind.kind = if map {
                        MemKind::MapMem(cpu_bind::map_list(&items).map_err(list_error)?)
                    } else {
                        MemKind::MaskMem(cpu_bind::mask_list(&items).map_err(list_error)?)
                    };
                }
                _ => return Err(unrecognized()),
            }
        }
        Ok(bind)
    }

    /// The type word, as `SLURM_MEM_BIND_TYPE` shows it.
    pub fn type_word(&self) -> &'static str {
        match self.kind {
            MemKind::None => "none",
            MemKind::Local => "local",
            MemKind::Rank => "rank",
            MemKind::MapMem(_) => "map_mem:",
            MemKind::MaskMem(_) => "mask_mem:",
        }
    }

    fn verbosity(&self) -> &'static str {
        if self.verbose { "verbose" } else { "quiet" }
    }

    /// The binding as `--mem-bind` text (`quiet,map_mem:0,1`); parses back to itself.
    pub fn to_spec(&self) -> String {
        let mut spec = format!("{},{}{}", self.verbosity(), self.type_word(), self.list);
        if self.prefer {
            spec.push_str(",prefer");
        }
        match self.sort {
            Some(true) => spec.push_str(",sort"),
            Some(false) => spec.push_str(",nosort"),
            None => {}
        }
        spec
    }

    /// The `SLURM_MEM_BIND*` variables a task sees.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        // Seen on Slurm 22.05: `prefer,local` shows as `quiet,prefer,local`.
        let prefer = if self.prefer { "prefer," } else { "" };
        let mut vars = vec![
            (
                "SLURM_MEM_BIND",
                format!(
                    "{},{prefer}{}{}",
                    self.verbosity(),
                    self.type_word(),
                    self.list
                ),
            ),
            ("SLURM_MEM_BIND_VERBOSE", self.verbosity().to_string()),
            ("SLURM_MEM_BIND_TYPE", self.type_word().to_string()),
            ("SLURM_MEM_BIND_LIST", self.list.clone()),
        ];
        if self.prefer {
            vars.push(("SLURM_MEM_BIND_PREFER", "prefer".to_string()));
        }
        if let Some(sort) = self.sort {
            let word = if sort { "sort" } else { "nosort" };
            vars.push(("SLURM_MEM_BIND_SORT", word.to_string()));
        }
        vars
    }

    /// The policy of task `local`: the mode ([`MPOL_BIND`] or [`MPOL_PREFERRED`]) and its
    /// NUMA nodes, chosen among `numa` (each node with its CPUs, ascending); `cpus` are the
    /// task's CPUs when it is bound (`local` takes their nodes). `Ok(None)`: no policy.
    /// `Err` names a node of a map or mask that is not here.
    pub fn policy_for(
        &self,
        local: u32,
        cpus: Option<&[u32]>,
        numa: &[(u32, Vec<u32>)],
    ) -> Result<Option<(i32, Vec<u32>)>, String> {
        if numa.is_empty() {
            return Ok(None);
        }
        let local = local as usize;
        let here = |list: &[u32]| -> Result<Vec<u32>, String> {
            let inside: Vec<u32> = list
                .iter()
                .copied()
                .filter(|n| numa.iter().any(|(id, _)| id == n))
                .collect();
            if inside.is_empty() {
                Err(format!("NUMA nodes {list:?} are not among this node's"))
            } else {
                Ok(inside)
            }
        };
        let mut nodes = match &self.kind {
            MemKind::None => return Ok(None),
            MemKind::Rank => vec![numa[local % numa.len()].0],
            MemKind::MapMem(list) => here(&[list[local % list.len()]])?,
            MemKind::MaskMem(masks) => here(&masks[local % masks.len()])?,
            MemKind::Local => {
                let near: Vec<u32> = numa
                    .iter()
                    .filter(|(_, node_cpus)| {
                        cpus.is_none_or(|c| c.iter().any(|x| node_cpus.contains(x)))
                    })
                    .map(|(id, _)| *id)
                    .collect();
                if near.is_empty() {
                    numa.iter().map(|(id, _)| *id).collect()
                } else {
                    near
                }
            }
        };
        nodes.sort_unstable();
        nodes.dedup();
        if self.prefer {
            // A preferred policy names one node: the first.
            nodes.truncate(1);
            Ok(Some((MPOL_PREFERRED, nodes)))
        } else {
            Ok(Some((MPOL_BIND, nodes)))
        }
    }

    /// The task's report of its policy, as `verbose` prints it, split around its pid:
    /// `mem-bind=LOCAL - n1, task  0  0 [` and `]: mask 0x1 set`.
    pub fn verbose_line(
        &self,
        host: &str,
        rank: u32,
        local: u32,
        nodes: &[u32],
    ) -> (String, String) {
        let word = match self.kind {
            MemKind::None => "NONE",
            MemKind::Local => "LOC",
            MemKind::Rank => "RANK",
            MemKind::MapMem(_) => "MAP",
            MemKind::MaskMem(_) => "MASK",
        };
        let action = if nodes.is_empty() { "" } else { " set" };
        (
            format!("mem-bind={word} - {host}, task {rank:2} {local:2} ["),
            format!("]: mask 0x{}{action}", cpu_bind::hex_mask(nodes)),
        )
    }
}

fn is_list_item(token: &str) -> bool {
    !token.is_empty()
        && token
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X' || c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> MemBind {
        MemBind::parse(s).unwrap()
    }

    fn env_of(s: &str) -> Vec<(&'static str, String)> {
        parse(s).env()
    }

    /// The variables as Slurm 22.05's srun set them for these values.
    #[test]
    fn environment_as_slurm_sets_it() {
        let e = env_of("verbose,local");
        assert_eq!(e[0], ("SLURM_MEM_BIND", "verbose,local".to_string()));
        assert_eq!(e[1].1, "verbose");
        assert_eq!(e[2].1, "local");
        assert_eq!(e[3].1, "");
        let e = env_of("map_mem:0");
        assert_eq!(e[0].1, "quiet,map_mem:0");
        assert_eq!((e[2].1.as_str(), e[3].1.as_str()), ("map_mem:", "0"));
        let p = parse("prefer,mask_mem:0x3,1,nosort");
        assert_eq!(p.kind, MemKind::MaskMem(vec![vec![0, 1], vec![0]]));
        assert_eq!(MemBind::parse(&p.to_spec()), Ok(p.clone()));
        assert!(
            p.env()
                .contains(&("SLURM_MEM_BIND_SORT", "nosort".to_string()))
        );
        let e = env_of("p,local");
        assert_eq!(e[0].1, "quiet,prefer,local");
        assert!(e.contains(&("SLURM_MEM_BIND_PREFER", "prefer".to_string())));
    }

    #[test]
    fn bad_values_in_slurms_words() {
        assert_eq!(
            MemBind::parse("bogus").unwrap_err().to_string(),
            "unrecognized --mem-bind argument \"bogus\""
        );
        assert_eq!(
            MemBind::parse("map_mem:").unwrap_err().to_string(),
            "missing list for \"--mem-bind=map_mem:<list>\""
        );
        assert_eq!(
            MemBind::parse("map_mem:1*0").unwrap_err().to_string(),
            "Invalid map_mem multiplier: 0"
        );
        assert!(MemBind::parse("local:1").is_err());
    }

    #[test]
    fn policies_per_task() {
        let numa = [(0, vec![0, 1]), (1, vec![2, 3])];
        assert_eq!(parse("none").policy_for(0, None, &numa), Ok(None));
        assert_eq!(
            parse("local").policy_for(0, Some(&[2]), &numa),
            Ok(Some((MPOL_BIND, vec![1])))
        );
        assert_eq!(
            parse("local").policy_for(0, None, &numa),
            Ok(Some((MPOL_BIND, vec![0, 1])))
        );
        assert_eq!(
            parse("rank").policy_for(3, None, &numa),
            Ok(Some((MPOL_BIND, vec![1])))
        );
        assert_eq!(
            parse("prefer,map_mem:1,0").policy_for(1, None, &numa),
            Ok(Some((MPOL_PREFERRED, vec![0])))
        );
        assert_eq!(
            parse("mask_mem:0x4").policy_for(0, None, &numa),
            Err("NUMA nodes [2] are not among this node's".to_string())
        );
        let (pre, post) = parse("v,local").verbose_line("n1", 1, 0, &[0]);
        assert_eq!(
            format!("{pre}9{post}"),
            "mem-bind=LOC - n1, task  1  0 [9]: mask 0x1 set"
        );
    }
}
