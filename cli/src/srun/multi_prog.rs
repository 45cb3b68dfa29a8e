//! `srun --multi-prog FILE`: each task runs its own command line, read from FILE as Slurm's
//! srun reads it. A line is a task list (`0`, `1-3,6`, or `*` for every task no other line
//! names), the program and its arguments, separated by white space, single or double quotes
//! keeping white space in a word; `%t` in the program or an argument becomes the task's rank,
//! `%o` its offset among the line's tasks. Blank lines and lines starting with `#` are
//! skipped. Every task of the step must be named exactly once; without `-n` the step has as
//! many tasks as the highest rank named plus one.

use std::path::Path;

/// Which tasks a line is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ranks {
    /// `*`: the tasks no other line names.
    Rest,
    /// Inclusive ranges.
    List(Vec<(u32, u32)>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Line {
    number: usize,
    ranks: Ranks,
    words: Vec<String>,
}

/// A parsed `--multi-prog` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiProg {
    file: String,
    lines: Vec<Line>,
}

/// What is wrong with a `--multi-prog` file (srun prints it and exits 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MultiProgError {
    #[error("Unable to open configuration file {file}: {reason}")]
    Open { file: String, reason: String },
    #[error("Line {line} of configuration file {file}: invalid task list \"{ranks}\"")]
    Ranks {
        file: String,
        line: usize,
        ranks: String,
    },
    #[error("Line {line} of configuration file {file}: no program for tasks \"{ranks}\"")]
    NoProgram {
        file: String,
        line: usize,
        ranks: String,
    },
    #[error("Line {line} of configuration file {file}: unmatched quote")]
    Quote { file: String, line: usize },
    #[error("Configuration file {file} invalid: task {task} given more than once")]
    Twice { file: String, task: u32 },
    #[error("Configuration file {file} invalid: task {task} is beyond the step's {ntasks} tasks")]
    Beyond {
        file: String,
        task: u32,
        ntasks: u32,
    },
    #[error("Configuration file {file} invalid: no program for {tasks}")]
    Missing { file: String, tasks: String },
}

impl MultiProg {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<Self, MultiProgError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| MultiProgError::Open {
            file: file.clone(),
            reason: io_reason(&e),
        })?;
        Self::parse(&file, &text)
    }

    /// Parses `text`, read from `file`.
    pub fn parse(file: &str, text: &str) -> Result<Self, MultiProgError> {
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let number = i + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let mut words = split(trimmed).ok_or_else(|| MultiProgError::Quote {
                file: file.to_string(),
                line: number,
            })?;
            let spec = words.remove(0);
            let ranks = parse_ranks(&spec).ok_or_else(|| MultiProgError::Ranks {
                file: file.to_string(),
                line: number,
                ranks: spec.clone(),
            })?;
            if words.is_empty() {
                return Err(MultiProgError::NoProgram {
                    file: file.to_string(),
                    line: number,
                    ranks: spec,
                });
            }
            lines.push(Line {
                number,
                ranks,
                words,
            });
        }
        Ok(Self {
            file: file.to_string(),
            lines,
        })
    }

    /// The step's task count when `-n` does not give it: the highest rank named plus one
    /// (`None` when only `*` lines name tasks).
    pub fn ntasks(&self) -> Option<u32> {
        self.lines
            .iter()
            .filter_map(|l| match &l.ranks {
                Ranks::List(r) => r.iter().map(|(_, hi)| *hi).max(),
                Ranks::Rest => None,
            })
            .max()
            .map(|hi| hi.saturating_add(1))
    }

    /// Every task's command line for a step of `ntasks` tasks.
    pub fn argvs(&self, ntasks: u32) -> Result<Vec<Vec<String>>, MultiProgError> {
        let file = || self.file.clone();
        let mut owner: Vec<Option<(usize, u32)>> = vec![None; ntasks as usize];
        for (k, line) in self.lines.iter().enumerate() {
            let Ranks::List(ranges) = &line.ranks else {
                continue;
            };
            let mut offset = 0;
            for &(lo, hi) in ranges {
                for task in lo..=hi {
                    let slot =
                        owner
                            .get_mut(task as usize)
                            .ok_or_else(|| MultiProgError::Beyond {
                                file: file(),
                                task,
                                ntasks,
                            })?;
                    if slot.is_some() {
                        return Err(MultiProgError::Twice { file: file(), task });
                    }
                    *slot = Some((k, offset));
                    offset += 1;
                }
            }
        }
        if let Some(k) = self.lines.iter().position(|l| l.ranks == Ranks::Rest) {
            for (offset, slot) in (0..).zip(owner.iter_mut().filter(|s| s.is_none())) {
                *slot = Some((k, offset));
            }
        }
        let missing: Vec<u32> = (0..ntasks)
            .filter(|t| owner[*t as usize].is_none())
            .collect();
        if !missing.is_empty() {
            return Err(MultiProgError::Missing {
                file: file(),
                tasks: super::layout::task_list(&missing),
            });
        }
        Ok(owner
            .iter()
            .enumerate()
            .filter_map(|(task, slot)| {
                let (k, offset) = (*slot)?;
                let task = u32::try_from(task).ok()?;
                Some(
                    self.lines[k]
                        .words
                        .iter()
                        .map(|w| expand(w, task, offset))
                        .collect(),
                )
            })
            .collect())
    }

    /// The line numbers, for tests.
    #[cfg(test)]
    fn numbers(&self) -> Vec<usize> {
        self.lines.iter().map(|l| l.number).collect()
    }
}

