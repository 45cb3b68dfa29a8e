//! sacct's `-j` items: `123`, an array task `123_4`, a step `123.0`, `123.batch`,
//! `123.extern`, or a step of a task `123_4.batch`.

use sluice_wire::proto::JobRow;

/// Slurm's step id for the batch script.
pub const BATCH_STEP: i32 = -4;
/// Slurm's step id for the extern step.
pub const EXTERN_STEP: i32 = -5;

/// One `-j` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSel {
    /// The job id (the array's job id for `123_4`).
    pub id: u32,
    /// `_4`: one task of the array `id`.
    pub task: Option<u32>,
    /// The step after the dot: a number, -4 for `batch`, -5 for `extern`.
    pub step: Option<i32>,
}

impl JobSel {
    /// Whether this item names `row` (the job itself, the array task it names, or a
    /// component of heterogeneous job `id`).
    pub fn matches(&self, row: &JobRow) -> bool {
        match self.task {
            None => {
                row.job_id == self.id
                    || (row.array_job_id != 0 && row.array_job_id == self.id)
                    || (row.het_job_id != 0 && row.het_job_id == self.id)
            }
            Some(t) => row.array_job_id == self.id && row.array_task_id == Some(t),
        }
    }
}

/// A step's name after the dot: `batch`, `extern` or the number.
pub fn step_suffix(step_id: i32) -> String {
    match step_id {
        BATCH_STEP => "batch".into(),
        EXTERN_STEP => "extern".into(),
        n => n.to_string(),
    }
}

fn step_of(text: &str) -> Option<i32> {
    match text.to_ascii_lowercase().as_str() {
        "batch" => Some(BATCH_STEP),
        "extern" => Some(EXTERN_STEP),
        n => n.parse::<u32>().ok().and_then(|n| i32::try_from(n).ok()),
    }
}

fn positive(text: &str) -> Option<u32> {
    text.parse::<u32>().ok().filter(|n| *n > 0)
}

/// Parses one `-j` value (comma-separated items); the error is Slurm's text.
pub fn job_list(v: &str) -> Result<Vec<JobSel>, String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|item| {
            let bad = || format!("sacct: fatal: Bad job/step specified: {item}");
            let (job, step) = match item.split_once('.') {
                Some((j, s)) => (j, Some(step_of(s).ok_or_else(bad)?)),
                None => (item, None),
            };
            let (id, task) = match job.split_once('_') {
                Some((id, t)) => (id, Some(t.parse::<u32>().map_err(|_| bad())?)),
                None => (job, None),
            };
            let id = positive(id).ok_or_else(bad)?;
            Ok(JobSel { id, task, step })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(id: u32, task: Option<u32>, step: Option<i32>) -> JobSel {
        JobSel { id, task, step }
    }

    #[test]
    fn items_take_tasks_and_steps() {
        assert_eq!(
            job_list("5,6.batch,7.0,8_3,8_4.extern").unwrap(),
            vec![
                sel(5, None, None),
                sel(6, None, Some(BATCH_STEP)),
                sel(7, None, Some(0)),
                sel(8, Some(3), None),
                sel(8, Some(4), Some(EXTERN_STEP)),
            ]
        );
        for bad in ["x", "0", "5.x", "5_y", "-3"] {
            assert_eq!(
                job_list(bad).unwrap_err(),
                format!("sacct: fatal: Bad job/step specified: {bad}")
            );
        }
    }

    #[test]
    fn array_items_match_their_tasks() {
        let task = JobRow {
            job_id: 12,
            array_job_id: 8,
            array_task_id: Some(3),
            ..Default::default()
        };
        assert!(sel(8, None, None).matches(&task));
        assert!(sel(12, None, None).matches(&task));
        assert!(sel(8, Some(3), None).matches(&task));
        assert!(!sel(8, Some(4), None).matches(&task));
        assert!(!sel(12, Some(3), None).matches(&task));
    }
}
