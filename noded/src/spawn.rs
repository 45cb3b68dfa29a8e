//! Starting a job's processes: as the job's user when the daemon is root, in a process group of
//! their own, in the job's working directory, with exactly the job's environment.
//!
//! Every process starts as `/bin/sh -c <wrapper>`, which exports `SLURM_TASK_PID=$$` and then
//! `exec`s the real program, so the pid stays the same and signals reach the program itself.
//! For batch scripts the wrapper also opens the output files *after* the switch to the job's
//! user, so they are created with the user's uid/gid and the user's permissions apply, and
//! no file is ever opened by root on a user's behalf.
//!
//! Supplementary groups: `CommandExt::groups` is not stable, and `setgroups` in `pre_exec` is
//! unsafe code; so jobs run with the job's uid and primary gid only (std clears the daemon's
//! supplementary groups when it changes the uid as root).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use crate::env::Env;
use crate::supervise::Plan;

/// The shell every job process starts from.
const SHELL: &str = "/bin/sh";
/// `$0` of the wrapper shell, seen in its error messages.
const WRAPPER_NAME: &str = "slurmstepd";
/// Where a job runs when its working directory is missing, as in Slurm.
const FALLBACK_DIR: &str = "/tmp";

// The redirections come first (`exec` without a program applies them to the shell), then the
// script with its arguments is all that is left of `$@`, so no shell variable is set that the
// job's environment could hold.
// The umask is the submitter's (`SLURM_UMASK`, set by sbatch and srun), else 0022: never the
// daemon's own 0077.
const BATCH_SEPARATE: &str = "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec <\"$1\" >\"$2\" 2>\"$3\"; shift 3; exec \"$@\"";
const BATCH_JOINED: &str = "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec <\"$1\" >\"$2\" 2>&1; shift 2; exec \"$@\"";
const BATCH_SEPARATE_APPEND: &str = "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec <\"$1\" >>\"$2\" 2>>\"$3\"; shift 3; exec \"$@\"";
const BATCH_JOINED_APPEND: &str = "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec <\"$1\" >>\"$2\" 2>&1; shift 2; exec \"$@\"";
const STEP_PREFIX: &str =
    "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; ";

/// Who a job's processes run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAs {
    /// The job's uid.
    pub uid: u32,
    /// The job's primary gid.
    pub gid: u32,
}

impl RunAs {
    /// The job's user when the daemon runs as root; `None` (run as the daemon) otherwise.
    pub fn for_job(uid: u32, gid: u32) -> Option<Self> {
        nix::unistd::geteuid()
            .is_root()
            .then_some(Self { uid, gid })
    }
}

/// The directory a job runs in: `workdir`, or `/tmp` when it does not exist.
pub fn working_dir(workdir: &str) -> PathBuf {
    let dir = Path::new(workdir);
    if !workdir.is_empty() && dir.is_dir() {
        dir.to_path_buf()
    } else {
        tracing::warn!("couldn't chdir to `{workdir}': going to {FALLBACK_DIR} instead");
        PathBuf::from(FALLBACK_DIR)
    }
}

/// `/bin/sh` as the job's user (when the daemon is root), in `dir`, with exactly `env`, in a
/// process group of its own.
pub fn user_shell(run_as: Option<RunAs>, dir: &Path, env: &Env) -> Command {
    base(run_as, dir, env)
}

fn base(run_as: Option<RunAs>, dir: &Path, env: &Env) -> Command {
    let mut cmd = Command::new(SHELL);
    cmd.env_clear()
        .envs(env)
        .current_dir(dir)
        .process_group(0)
        .kill_on_drop(false);
    if let Some(who) = run_as {
        cmd.uid(who.uid).gid(who.gid);
    }
    cmd
}

/// What a batch script runs with: its file, its arguments (sbatch's words after the script's
/// name), and where its stdout and stderr go (`err: None`: with stdout).
#[derive(Debug, Clone, Copy)]
pub struct BatchIo<'a> {
    /// The script file.
    pub script: &'a Path,
    /// The script's arguments, `$1`...
    pub args: &'a [String],
    /// Its stdin file (`-i`, else `/dev/null`).
    pub input: &'a Path,
    /// Its stdout file.
    pub out: &'a Path,
    /// Its stderr file, when not with stdout.
    pub err: Option<&'a Path>,
    /// `--open-mode=append`: the files are appended to rather than truncated.
    pub append: bool,
}

/// A batch script's or step task's supervisor: its program, where it writes the status and
/// launch record, and the launch count the record names.
#[derive(Debug, Clone, Copy)]
pub struct Supervisor<'a> {
    /// `sluice-stepd`.
    pub program: &'a Path,
    /// The status file.
    pub status: &'a Path,
    /// The launch record.
    pub record: &'a Path,
    /// The job's launch (restart) count.
    pub restart: u32,
    /// Whether it fsyncs its files (`SluiceStateSync=full`).
    pub sync: bool,
}

