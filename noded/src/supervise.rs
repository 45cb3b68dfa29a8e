//! The supervisor of one batch script, `sluice-stepd` (Slurm's slurmstepd plays this role).
//!
//! The node daemon starts the supervisor, which starts the script (as the job's user, in a
//! process group of its own) and stays its parent, so the script's real exit status is read
//! by a process that outlives restarts of the node daemon. The supervisor is in a process group
//! of its own too, apart from the job's: signals for the job never reach it.
//!
//! Its conversation with the node daemon, one line each way on stdout/stdin:
//! - `started <pid>` once the script runs and its launch record (`<pgid> <launch count>
//!   <supervisor pid>`, see [`crate::adopt`]) is written, by the supervisor itself, so a node
//!   daemon killed at any moment after the start finds the script again;
//! - `exited` once the script has exited and is not yet reaped (the daemon takes its last
//!   usage sample of the zombie now), then the supervisor waits for a line or the end of its
//!   stdin: a node daemon that is gone (killed, restarting) ends it at once;
//! - the script reaped, its status is written to the status file (renamed into place; synced
//!   first under `SluiceStateSync=full`) and then `status <exit code> <signal>` on stdout. A
//!   restarted daemon that adopted the job reads the file: the true exit code survives any
//!   number of daemon restarts.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::errno::Errno;
use nix::sys::wait::{Id, WaitPidFlag, waitid};
use nix::unistd::Pid;

use crate::spawn::{RunAs, exit_parts};

/// The supervisor's program name, looked for next to the node daemon's.
pub const PROGRAM: &str = "sluice-stepd";
/// The flag that makes it supervise an srun step task.
const TASK_FLAG: &str = "--task";
/// The flag that makes it fsync the launch record and the status file (`SluiceStateSync=full`).
const SYNC_FLAG: &str = "--sync";
/// After [`TASK_FLAG`]: the task runs on the pseudo-terminal the supervisor was given (see
/// [`crate::supervise_task`]).
const PTY_FLAG: &str = "--pty";

/// How a script ended: exit code, or the signal that killed it (code 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Its exit code (0 when killed by a signal).
    pub exit_code: i32,
    /// The signal that ended it, else 0.
    pub signal: i32,
}

impl Ended {
    /// The text of a status line and of the status file: `<exit code> <signal>`.
    pub fn text(self) -> String {
        format!("{} {}", self.exit_code, self.signal)
    }

    /// Reads [`Ended::text`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let (code, signal) = text.trim().split_once(' ')?;
        Some(Self {
            exit_code: code.parse().ok()?,
            signal: signal.parse().ok()?,
        })
    }

    /// The status a supervisor left in `path`, if it finished writing one.
    pub fn read(path: &Path) -> Option<Self> {
        Self::parse(&std::fs::read_to_string(path).ok()?)
    }
}

/// What the supervisor is asked to run: its command line is
/// `sluice-stepd [--sync] [--task [--pty]] <status file> <launch record> <launch count> <uid|-> <gid|-> <program>
/// [args...]` (`--task`: an srun step task, see [`crate::supervise_task`]; `--sync`: its files
/// are fsynced before they are renamed into place).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// A step task (its output copied through), not a batch script.
    pub task: bool,
    /// A step task on a pseudo-terminal (`srun --pty`): its stdin is the terminal's master,
    /// its stderr the slave (its controlling terminal).
    pub pty: bool,
    /// Whether the launch record and the status file are fsynced (`SluiceStateSync=full`);
    /// renamed into place either way, so a crash of the node daemon finds them whole.
    pub sync: bool,
    /// Where the status goes.
    pub status: PathBuf,
    /// The launch record to write once the script runs.
    pub record: PathBuf,
    /// The launch count (the job's restart count) the record names.
    pub restart: u32,
    /// The user the script runs as (`-`: the supervisor's own).
    pub run_as: Option<RunAs>,
    /// The script's command line.
    pub argv: Vec<OsString>,
}

