//! Where an srun step's tasks read and write (`srun -i/-o/-e`): srun's stream or a file named
//! by a Slurm pattern, expanded per task (`%t` gives each task its own file, `%N`/`%n` each
//! node), relative to the step's working directory.

use sluice_wire::proto::RunStepRequest;

use crate::pattern::{PatternVars, StepKind, expand};
use crate::spawn::{TaskIo, TaskStderr, TaskStdin};

/// The I/O of the step's task `rank` on node `node_name`.
pub fn task_io(req: &RunStepRequest, node_name: &str, rank: u32) -> TaskIo {
    let vars = PatternVars {
        job_id: req.job_id,
        step: StepKind::Step(req.step_id),
        array_job_id: if req.array_task_id.is_some() {
            req.array_job_id
        } else {
            req.job_id
        },
        array_task_id: req.array_task_id,
        job_name: &req.name,
        user: &req.user,
        node: node_name,
        node_index: req.node_index,
        task: rank,
    };
    let file = |pattern: &str| (!pattern.is_empty()).then(|| expand(pattern, &vars));
    if req.pty && rank == 0 {
        // srun --pty: task 0's three streams are the terminal, whatever -i/-o/-e say.
        return TaskIo {
            stdin: TaskStdin::Terminal,
            stdout: None,
            stderr: TaskStderr::Piped,
            reports: Vec::new(),
        };
    }
    let stdin = if req.stdin_from_srun {
        match req.stdin_task {
            Some(t) if t != rank => TaskStdin::Null,
            _ => TaskStdin::Piped,
        }
    } else {
        file(&req.stdin_file).map_or(TaskStdin::Null, TaskStdin::File)
    };
    let stderr = if !req.stderr_file.is_empty() && req.stderr_file == req.stdout_file {
        TaskStderr::WithStdout
    } else {
        file(&req.stderr_file).map_or(TaskStderr::Piped, TaskStderr::File)
    };
    TaskIo {
        stdin,
        stdout: file(&req.stdout_file),
        stderr,
        reports: Vec::new(),
    }
}

/// The output files of `tasks` to empty before they start (none with `--open-mode=append`),
/// each once; `/dev/null` and the like are left alone.
pub fn files_to_truncate(req: &RunStepRequest, tasks: &[TaskIo]) -> Vec<String> {
    if req.open_append {
        return Vec::new();
    }
    let mut files: Vec<String> = Vec::new();
    for io in tasks {
        let err = match &io.stderr {
            TaskStderr::File(f) => Some(f),
            _ => None,
        };
        for f in io.stdout.iter().chain(err) {
            if !f.starts_with("/dev/") && !files.contains(f) {
                files.push(f.clone());
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> RunStepRequest {
        RunStepRequest {
            job_id: 12,
            step_id: 0,
            name: "python".into(),
            user: "alice".into(),
            node_index: 1,
            ..Default::default()
        }
    }

    #[test]
    fn submitit_style_names_are_per_task() {
        let mut r = req();
        r.stdout_file = "/tmp/x/%j_%t_log.out".into();
        r.stderr_file = "/tmp/x/%j_%t_log.err".into();
        let io = task_io(&r, "n2", 3);
        assert_eq!(io.stdout.as_deref(), Some("/tmp/x/12_3_log.out"));
        assert_eq!(io.stderr, TaskStderr::File("/tmp/x/12_3_log.err".into()));
        assert_eq!(io.stdin, TaskStdin::Null);
        r.stdout_file = "%J-%3t-%N-%n-%u-%x-%s-%%.out".into();
        r.stderr_file = r.stdout_file.clone();
        let io = task_io(&r, "n2", 3);
        assert_eq!(
            io.stdout.as_deref(),
            Some("12.0-003-n2-1-alice-python-0-%.out")
        );
        assert_eq!(io.stderr, TaskStderr::WithStdout);
    }

    #[test]
    fn an_array_elements_step_names_the_array() {
        let mut r = req();
        r.stdout_file = "/f/%A_%a_%t_log.out".into();
        r.array_job_id = 10;
        r.array_task_id = Some(2);
        assert_eq!(
            task_io(&r, "n", 0).stdout.as_deref(),
            Some("/f/10_2_0_log.out")
        );
    }

    #[test]
    fn stdin_from_srun_goes_to_all_or_one_task() {
        let mut r = req();
        r.stdin_from_srun = true;
        assert_eq!(task_io(&r, "n", 0).stdin, TaskStdin::Piped);
        r.stdin_task = Some(1);
        assert_eq!(task_io(&r, "n", 0).stdin, TaskStdin::Null);
        assert_eq!(task_io(&r, "n", 1).stdin, TaskStdin::Piped);
        r.stdin_from_srun = false;
        r.stdin_file = "in.%t".into();
        assert_eq!(task_io(&r, "n", 1).stdin, TaskStdin::File("in.1".into()));
    }

    #[test]
    fn shared_files_are_truncated_once_and_never_in_append_mode() {
        let mut r = req();
        r.stdout_file = "out.%j".into();
        r.stderr_file = "/dev/null".into();
        let tasks: Vec<TaskIo> = (0..3).map(|t| task_io(&r, "n", t)).collect();
        assert_eq!(files_to_truncate(&r, &tasks), ["out.12"]);
        r.open_append = true;
        assert!(files_to_truncate(&r, &tasks).is_empty());
    }
}