/// A batch script's command: its supervisor (see [`crate::supervise`]), which runs the
/// wrapper as the job's user with the script and its arguments, stdin from `io.input` and its
/// output as `io` says, records the launch and writes the script's status. The supervisor's
/// stdin and stdout carry its conversation with this daemon; its stderr (and the wrapper's,
/// e.g. a failure to open the output files) is piped so it can be logged.
pub fn batch_command(
    stepd: Supervisor<'_>,
    run_as: Option<RunAs>,
    dir: &Path,
    env: &Env,
    io: BatchIo<'_>,
) -> Command {
    let wrapper = match (io.err.is_some(), io.append) {
        (true, false) => BATCH_SEPARATE,
        (false, false) => BATCH_JOINED,
        (true, true) => BATCH_SEPARATE_APPEND,
        (false, true) => BATCH_JOINED_APPEND,
    };
    let mut argv: Vec<OsString> = [SHELL, "-c", wrapper, WRAPPER_NAME]
        .into_iter()
        .map(OsString::from)
        .collect();
    argv.push(io.input.into());
    argv.push(io.out.into());
    argv.extend(io.err.map(OsString::from));
    argv.push(io.script.into());
    argv.extend(io.args.iter().map(OsString::from));
    let plan = Plan {
        task: false,
        pty: false,
        status: stepd.status.to_path_buf(),
        record: stepd.record.to_path_buf(),
        restart: stepd.restart,
        sync: stepd.sync,
        run_as,
        argv,
    };
    let mut cmd = Command::new(stepd.program);
    cmd.env_clear()
        .envs(env)
        .current_dir(dir)
        .process_group(0)
        .kill_on_drop(false)
        .args(plan.args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Where a step task's stdin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStdin {
    /// A pipe srun's stdin is written to.
    Piped,
    /// `/dev/null`.
    Null,
    /// A file (opened by the task, as the job's user).
    File(String),
    /// A pseudo-terminal, also its stdout, stderr and controlling terminal (`srun --pty`):
    /// the caller hands it to the task's supervisor ([`crate::pty::supervised_on`]).
    Terminal,
}

/// Where a step task's stderr goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStderr {
    /// Streamed back to srun.
    Piped,
    /// Appended to a file.
    File(String),
    /// Into the stdout file.
    WithStdout,
}

/// A step task's standard streams and what it reports before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskIo {
    /// Its stdin.
    pub stdin: TaskStdin,
    /// The file its stdout is appended to (`None`: streamed back).
    pub stdout: Option<String>,
    /// Its stderr.
    pub stderr: TaskStderr,
    /// `--cpu-bind=verbose`, `--mem-bind=verbose`: the lines printed on its stderr, each
    /// split around its pid.
    pub reports: Vec<(String, String)>,
}

/// The wrapper script for `io` and its positional arguments before the program's. Files are
/// always opened for appending: truncation, when asked, happened before any task started, so
/// tasks sharing a file do not cut each other's output.
fn step_script(io: &TaskIo) -> (String, Vec<String>) {
    let mut args: Vec<String> = Vec::new();
    let mut redirects: Vec<String> = Vec::new();
    let mut checks = String::new();
    let mut file = |stream: &str, op: &str, f: &str, args: &mut Vec<String>| {
        args.push(f.to_string());
        let at = format!("\"${}\"", args.len());
        let probe = if op == "<" { "<" } else { ">>" };
        checks.push_str(&format!(
            "{{ true {probe}{at}; }} 2>/dev/null || {CANNOT_OPEN} {stream} {at}; "
        ));
        redirects.push(format!("{op}{at}"));
    };
    if let TaskStdin::File(f) = &io.stdin {
        file("stdin", "<", f, &mut args);
    }
    if let Some(f) = &io.stdout {
        file("stdout", ">>", f, &mut args);
    }
    match &io.stderr {
        TaskStderr::File(f) => file("stderr", "2>>", f, &mut args),
        TaskStderr::WithStdout => redirects.push("2>&1".to_string()),
        TaskStderr::Piped => {}
    }
    let mut script = STEP_PREFIX.to_string();
    if !redirects.is_empty() {
        script.push_str(CANNOT_OPEN_FN);
        script.push_str(&checks);
        script.push_str(&format!("exec {}; ", redirects.join(" ")));
    }
    for (before, after) in &io.reports {
        args.push(before.clone());
        args.push(after.clone());
        let (b, a) = (args.len() - 1, args.len());
        script.push_str(&format!(
            "printf '%s%s%s\\n' \"${b}\" \"$$\" \"${a}\" >&2; "
        ));
    }
    script.push_str(&format!("shift {}; exec \"$@\"", args.len()));
    (script, args)
}