/// An I/O error as the C library words it (without Rust's `(os error N)`).
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    text.split(" (os error")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `%t` and `%o` of one word (`%%` is a `%`).
fn expand(word: &str, task: u32, offset: u32) -> String {
    let mut out = String::new();
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push_str(&task.to_string()),
            Some('o') => out.push_str(&offset.to_string()),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// `*` or `0,2-4`.
fn parse_ranks(spec: &str) -> Option<Ranks> {
    if spec == "*" {
        return Some(Ranks::Rest);
    }
    let mut ranges = Vec::new();
    for part in spec.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
            None => {
                let n = part.parse().ok()?;
                (n, n)
            }
        };
        if hi < lo {
            return None;
        }
        ranges.push((lo, hi));
    }
    Some(Ranks::List(ranges))
}

/// Words separated by white space; quotes keep white space (`None`: a quote is not closed).
fn split(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "# a comment\n\
        0      echo first task\n\
        1-2,4  sh -c 'echo task %t offset %o'\n\
        \n\
        *      echo \"rest %t\"\n";

    #[test]
    fn lines_give_each_task_its_command() {
        let m = MultiProg::parse("conf", CONF).unwrap();
        assert_eq!(m.numbers(), vec![2, 3, 5]);
        assert_eq!(m.ntasks(), Some(5));
        let argvs = m.argvs(6).unwrap();
        assert_eq!(argvs[0], ["echo", "first", "task"]);
        assert_eq!(argvs[2], ["sh", "-c", "echo task 2 offset 1"]);
        assert_eq!(argvs[4], ["sh", "-c", "echo task 4 offset 2"]);
        assert_eq!(argvs[3], ["echo", "rest 3"]);
        assert_eq!(argvs[5], ["echo", "rest 5"]);
    }

    #[test]
    fn every_task_exactly_once() {
        let m = MultiProg::parse("conf", "0-1 true\n1 false\n").unwrap();
        assert_eq!(
            m.argvs(2).unwrap_err().to_string(),
            "Configuration file conf invalid: task 1 given more than once"
        );
        let m = MultiProg::parse("conf", "0 true\n3 true\n").unwrap();
        assert_eq!(
            m.argvs(5).unwrap_err().to_string(),
            "Configuration file conf invalid: no program for tasks 1-2,4"
        );
        assert_eq!(
            m.argvs(2).unwrap_err().to_string(),
            "Configuration file conf invalid: task 3 is beyond the step's 2 tasks"
        );
        assert_eq!(MultiProg::parse("c", "* true\n").unwrap().ntasks(), None);
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(
            MultiProg::parse("conf", "\n2-1 true\n")
                .unwrap_err()
                .to_string(),
            "Line 2 of configuration file conf: invalid task list \"2-1\""
        );
        assert_eq!(
            MultiProg::parse("conf", "x true\n")
                .unwrap_err()
                .to_string(),
            "Line 1 of configuration file conf: invalid task list \"x\""
        );
        assert_eq!(
            MultiProg::parse("conf", "0\n").unwrap_err().to_string(),
            "Line 1 of configuration file conf: no program for tasks \"0\""
        );
        assert_eq!(
            MultiProg::parse("conf", "0 echo 'open\n")
                .unwrap_err()
                .to_string(),
            "Line 1 of configuration file conf: unmatched quote"
        );
        assert!(matches!(
            MultiProg::read(Path::new("/nonexistent/conf")),
            Err(MultiProgError::Open { .. })
        ));
    }

    #[test]
    fn percent_escapes() {
        assert_eq!(expand("a%tb%oc%%d%", 7, 2), "a7b2c%%d%");
    }
}
