//! Slurm's run-length form of per-node counts, as in `SLURM_JOB_CPUS_PER_NODE` and
//! `SLURM_TASKS_PER_NODE`: `[2, 2, 2, 1]` is `2(x3),1`.

/// The run-length form of `counts` (empty for none).
pub fn run_length(counts: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < counts.len() {
        let run = counts[i..].iter().take_while(|c| **c == counts[i]).count();
        parts.push(match run {
            1 => counts[i].to_string(),
            n => format!("{}(x{n})", counts[i]),
        });
        i += run;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_counted() {
        assert_eq!(run_length(&[2, 2, 2, 1]), "2(x3),1");
        assert_eq!(run_length(&[1, 2, 1]), "1,2,1");
        assert_eq!(run_length(&[4]), "4");
        assert_eq!(run_length(&[]), "");
    }
}
