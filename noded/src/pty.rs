//! Task 0's pseudo-terminal for `srun --pty`: opened by the node daemon at srun's window size
//! and handed to the task's supervisor, which leads a session of its own with the slave as its
//! controlling terminal and gives the slave to the task as its stdin, stdout and stderr (the
//! terminal's Ctrl-C reaches the task as SIGINT); the supervisor copies the master to its
//! stdout (the task's output the daemon reads), the daemon writes srun's input to the master
//! and applies srun's window changes to it.
//!
//! Making the terminal the controlling one and resizing it need `ioctl`s that nix has no safe
//! wrapper for: this module holds the daemon's only unsafe code, one block per call.
#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;

use nix::pty::{Winsize, openpty};
use tokio::process::Command;

/// An open pseudo-terminal: the master end the daemon keeps, the slave end the task gets.
#[derive(Debug)]
pub struct Pty {
    /// The daemon's end.
    pub master: OwnedFd,
    /// The task's end.
    pub slave: OwnedFd,
}

fn winsize(rows: u32, cols: u32) -> Winsize {
    Winsize {
        ws_row: u16::try_from(rows).unwrap_or(u16::MAX),
        ws_col: u16::try_from(cols).unwrap_or(u16::MAX),
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// Opens a pseudo-terminal of `rows` x `cols`.
pub fn open(rows: u32, cols: u32) -> std::io::Result<Pty> {
    let pair = openpty(&winsize(rows, cols), None::<&nix::sys::termios::Termios>)?;
    Ok(Pty {
        master: pair.master,
        slave: pair.slave,
    })
}

nix::ioctl_write_ptr_bad!(set_window, nix::libc::TIOCSWINSZ, Winsize);

/// Resizes the terminal whose master is `master` (the task gets SIGWINCH).
pub fn resize(master: &OwnedFd, rows: u32, cols: u32) -> std::io::Result<()> {
    let size = winsize(rows, cols);
    // SAFETY: `master` is an open descriptor owned by the caller for the whole call, and
    // `size` is a valid winsize that outlives it; TIOCSWINSZ only reads it.
    unsafe { set_window(master.as_raw_fd(), &size) }?;
    Ok(())
}

/// Hands `tty` to `cmd`, the task's supervisor (`sluice-stepd --task --pty`, see
/// [`crate::supervise_task`]): its stdin is the master (which it copies to its stdout, the
/// task's output), its stderr the slave, which it gives the task as its three streams. It
/// leads a new session with the slave as controlling terminal, so the task it starts in its
/// process group is the terminal's foreground group (a typed Ctrl-C is its SIGINT), and the
/// terminal lives as long as the supervisor, not this daemon: the task survives a restart of
/// the daemon as the other step tasks do. `cmd` must not be put in a process group of its own
/// beforehand, which would keep it from leading a session.
pub fn supervised_on(cmd: &mut Command, tty: &Pty) -> std::io::Result<()> {
    cmd.stdin(Stdio::from(tty.master.try_clone()?))
        .stderr(Stdio::from(tty.slave.try_clone()?));
    // SAFETY: the closure runs in the forked child before exec; it only makes the system calls
    // setsid and ioctl (both async-signal-safe) and allocates nothing. Its stderr (fd 2) is
    // the slave by then.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            if nix::libc::ioctl(2, nix::libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}
