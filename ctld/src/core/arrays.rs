//! Job arrays: `--array=1-100%10`, `1,3,5`, `0-15:4`. An array is expanded at submission into
//! one record per task, each with its own job id (the first task's id is the array's job id),
//! so every task is scheduled, shown and accounted like any job. The `%N` throttle caps how
//! many tasks run at once (reason `JobArrayTaskLimit`).

use sluice_vocab::FedJobId;

/// A parsed `--array` specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    /// Task indexes, ascending, each once.
    pub tasks: Vec<u32>,
    /// Most tasks running at once; 0 for no limit.
    pub throttle: u32,
}

/// What the core keeps per array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArrayMeta {
    /// `(task index, job id)` of each task, ascending.
    pub tasks: Vec<(u32, FedJobId)>,
    /// The `%N` throttle; 0 for none.
    pub throttle: u32,
    /// Tasks running or suspended now.
    pub running: u32,
}

impl ArrayMeta {
    /// Whether one more task may start.
    pub fn may_start_one(&self) -> bool {
        self.throttle == 0 || self.running < self.throttle
    }
}

/// Parses `spec`; every index must be below `max_array_size`. `None` when invalid.
pub fn parse_array(spec: &str, max_array_size: u32) -> Option<ArraySpec> {
    let (list, throttle) = match spec.split_once('%') {
        Some((list, t)) => (list, t.parse::<u32>().ok().filter(|t| *t > 0)?),
        None => (spec, 0),
    };
    let mut tasks = Vec::new();
    for item in list.split(',') {
        let (range, step) = match item.split_once(':') {
            Some((r, s)) => (r, s.parse::<u32>().ok().filter(|s| *s > 0)?),
            None => (item, 1),
        };
        let (lo, hi) = match range.split_once('-') {
            Some((lo, hi)) => (number(lo)?, number(hi)?),
            None => {
                let n = number(range)?;
                (n, n)
            }
        };
        if lo > hi || hi >= max_array_size {
            return None;
        }
        tasks.extend((lo..=hi).step_by(step as usize));
    }
    tasks.sort_unstable();
    tasks.dedup();
    Some(ArraySpec { tasks, throttle })
}

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn slurm_forms() {
        assert_eq!(
            parse_array("1-5%2", 1001),
            Some(ArraySpec {
                tasks: vec![1, 2, 3, 4, 5],
                throttle: 2
            })
        );
        assert_eq!(parse_array("1,3,5", 1001).unwrap().tasks, [1, 3, 5]);
        assert_eq!(parse_array("0-15:4", 1001).unwrap().tasks, [0, 4, 8, 12]);
        assert_eq!(parse_array("7,1-2,2", 1001).unwrap().tasks, [1, 2, 7]);
    }

    #[test]
    fn invalid_forms() {
        for bad in [
            "", "5-1", "1-1001", "a", "1-3%0", "1-3%", "1-9:0", "-3", "1,,2", "1-2-3",
        ] {
            assert_eq!(parse_array(bad, 1001), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn stepped_ranges_have_the_right_count(lo in 0u32..500, len in 0u32..500, step in 1u32..20) {
            let hi = lo + len;
            let spec = parse_array(&format!("{lo}-{hi}:{step}"), 1001).unwrap();
            prop_assert_eq!(spec.tasks.len() as u32, len / step + 1);
            prop_assert!(spec.tasks.iter().all(|t| (t - lo) % step == 0 && *t <= hi));
        }
    }
}
