//! srun's `--cpu-bind=[{quiet|verbose},]{none|rank|map_cpu:<list>|mask_cpu:<list>|cores|
//! threads|sockets|ldoms}`: parsed by srun (bad input is refused before anything runs), sent
//! as text and turned into each task's CPUs by the node daemon.
//!
//! A node daemon does not know which CPU ids the controller counted for a job (it counts CPUs,
//! not ids), so binding happens within the CPUs the daemon itself may use, taken as one socket
//! of single-thread cores: `rank` and `map_cpu` give one CPU, `mask_cpu` the mask's CPUs,
//! `cores` and `threads` each task `cpus_per_task` consecutive CPUs from `local * cpus_per_task`
//! on (wrapping), `sockets` and `ldoms` every CPU.

/// How tasks are bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindKind {
    /// No binding (`none`, `no`).
    None,
    /// Task `local` on the `local`-th CPU.
    Rank,
    /// Task `local` on CPU `list[local % len]`.
    MapCpu(Vec<u32>),
    /// Task `local` on the CPUs of `masks[local % len]` (CPU ids, ascending).
    MaskCpu(Vec<Vec<u32>>),
    /// Each task on its own block of cores.
    Cores,
    /// Each task on its own block of hardware threads.
    Threads,
    /// Each task on its socket.
    Sockets,
    /// Each task on its NUMA locality domain.
    Ldoms,
}

/// A parsed `--cpu-bind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuBind {
    /// `verbose`: each task reports its binding on stderr.
    pub verbose: bool,
    /// The binding.
    pub kind: BindKind,
    /// The list as given after `map_cpu:`/`mask_cpu:` ("" for the other kinds).
    pub list: String,
}

