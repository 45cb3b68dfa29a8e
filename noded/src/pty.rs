//! Task 0's pseudo-terminal for `srun --pty`: opened by the node daemon at srun's window size,
//! its slave becomes the task's stdin, stdout, stderr and controlling terminal (the task leads
//! a session of its own, so the terminal's Ctrl-C reaches it as SIGINT), and its master is read
//! as the task's output and written with srun's input; srun's window changes resize it.
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

/// Makes `cmd`'s process run on `slave`: its three standard streams, and its controlling
/// terminal, in a new session (whose process group is the one the daemon signals: its id is
/// the task's pid, as for the other tasks). `cmd` must not be put in a process group of its
/// own beforehand, which would keep it from leading a session.
pub fn run_on(cmd: &mut Command, slave: &OwnedFd) -> std::io::Result<()> {
    cmd.stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave.try_clone()?));
    // SAFETY: the closure runs in the forked child before exec; it only makes the system calls
    // setsid and ioctl (both async-signal-safe) and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()?;
            if nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}