/// The wrapper's function for a file a task cannot open: srun's words, exit 1. The shell
/// knows no errno, so the reason is told from what exists.
const CANNOT_OPEN: &str = "cannot_open";
const CANNOT_OPEN_FN: &str = "cannot_open() { if [ -e \"$2\" ] || { [ \"$1\" != stdin ] && [ -d \"$(dirname -- \"$2\")\" ]; }; then r='Permission denied'; else r='No such file or directory'; fi; printf 'srun: error: Could not open %s file: %s\\n' \"$1\" \"$r\" >&2; exit 1; }; ";

/// A step task's command: its supervisor (see [`crate::supervise_task`]) runs `argv`
/// (searched in the job's `PATH`) as the job's user with its streams as `io` says; what is
/// not redirected is piped (through the supervisor). A task on a terminal (`srun --pty`) is
/// supervised too: the caller hands the supervisor the terminal (see
/// [`crate::pty::supervised_on`]), which then leads a session of its own, so the command is
/// not put in a process group here.
pub fn step_command(
    stepd: Supervisor<'_>,
    run_as: Option<RunAs>,
    dir: &Path,
    env: &Env,
    (argv, io): (&[String], &TaskIo),
) -> Command {
    let on_terminal = io.stdin == TaskStdin::Terminal;
    let (script, args) = step_script(io);
    let mut task: Vec<OsString> = [SHELL, "-c", &script, WRAPPER_NAME]
        .into_iter()
        .map(OsString::from)
        .collect();
    task.extend(args.iter().chain(argv).map(OsString::from));
    // Under its supervisor (see `supervise_task`), which switches to the job's user for it.
    let plan = Plan {
        task: true,
        pty: on_terminal,
        status: stepd.status.to_path_buf(),
        record: stepd.record.to_path_buf(),
        restart: stepd.restart,
        sync: stepd.sync,
        run_as,
        argv: task,
    };
    let mut cmd = Command::new(stepd.program);
    cmd.env_clear()
        .envs(env)
        .current_dir(dir)
        .kill_on_drop(false)
        .args(plan.args());
    if !on_terminal {
        cmd.process_group(0);
    }
    cmd.stdin(match io.stdin {
        TaskStdin::Piped => Stdio::piped(),
        TaskStdin::Null | TaskStdin::File(_) | TaskStdin::Terminal => Stdio::null(),
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    cmd
}

/// Creates (or empties) `files` as the job's user, with the job's umask, before the tasks that
/// append to them start.
pub fn truncate_command(run_as: Option<RunAs>, dir: &Path, env: &Env, files: &[String]) -> Command {
    let mut cmd = base(run_as, dir, env);
    cmd.arg("-c")
        .arg(format!("{STEP_PREFIX}for f; do : >\"$f\"; done"))
        .arg(WRAPPER_NAME)
        .args(files);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Exit code and terminating signal of a finished process, as reported to the controller.
pub fn exit_parts(status: std::process::ExitStatus) -> (i32, i32) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code, 0),
        (None, Some(sig)) => (0, sig),
        (None, None) => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(stdin: TaskStdin, stdout: Option<&str>, stderr: TaskStderr) -> TaskIo {
        TaskIo {
            stdin,
            stdout: stdout.map(String::from),
            stderr,
            reports: Vec::new(),
        }
    }

    #[test]
    fn scripts_redirect_only_what_goes_to_files() {
        let (script, args) = step_script(&io(TaskStdin::Piped, None, TaskStderr::Piped));
        assert!(script.ends_with("shift 0; exec \"$@\""), "{script}");
        assert!(args.is_empty());
        let both = io(
            TaskStdin::File("in".into()),
            Some("o"),
            TaskStderr::WithStdout,
        );
        let (script, args) = step_script(&both);
        assert!(
            script.contains("exec <\"$1\" >>\"$2\" 2>&1; shift 2;"),
            "{script}"
        );
        assert_eq!(args, ["in", "o"]);
        let probe = "{ true <\"$1\"; } 2>/dev/null || cannot_open stdin \"$1\";";
        assert!(script.contains(probe), "{script}");
        let mut split = io(TaskStdin::Null, Some("o"), TaskStderr::File("e".into()));
        split.reports = vec![("a [".into(), "] b".into())];
        let (script, args) = step_script(&split);
        assert!(
            script.contains("exec >>\"$1\" 2>>\"$2\"; printf"),
            "{script}"
        );
        assert!(
            script.contains("\"$3\" \"$$\" \"$4\" >&2; shift 4;"),
            "{script}"
        );
        assert_eq!(args, ["o", "e", "a [", "] b"]);
    }
}