/// `--cpu-bind` that Slurm would refuse, worded as srun words it (srun then ends with
/// [`CpuBindError::FATAL`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuBindError {
    /// A word that is no binding.
    #[error("unrecognized --cpu-bind argument \"{0}\"")]
    Unrecognized(String),
    /// `map_cpu:`/`mask_cpu:` without a list.
    #[error("missing list for \"--cpu-bind={0}:<list>\"")]
    MissingList(&'static str),
    /// A list item that is not a number.
    #[error("Failed to validate number: {item}, the offending character is {bad}")]
    Number { item: String, bad: char },
    /// `*0` or a count beyond reason.
    #[error("Invalid {kind} multiplier: {count}")]
    Multiplier { kind: &'static str, count: String },
}

impl CpuBindError {
    /// srun's last words after any of these.
    pub const FATAL: &'static str = "Failed to parse --cpu-bind= values.";
}

impl CpuBind {
    /// Parses the option's value; of two bindings the last one counts.
    pub fn parse(spec: &str) -> Result<Self, CpuBindError> {
        let mut verbose = false;
        let mut kind = None;
        let mut list = String::new();
        let mut tokens = spec.split(',').peekable();
        while let Some(token) = tokens.next() {
            let unrecognized = || CpuBindError::Unrecognized(token.to_string());
            let (word, rest) = token.split_once(':').unwrap_or((token, ""));
            let word = word.to_ascii_lowercase();
            let has_list = matches!(word.as_str(), "map_cpu" | "mask_cpu");
            if !rest.is_empty() && !has_list {
                return Err(unrecognized());
            }
            kind = Some(match word.as_str() {
                "q" | "quiet" => {
                    verbose = false;
                    continue;
                }
                "v" | "verbose" => {
                    verbose = true;
                    continue;
                }
                "no" | "none" => BindKind::None,
                "rank" => BindKind::Rank,
                "cores" => BindKind::Cores,
                "threads" => BindKind::Threads,
                "sockets" => BindKind::Sockets,
                "ldoms" => BindKind::Ldoms,
                "map_cpu" | "mask_cpu" => {
                    let map = word == "map_cpu";
                    let name = if map { "map_cpu" } else { "mask_cpu" };
                    if rest.is_empty() {
                        return Err(CpuBindError::MissingList(name));
                    }
                    // The list's own commas: it goes on while the tokens are list items.
                    let mut items = vec![rest.to_string()];
                    while let Some(next) = tokens.next_if(|t| is_list_item(t)) {
                        items.push(next.to_string());
                    }
                    list = items.join(",");
                    if map {
                        BindKind::MapCpu(map_list(&items)?)
                    } else {
                        BindKind::MaskCpu(mask_list(&items)?)
                    }
                }
                _ => return Err(unrecognized()),
            });
        }
        Ok(Self {
            verbose,
            kind: kind.unwrap_or(BindKind::None),
            list,
        })
    }

    /// The binding's type word, as `SLURM_CPU_BIND_TYPE` shows it.
    pub fn type_word(&self) -> &'static str {
        match self.kind {
            BindKind::None => "none",
            BindKind::Rank => "rank",
            BindKind::MapCpu(_) => "map_cpu:",
            BindKind::MaskCpu(_) => "mask_cpu:",
            BindKind::Cores => "cores",
            BindKind::Threads => "threads",
            BindKind::Sockets => "sockets",
            BindKind::Ldoms => "ldoms",
        }
    }

    fn verbosity(&self) -> &'static str {
        if self.verbose { "verbose" } else { "quiet" }
    }

    /// The binding as `--cpu-bind` text (`quiet,map_cpu:0,1`); parses back to itself.
    pub fn to_spec(&self) -> String {
        format!("{},{}{}", self.verbosity(), self.type_word(), self.list)
    }

    /// The `SLURM_CPU_BIND*` variables a task sees.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let verbosity = self.verbosity();
        vec![
            ("SLURM_CPU_BIND", self.to_spec()),
            ("SLURM_CPU_BIND_VERBOSE", verbosity.to_string()),
            ("SLURM_CPU_BIND_TYPE", self.type_word().to_string()),
            ("SLURM_CPU_BIND_LIST", self.list.clone()),
        ]
    }

    /// The CPUs task `local` is bound to, chosen from `avail` (ascending); `Ok(None)` when it
    /// is not bound. `Err` names a CPU of a map or mask that is not in `avail`.
    pub fn cpus_for(
        &self,
        local: u32,
        cpus_per_task: u32,
        avail: &[u32],
    ) -> Result<Option<Vec<u32>>, String> {
        if avail.is_empty() {
            return Ok(None);
        }
        let at = |i: usize| avail[i % avail.len()];
        let pick = |list: &[u32]| -> Result<Vec<u32>, String> {
            let inside: Vec<u32> = list.iter().copied().filter(|c| avail.contains(c)).collect();
            // An empty mask binds to nothing, so the task could not run.
            if inside.is_empty() {
                Err(format!("CPUs {list:?} are not among this node's CPUs"))
            } else {
                Ok(inside)
            }
        };
        let local = local as usize;
        let cpus = match &self.kind {
            BindKind::None => return Ok(None),
            BindKind::Rank => vec![at(local)],
            BindKind::MapCpu(list) => pick(&[list[local % list.len()]])?,
            BindKind::MaskCpu(masks) => pick(&masks[local % masks.len()])?,
            BindKind::Cores | BindKind::Threads => {
                let per = cpus_per_task.max(1) as usize;
                let mut block: Vec<u32> = (0..per).map(|k| at(local * per + k)).collect();
                block.sort_unstable();
                block.dedup();
                block
            }
            BindKind::Sockets | BindKind::Ldoms => avail.to_vec(),
        };
        Ok(Some(cpus))
    }

    /// The task's report of its binding, as srun's `verbose` prints it, split around the
    /// task's pid (known only once it runs): `cpu-bind-cores=MASK - n1, task  0  0 [` and
    /// `]: mask 0x3 set`.
    pub fn verbose_line(
        &self,
        host: &str,
        rank: u32,
        local: u32,
        mask: &[u32],
    ) -> (String, String) {
        let units = match self.kind {
            BindKind::Cores => "-cores",
            BindKind::Threads => "-threads",
            BindKind::Sockets => "-sockets",
            BindKind::Ldoms => "-ldoms",
            _ => "",
        };
        let (word, action) = match self.kind {
            BindKind::None => ("NONE", ""),
            BindKind::Rank => ("RANK", " set"),
            BindKind::MapCpu(_) => ("MAP", " set"),
            _ => ("MASK", " set"),
        };
        (
            format!("cpu-bind{units}={word} - {host}, task {rank:2} {local:2} ["),
            format!("]: mask 0x{}{action}", hex_mask(mask)),
        )
    }
}

