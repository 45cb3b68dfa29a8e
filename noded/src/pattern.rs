//! Slurm's output file name patterns (`sbatch -o/-e`, `srun -o`): `%j %J %x %u %N %n %s %t
//! %A %a %%`, with optional zero padding (`%5j`, at most 10 wide, ignored for names).
//! A pattern containing `\` is taken literally, minus the backslashes, as in Slurm.

/// Slurm's NO_VAL, which `%a` prints for a job that is not an array task.
pub const NO_ARRAY_TASK: u32 = 0xffff_fffe;
/// Widest zero padding Slurm applies.
const MAX_WIDTH: usize = 10;

/// The step whose output is named: the batch script or a numbered step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// The batch script (`%s` is `batch`, `%J` is the job id alone).
    Batch,
    /// Step `n`.
    Step(u32),
}

/// The values a pattern may name.
#[derive(Debug, Clone)]
pub struct PatternVars<'a> {
    /// `%j`.
    pub job_id: u32,
    /// `%s`, and the step part of `%J`.
    pub step: StepKind,
    /// `%A` (the job id when not an array task).
    pub array_job_id: u32,
    /// `%a` ([`NO_ARRAY_TASK`] when not an array task).
    pub array_task_id: Option<u32>,
    /// `%x`.
    pub job_name: &'a str,
    /// `%u`.
    pub user: &'a str,
    /// `%N`.
    pub node: &'a str,
    /// `%n`: the node's index in the job.
    pub node_index: u32,
    /// `%t`: the task's rank.
    pub task: u32,
}

/// Expands `pattern` with `v`.
pub fn expand(pattern: &str, v: &PatternVars<'_>) -> String {
    if pattern.contains('\\') {
        return pattern.replace('\\', "");
    }
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut digits = String::new();
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            digits.push(d);
        }
        let width = digits.parse::<usize>().unwrap_or(0).min(MAX_WIDTH);
        let num = |n: u32| format!("{n:0width$}");
        match chars.next() {
            Some('%') => out.push('%'),
            Some('j') => out.push_str(&num(v.job_id)),
            Some('J') => {
                out.push_str(&num(v.job_id));
                if let StepKind::Step(s) = v.step {
                    out.push_str(&format!(".{s}"));
                }
            }
            Some('s') => match v.step {
                StepKind::Batch => out.push_str("batch"),
                StepKind::Step(s) => out.push_str(&num(s)),
            },
            Some('A') => out.push_str(&num(v.array_job_id)),
            Some('a') => out.push_str(&num(v.array_task_id.unwrap_or(NO_ARRAY_TASK))),
            Some('n') => out.push_str(&num(v.node_index)),
            Some('t') => out.push_str(&num(v.task)),
            Some('x') => out.push_str(v.job_name),
            Some('u') => out.push_str(v.user),
            Some('N') => out.push_str(v.node),
            Some(other) => {
                out.push('%');
                out.push_str(&digits);
                out.push(other);
            }
            None => {
                out.push('%');
                out.push_str(&digits);
            }
        }
    }
    out
}

/// The default batch output name: `slurm-%j.out`, `slurm-%A_%a.out` for array tasks.
pub fn default_batch_output(is_array: bool) -> &'static str {
    if is_array {
        "slurm-%A_%a.out"
    } else {
        "slurm-%j.out"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> PatternVars<'static> {
        PatternVars {
            job_id: 42,
            step: StepKind::Batch,
            array_job_id: 40,
            array_task_id: Some(7),
            job_name: "sim",
            user: "alice",
            node: "n3",
            node_index: 0,
            task: 0,
        }
    }

    #[test]
    fn every_specifier_expands() {
        let v = vars();
        assert_eq!(expand("%j-%x-%u-%N", &v), "42-sim-alice-n3");
        assert_eq!(expand("out_%A_%a.txt", &v), "out_40_7.txt");
        assert_eq!(expand("%J|%s|%n|%t|%%", &v), "42|batch|0|0|%");
        let step = PatternVars {
            step: StepKind::Step(3),
            task: 5,
            ..vars()
        };
        assert_eq!(expand("%J %s %t", &step), "42.3 3 5");
    }

    #[test]
    fn widths_pad_numbers_only() {
        let v = vars();
        assert_eq!(expand("%5j", &v), "00042");
        assert_eq!(expand("%3a_%8x", &v), "007_sim");
        assert_eq!(expand("%20j", &v), "0000000042");
    }

    #[test]
    fn non_array_jobs_print_no_val_for_the_task() {
        let v = PatternVars {
            array_job_id: 42,
            array_task_id: None,
            ..vars()
        };
        assert_eq!(expand("%A_%a", &v), "42_4294967294");
    }

    #[test]
    fn unknown_specifiers_backslashes_and_trailing_percent_stay() {
        let v = vars();
        assert_eq!(expand("a%qb%", &v), "a%qb%");
        assert_eq!(expand("a%3", &v), "a%3");
        assert_eq!(expand("lit\\%j.out", &v), "lit%j.out");
        assert_eq!(default_batch_output(true), "slurm-%A_%a.out");
    }
}
