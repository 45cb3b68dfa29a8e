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
const STEP: &str =
    "umask \"${SLURM_UMASK:-0022}\"; SLURM_TASK_PID=$$; export SLURM_TASK_PID; exec \"$@\"";

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
    /// Its stdout file.
    pub out: &'a Path,
    /// Its stderr file, when not with stdout.
    pub err: Option<&'a Path>,
    /// `--open-mode=append`: the files are appended to rather than truncated.
    pub append: bool,
}

/// A batch script's command: its supervisor `stepd` (see [`crate::supervise`]), which runs the
/// wrapper as the job's user with the script and its arguments, stdin from `/dev/null` and its
/// output as `io` says, and writes the script's status to `status`. The supervisor's stdin and
/// stdout carry its conversation with this daemon; its stderr (and the wrapper's, e.g. a
/// failure to open the output files) is piped so it can be logged.
pub fn batch_command(
    stepd: &Path,
    status: &Path,
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
    let mut argv: Vec<OsString> = [SHELL, "-c", wrapper, WRAPPER_NAME, "/dev/null"]
        .into_iter()
        .map(OsString::from)
        .collect();
    argv.push(io.out.into());
    argv.extend(io.err.map(OsString::from));
    argv.push(io.script.into());
    argv.extend(io.args.iter().map(OsString::from));
    let plan = Plan {
        status: status.to_path_buf(),
        run_as,
        argv,
    };
    let mut cmd = Command::new(stepd);
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

/// A step task's command: runs `argv` (searched in the job's `PATH`) with its output piped.
pub fn step_command(run_as: Option<RunAs>, dir: &Path, env: &Env, argv: &[String]) -> Command {
    let mut cmd = base(run_as, dir, env);
    cmd.arg("-c").arg(STEP).arg(WRAPPER_NAME).args(argv);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
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