fn is_list_item(token: &str) -> bool {
    !token.is_empty()
        && token
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X' || c == '*')
}

/// `0,3,0x4,2*3`: CPU ids, decimal or `0x` hex, each optionally repeated `*count` times.
pub(crate) fn map_list(items: &[String]) -> Result<Vec<u32>, CpuBindError> {
    repeated(items, "map_cpu", |s| {
        match s.strip_prefix("0x").or(s.strip_prefix("0X")) {
            Some(hex) => number(s, hex, 16),
            None => number(s, s, 10),
        }
    })
}

/// `0x3,c,f*2`: hex masks (the `0x` is optional), each as its CPU ids.
pub(crate) fn mask_list(items: &[String]) -> Result<Vec<Vec<u32>>, CpuBindError> {
    repeated(items, "mask_cpu", |s| {
        let hex = s.strip_prefix("0x").or(s.strip_prefix("0X")).unwrap_or(s);
        let mut cpus = Vec::new();
        for (nibble, c) in hex.chars().rev().enumerate() {
            let bits = c.to_digit(16).ok_or_else(|| bad_number(s, c))?;
            let base = u32::try_from(nibble * 4).map_err(|_| bad_number(s, c))?;
            cpus.extend((0..4).filter(|b| bits & (1 << b) != 0).map(|b| base + b));
        }
        if hex.is_empty() {
            return Err(bad_number(s, ' '));
        }
        Ok(cpus)
    })
}

fn bad_number(item: &str, bad: char) -> CpuBindError {
    CpuBindError::Number {
        item: item.to_string(),
        bad,
    }
}

/// `digits` (the part of `item` after any prefix) as a number in `radix`.
fn number(item: &str, digits: &str, radix: u32) -> Result<u32, CpuBindError> {
    if let Some(c) = digits.chars().find(|c| !c.is_digit(radix)) {
        return Err(bad_number(item, c));
    }
    u32::from_str_radix(digits, radix).map_err(|_| bad_number(item, ' '))
}

fn repeated<T: Clone>(
    items: &[String],
    kind: &'static str,
    one: impl Fn(&str) -> Result<T, CpuBindError>,
) -> Result<Vec<T>, CpuBindError> {
    let mut out = Vec::new();
    for item in items {
        let (value, count) = match item.split_once('*') {
            Some((v, n)) => {
                let count = n.parse::<usize>().ok().filter(|n| (1..=1024).contains(n));
                let count = count.ok_or_else(|| CpuBindError::Multiplier {
                    kind,
                    count: n.to_string(),
                })?;
                (v, count)
            }
            None => (item.as_str(), 1),
        };
        let v = one(value)?;
        out.extend(std::iter::repeat_n(v, count));
    }
    Ok(out)
}

