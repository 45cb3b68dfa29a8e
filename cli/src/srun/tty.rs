//! `srun --pty` on the user's side: the terminal on srun's stdin is put in raw mode for as
//! long as the step runs (keys, Ctrl-C included, go to task 0's terminal as they are typed)
//! and its size is read at launch and on every SIGWINCH, for the node to resize task 0's.
//!
//! Reading the size needs an `ioctl` nix has no safe wrapper for: this module holds srun's
//! only unsafe code.
#![allow(unsafe_code)]

use std::os::fd::AsFd;

use nix::pty::Winsize;
use nix::sys::termios::{self, SetArg, Termios};
use sluice_wire::proto::WindowSize;

nix::ioctl_read_bad!(get_window, nix::libc::TIOCGWINSZ, Winsize);

/// The size of the terminal on stdin; `None` when stdin is not a terminal.
pub fn window() -> Option<WindowSize> {
    let mut size = Winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: descriptor 0 is the process's stdin (an invalid one only fails the call), and
    // `size` is a valid, writable winsize that outlives the call; TIOCGWINSZ only writes it.
    unsafe { get_window(0, &mut size) }.ok()?;
    Some(WindowSize {
        rows: size.ws_row.into(),
        cols: size.ws_col.into(),
    })
}

/// stdin's terminal in raw mode while this value lives; its settings come back on drop.
#[derive(Debug)]
pub struct Raw {
    saved: Termios,
}

impl Raw {
    /// Puts stdin's terminal in raw mode; `None` when stdin is not a terminal.
    pub fn enter() -> Option<Raw> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).ok()?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSADRAIN, &raw).ok()?;
        Some(Raw { saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSADRAIN, &self.saved);
    }
}