impl Plan {
    /// The supervisor's arguments for this plan (see [`Plan::parse`]).
    pub fn args(&self) -> Vec<OsString> {
        let id = |v: Option<u32>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        let mut args: Vec<OsString> = self.sync.then(|| SYNC_FLAG.into()).into_iter().collect();
        if self.task {
            args.push(TASK_FLAG.into());
        }
        if self.task && self.pty {
            args.push(PTY_FLAG.into());
        }
        args.extend([
            self.status.clone().into_os_string(),
            self.record.clone().into_os_string(),
            self.restart.to_string().into(),
            id(self.run_as.map(|r| r.uid)).into(),
            id(self.run_as.map(|r| r.gid)).into(),
        ]);
        args.extend(self.argv.iter().cloned());
        args
    }

    /// Reads the supervisor's arguments (program name excluded).
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, String> {
        let mut args = args.into_iter().peekable();
        let usage = || {
            format!(
                "usage: {PROGRAM} [--sync] [--task [--pty]] <status file> <launch record> <launch count> <uid|-> \
                 <gid|-> <program> [args...]"
            )
        };
        let sync = args.next_if(|a| a == SYNC_FLAG).is_some();
        let task = args.next_if(|a| a == TASK_FLAG).is_some();
        let pty = task && args.next_if(|a| a == PTY_FLAG).is_some();
        let status = PathBuf::from(args.next().ok_or_else(usage)?);
        let record = PathBuf::from(args.next().ok_or_else(usage)?);
        let restart = args.next().ok_or_else(usage)?;
        let restart = restart
            .to_str()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| format!("invalid launch count `{}'", restart.to_string_lossy()))?;
        let id = |a: Option<OsString>| -> Result<Option<u32>, String> {
            let a = a.ok_or_else(usage)?;
            match a.to_str() {
                Some("-") => Ok(None),
                Some(v) => v
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("invalid user or group id `{v}'")),
                None => Err(usage()),
            }
        };
        let (uid, gid) = (id(args.next())?, id(args.next())?);
        let run_as = match (uid, gid) {
            (Some(uid), Some(gid)) => Some(RunAs { uid, gid }),
            (None, None) => None,
            _ => return Err("a uid needs a gid and a gid a uid".into()),
        };
        let argv: Vec<OsString> = args.collect();
        if argv.is_empty() {
            return Err(usage());
        }
        Ok(Self {
            task,
            pty,
            sync,
            status,
            record,
            restart,
            run_as,
            argv,
        })
    }
}

/// Runs `plan` to its end (the supervisor's whole life).
pub fn supervise(plan: &Plan) -> Result<Ended, String> {
    let mut cmd = Command::new(&plan.argv[0]);
    cmd.args(&plan.argv[1..])
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(who) = plan.run_as {
        cmd.uid(who.uid).gid(who.gid);
    }
    propagate_limits(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", plan.argv[0].to_string_lossy()))?;
    let pid = Pid::from_raw(i32::try_from(child.id()).map_err(|e| e.to_string())?);
    let record = format!("{pid} {} {}\n", plan.restart, std::process::id());
    if let Err(e) = sluice_wire::daemon::replace_file(&plan.record, &record, plan.sync) {
        // The script runs on; only a restart of the node daemon would not find it.
        eprintln!("{PROGRAM}: cannot write the launch record: {e}");
    }
    say(&format!("started {pid}"));
    loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(format!("cannot wait for process {pid}: {e}")),
            Ok(_) => break,
        }
    }
    say("exited");
    // A line when the daemon has sampled the zombie; nothing (end of input) when it is gone.
    let _ = std::io::stdin().read(&mut [0u8; 1]);
    let status = child
        .wait()
        .map_err(|e| format!("cannot reap process {pid}: {e}"))?;
    let (exit_code, signal) = exit_parts(status);
    let ended = Ended { exit_code, signal };
    sluice_wire::daemon::replace_file(&plan.status, format!("{}\n", ended.text()), plan.sync)
        .map_err(|e| e.to_string())?;
    say(&format!("status {}", ended.text()));
    Ok(ended)
}