/// CPU ids as a hex mask without `0x` (`[0, 1]` is `3`).
pub fn hex_mask(cpus: &[u32]) -> String {
    let top = cpus.iter().max().map_or(0, |m| m / 4);
    let digits: String = (0..=top)
        .rev()
        .map(|nibble| {
            let bits = cpus
                .iter()
                .filter(|c| **c / 4 == nibble)
                .fold(0u32, |acc, c| acc | 1 << (c % 4));
            char::from_digit(bits, 16).unwrap_or('0')
        })
        .collect();
    digits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> CpuBind {
        CpuBind::parse(s).unwrap()
    }

    #[test]
    fn kinds_and_verbosity() {
        assert_eq!(parse("q").kind, BindKind::None);
        assert!(!parse("quiet,cores").verbose);
        let v = parse("verbose,rank");
        assert!(v.verbose);
        assert_eq!(v.kind, BindKind::Rank);
        assert_eq!(parse("v,none").kind, BindKind::None);
        assert_eq!(parse("threads").kind, BindKind::Threads);
        assert_eq!(parse("ldoms").kind, BindKind::Ldoms);
        assert_eq!(parse("SOCKETS").kind, BindKind::Sockets);
    }

    #[test]
    fn lists_keep_their_commas() {
        let m = parse("v,map_cpu:1,0x2,3*2");
        assert_eq!(m.kind, BindKind::MapCpu(vec![1, 2, 3, 3]));
        assert_eq!(m.list, "1,0x2,3*2");
        assert_eq!(m.env()[0].1, "verbose,map_cpu:1,0x2,3*2");
        assert_eq!(CpuBind::parse(&m.to_spec()), Ok(m));
        assert_eq!(parse("cores").to_spec(), "quiet,cores");
        let k = parse("mask_cpu:0x3,c");
        assert_eq!(k.kind, BindKind::MaskCpu(vec![vec![0, 1], vec![2, 3]]));
        assert_eq!(
            parse("mask_cpu:0x10").kind,
            BindKind::MaskCpu(vec![vec![4]])
        );
    }

    #[test]
    fn bad_input_is_refused_with_slurms_words() {
        for (bad, words) in [
            ("bogus", "unrecognized --cpu-bind argument \"bogus\""),
            ("q,bogus", "unrecognized --cpu-bind argument \"bogus\""),
            ("cores:1", "unrecognized --cpu-bind argument \"cores:1\""),
            ("", "unrecognized --cpu-bind argument \"\""),
            ("map_cpu:", "missing list for \"--cpu-bind=map_cpu:<list>\""),
            (
                "map_cpu:x1",
                "Failed to validate number: x1, the offending character is x",
            ),
            (
                "mask_cpu:zz",
                "Failed to validate number: zz, the offending character is z",
            ),
            ("map_cpu:1*0", "Invalid map_cpu multiplier: 0"),
        ] {
            assert_eq!(CpuBind::parse(bad).unwrap_err().to_string(), words, "{bad}");
        }
        assert_eq!(
            parse("rank,cores").kind,
            BindKind::Cores,
            "the last one counts"
        );
        assert_eq!(parse("mask_cpu:0x0").kind, BindKind::MaskCpu(vec![vec![]]));
    }

    #[test]
    fn task_cpus_within_the_available_ones() {
        let avail = [0, 1, 2, 3];
        assert_eq!(parse("rank").cpus_for(5, 1, &avail), Ok(Some(vec![1])));
        assert_eq!(parse("none").cpus_for(0, 1, &avail), Ok(None));
        assert_eq!(parse("cores").cpus_for(1, 2, &avail), Ok(Some(vec![2, 3])));
        assert_eq!(
            parse("sockets").cpus_for(1, 1, &avail),
            Ok(Some(avail.to_vec()))
        );
        assert_eq!(
            parse("map_cpu:3,1").cpus_for(1, 1, &avail),
            Ok(Some(vec![1]))
        );
        assert_eq!(
            parse("mask_cpu:0x30,0x2").cpus_for(0, 1, &avail),
            Err("CPUs [4, 5] are not among this node's CPUs".to_string())
        );
    }

    #[test]
    fn verbose_lines_and_masks() {
        assert_eq!(hex_mask(&[0, 1]), "3");
        assert_eq!(hex_mask(&[4]), "10");
        let (pre, post) = parse("v,cores").verbose_line("n1", 3, 1, &[2, 3]);
        assert_eq!(pre, "cpu-bind-cores=MASK - n1, task  3  1 [");
        assert_eq!(post, "]: mask 0xc set");
        let (pre, post) = parse("v,none").verbose_line("n1", 0, 0, &[0, 1]);
        assert_eq!(
            format!("{pre}1{post}"),
            "cpu-bind=NONE - n1, task  0  0 [1]: mask 0x3"
        );
    }
}
