//! sacct's `-j` items: `123`, an array task `123_4`, a component of a heterogeneous job
//! `123+1`, a step `123.0`, `123.batch`, `123.extern`, or a step of a task or a component
//! `123_4.batch`, `123+1.0`.

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
    /// `+1`: one component (by its offset) of the heterogeneous job `id`.
    pub het: Option<u32>,
    /// The step after the dot: a number, -4 for `batch`, -5 for `extern`.
    pub step: Option<i32>,
}

impl JobSel {
    /// Whether this item names `row` (the job itself, the array task it names, or a
    /// component of heterogeneous job `id`: every one, or the one `+K` names).
    pub fn matches(&self, row: &JobRow) -> bool {
        if let Some(offset) = self.het {
            return row.het_job_id != 0 && row.het_job_id == self.id && row.het_offset == offset;
        }
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

/// A number written in digits alone (no sign).
fn digits(text: &str) -> Option<u32> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
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
            if let Some((id, offset)) = job.split_once('+') {
                let het = Some(digits(offset).ok_or_else(bad)?);
                let id = positive(id).ok_or_else(bad)?;
                return Ok(JobSel {
                    id,
                    task: None,
                    het,
                    step,
                });
            }
            let (id, task) = match job.split_once('_') {
                Some((id, t)) => (id, Some(t.parse::<u32>().map_err(|_| bad())?)),
                None => (job, None),
            };
            let id = positive(id).ok_or_else(bad)?;
            Ok(JobSel {
                id,
                task,
                het: None,
                step,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(id: u32, task: Option<u32>, step: Option<i32>) -> JobSel {
        JobSel {
            id,
            task,
            het: None,
            step,
        }
    }

    fn component(id: u32, offset: u32, step: Option<i32>) -> JobSel {
        JobSel {
            id,
            task: None,
            het: Some(offset),
            step,
        }
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
        for bad in [
            "x", "0", "5.x", "5_y", "-3", "5+", "+1", "0+1", "5+x", "5+-1", "5+1+2", "5+1_2",
            "5_1+2", "5+1.x", "5++1",
        ] {
            assert_eq!(
                job_list(bad).unwrap_err(),
                format!("sacct: fatal: Bad job/step specified: {bad}")
            );
        }
    }

    #[test]
    fn heterogeneous_components_are_named_by_offset() {
        assert_eq!(
            job_list("5+1,5+0.batch,6+2.3").unwrap(),
            vec![
                component(5, 1, None),
                component(5, 0, Some(BATCH_STEP)),
                component(6, 2, Some(3)),
            ]
        );
        let row = |job_id, het_job_id, het_offset| JobRow {
            job_id,
            het_job_id,
            het_offset,
            ..Default::default()
        };
        let (leader, follower, plain) = (row(5, 5, 0), row(6, 5, 1), row(7, 0, 0));
        assert!(component(5, 1, None).matches(&follower));
        assert!(!component(5, 1, None).matches(&leader));
        assert!(component(5, 0, None).matches(&leader));
        assert!(
            !component(6, 0, None).matches(&follower),
            "by its job's id only"
        );
        assert!(!component(7, 0, None).matches(&plain), "not heterogeneous");
        // The job's own id names every component.
        assert!(sel(5, None, None).matches(&leader) && sel(5, None, None).matches(&follower));
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
