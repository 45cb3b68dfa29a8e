//! `--hint=compute_bound|memory_bound|[no]multithread`: an application hint that stands for
//! a CPU binding and a threads-per-core choice.
//!
//! What Slurm 22.05's srun turns each hint into, as seen on a real cluster (the tasks'
//! `SLURM_CPU_BIND` and `SLURM_THREADS_PER_CORE` / `SLURM_NTASKS_PER_CORE`):
//! `nomultithread` binds to threads with one thread per core; `compute_bound` and
//! `memory_bound` bind to cores with one thread per core; `multithread` binds to threads
//! with any number of tasks per core (`SLURM_NTASKS_PER_CORE=65535`). Several hints may be
//! given, comma separated: a thread binding wins over a core binding. An unknown word is
//! `unrecognized --hint argument "X", see --hint=help` (exit 1).
//!
//! On the command line, `--ntasks-per-core`, `--threads-per-core` and a `--cpu-bind` type
//! (not only `verbose`/`quiet`) take the hint's place: Slurm's srun then drops the hint
//! without a word (seen: `--hint=nomultithread --cpu-bind=cores` binds to cores and sets no
//! `SLURM_THREADS_PER_CORE`). `-B` does not (seen: the hint's binding and threads stay).

/// What `--hint=help` prints, as Slurm's srun prints it.
pub const HELP: &str = "Application hint options:
    --hint=             Bind tasks according to application hints
        compute_bound   use all cores in each socket
        memory_bound    use only one core in each socket
        [no]multithread [don't] use extra threads with in-core multi-threading
        help            show this help message
";

/// `SLURM_NTASKS_PER_CORE` under `multithread`: Slurm's "no limit" (`INFINITE16`).
pub const ANY_TASKS_PER_CORE: u32 = 65535;

/// A parsed `--hint`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hint {
    /// The words as given (`SLURM_HINT` carries them to the job).
    pub words: Vec<HintWord>,
}

/// One hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintWord {
    ComputeBound,
    MemoryBound,
    Multithread,
    Nomultithread,
}

impl HintWord {
    fn word(self) -> &'static str {
        match self {
            Self::ComputeBound => "compute_bound",
            Self::MemoryBound => "memory_bound",
            Self::Multithread => "multithread",
            Self::Nomultithread => "nomultithread",
        }
    }
}

/// An unknown hint, in Slurm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unrecognized --hint argument \"{0}\", see --hint=help")]
pub struct HintError(pub String);

/// What a hint stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HintEffect {
    /// The `--cpu-bind` type it implies (`threads` or `cores`).
    pub cpu_bind: &'static str,
    /// `--threads-per-core` it implies.
    pub threads_per_core: Option<u32>,
    /// `--ntasks-per-core` it implies.
    pub ntasks_per_core: Option<u32>,
}

impl Hint {
    /// Parses the option's value (`help` is the caller's to handle).
    pub fn parse(spec: &str) -> Result<Self, HintError> {
        let mut words = Vec::new();
        for w in spec.split(',') {
            words.push(match w.to_ascii_lowercase().as_str() {
                "compute_bound" => HintWord::ComputeBound,
                "memory_bound" => HintWord::MemoryBound,
                "multithread" => HintWord::Multithread,
                "nomultithread" => HintWord::Nomultithread,
                _ => return Err(HintError(w.to_string())),
            });
        }
        Ok(Self { words })
    }

    /// The value of `SLURM_HINT`.
    pub fn env_value(&self) -> String {
        let words: Vec<&str> = self.words.iter().map(|w| w.word()).collect();
        words.join(",")
    }

    /// The binding and per-core counts the hint stands for.
    pub fn effect(&self) -> HintEffect {
        let has = |w: HintWord| self.words.contains(&w);
        let threads = has(HintWord::Multithread) || has(HintWord::Nomultithread);
        let one_thread = has(HintWord::Nomultithread)
            || has(HintWord::ComputeBound)
            || has(HintWord::MemoryBound);
        HintEffect {
            cpu_bind: if threads { "threads" } else { "cores" },
            threads_per_core: one_thread.then_some(1),
            ntasks_per_core: (has(HintWord::Multithread) && !one_thread)
                .then_some(ANY_TASKS_PER_CORE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(spec: &str) -> HintEffect {
        Hint::parse(spec).unwrap().effect()
    }

    /// As Slurm 22.05's srun set the tasks' variables for each hint.
    #[test]
    fn each_hint_as_slurm_applies_it() {
        assert_eq!(
            effect("nomultithread"),
            HintEffect {
                cpu_bind: "threads",
                threads_per_core: Some(1),
                ntasks_per_core: None
            }
        );
        for bound in ["compute_bound", "memory_bound"] {
            assert_eq!(
                effect(bound),
                HintEffect {
                    cpu_bind: "cores",
                    threads_per_core: Some(1),
                    ntasks_per_core: None
                }
            );
        }
        assert_eq!(
            effect("multithread"),
            HintEffect {
                cpu_bind: "threads",
                threads_per_core: None,
                ntasks_per_core: Some(65535)
            }
        );
        assert_eq!(effect("nomultithread,compute_bound").cpu_bind, "threads");
        assert_eq!(
            Hint::parse("Compute_Bound,multithread")
                .unwrap()
                .env_value(),
            "compute_bound,multithread"
        );
    }

    #[test]
    fn unknown_hints_are_refused_in_slurms_words() {
        assert_eq!(
            Hint::parse("bogus").unwrap_err().to_string(),
            "unrecognized --hint argument \"bogus\", see --hint=help"
        );
        assert!(Hint::parse("").is_err());
    }
}