/// Sets the limits the job carried from its submitting host (`SLURM_RLIMIT_*`, see
/// [`sluice_wire::rlimits`]) on this supervisor, so `cmd` inherits them, and leaves the
/// variables out of `cmd`'s environment. A limit the user asked for that cannot be set is
/// reported (on stderr, which the node daemon logs), as Slurm's step daemon reports it.
pub(crate) fn propagate_limits(cmd: &mut Command) {
    let environ = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    for limit in sluice_wire::rlimits::apply(environ) {
        if let Some(e) = &limit.error {
            eprintln!("{PROGRAM}: error: {e}");
        }
        cmd.env_remove(&limit.var);
    }
}

/// One line to the node daemon; it may be gone, which changes nothing.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// Where the supervisor program is: `SLUICE_STEPD` when set, else next to the running
/// program (a test binary in cargo's `deps/` looks one level up).
pub fn default_program() -> PathBuf {
    if let Some(path) = std::env::var_os("SLUICE_STEPD") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe.parent().unwrap_or(Path::new("."));
    let beside = dir.join(PROGRAM);
    if !beside.exists()
        && dir.file_name().is_some_and(|n| n == "deps")
        && let Some(up) = dir.parent()
    {
        return up.join(PROGRAM);
    }
    beside
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_plan_goes_through_its_command_line_unchanged() {
        let plan = Plan {
            task: false,
            pty: false,
            sync: false,
            status: "/s/7.status".into(),
            record: "/s/7".into(),
            restart: 2,
            run_as: Some(RunAs {
                uid: 1000,
                gid: 100,
            }),
            argv: os(&["/bin/sh", "-c", "exit 3"]),
        };
        assert_eq!(Plan::parse(plan.args()), Ok(plan.clone()));
        let own = Plan {
            run_as: None,
            ..plan
        };
        assert_eq!(own.args()[1..5], os(&["/s/7", "2", "-", "-"]));
        assert_eq!(Plan::parse(own.args()), Ok(own.clone()));
        let task = Plan { task: true, ..own };
        assert_eq!(task.args()[0], "--task");
        assert_eq!(Plan::parse(task.args()), Ok(task.clone()));
        let pty = Plan { pty: true, ..task };
        assert_eq!(pty.args()[..2], os(&["--task", "--pty"]));
        assert_eq!(Plan::parse(pty.args()), Ok(pty.clone()));
        let synced = Plan { sync: true, ..pty };
        assert_eq!(synced.args()[..3], os(&["--sync", "--task", "--pty"]));
        assert_eq!(Plan::parse(synced.args()), Ok(synced));
    }

    #[test]
    fn bad_command_lines_are_named() {
        let usage = |args: &[&str]| Plan::parse(os(args)).unwrap_err().starts_with("usage:");
        assert!(usage(&[]));
        assert!(usage(&["/s", "/r", "0", "-", "-"]), "no program");
        assert_eq!(
            Plan::parse(os(&["/s", "/r", "x", "-", "-", "/bin/true"])).unwrap_err(),
            "invalid launch count `x'"
        );
        assert_eq!(
            Plan::parse(os(&["/s", "/r", "0", "x", "1", "/bin/true"])).unwrap_err(),
            "invalid user or group id `x'"
        );
        assert_eq!(
            Plan::parse(os(&["/s", "/r", "0", "1", "-", "/bin/true"])).unwrap_err(),
            "a uid needs a gid and a gid a uid"
        );
    }

    #[test]
    fn status_text_round_trips_and_junk_is_none() {
        let e = Ended {
            exit_code: 3,
            signal: 0,
        };
        assert_eq!(Ended::parse(&format!("{}\n", e.text())), Some(e));
        assert_eq!(Ended::parse("3"), None);
        assert_eq!(Ended::parse("a b"), None);
    }
}
