//! What srun does on Ctrl-C, as Slurm's srun does it:
//!
//! * first Ctrl-C: `srun: interrupt (one more within 1 sec to abort)` and the tasks' status;
//!   the tasks keep running;
//! * a second one within a second: `srun: sending Ctrl-C to StepId=J.S`, SIGINT to every task;
//! * with `-X/--disable-status` the first Ctrl-C already sends SIGINT, and with
//!   `--quit-on-interrupt` it also ends the step at once;
//! * once SIGINT was sent, a further quick Ctrl-C forces termination (SIGKILL to the tasks),
//!   and one more after that stops waiting for the node daemons altogether.
//!
//! Time is an argument so the rule is tested without waiting. The other signals srun catches
//! are forwarded, end the step or are ignored ([`other_signal`]).

use crate::interrupts::sig;
use std::time::{Duration, Instant};

/// How close two Ctrl-C must be to count as one "abort".
pub const WINDOW: Duration = Duration::from_secs(1);

/// What to do for one Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Print the interrupt notice and each task's status.
    Status,
    /// Send SIGINT to the tasks.
    ForwardInt,
    /// Send SIGINT, then SIGKILL to the tasks (`--quit-on-interrupt`).
    ForwardIntAndKill,
    /// SIGKILL the tasks (`srun: forcing job termination`).
    Kill,
    /// Stop waiting: drop the task streams and exit.
    Abandon,
}

/// The Ctrl-C state of one srun.
#[derive(Debug, Clone, Default)]
pub struct Interrupts {
    disable_status: bool,
    quit_on_interrupt: bool,
    last: Option<Instant>,
    escalation: u8,
}

impl Interrupts {
    /// A fresh state for srun's `-X` and `--quit-on-interrupt` choices.
    pub fn new(disable_status: bool, quit_on_interrupt: bool) -> Self {
        Self {
            disable_status,
            quit_on_interrupt,
            last: None,
            escalation: 0,
        }
    }

    /// The action for a Ctrl-C arriving at `now`.
    pub fn on_interrupt(&mut self, now: Instant) -> Action {
        let quick = self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) < WINDOW);
        self.last = Some(now);
        if self.quit_on_interrupt {
            return self.escalate(Action::ForwardIntAndKill);
        }
        if self.escalation > 0 {
            return if quick {
                self.escalate(Action::Kill)
            } else if self.disable_status {
                Action::ForwardInt
            } else {
                Action::Status
            };
        }
        if quick || self.disable_status {
            self.escalate(Action::ForwardInt)
        } else {
            Action::Status
        }
    }

    fn escalate(&mut self, first: Action) -> Action {
        self.escalation = self.escalation.saturating_add(1);
        match self.escalation {
            1 => first,
            2 if first != Action::ForwardIntAndKill => Action::Kill,
            _ => Action::Abandon,
        }
    }
}

/// The signals srun catches besides SIGINT and SIGTERM (see [`other_signal`]).
pub const CAUGHT: &[i32] = &[
    sig::HUP,
    sig::QUIT,
    sig::USR1,
    sig::USR2,
    sig::ALRM,
    sig::CONT,
    sig::TSTP,
    sig::WINCH,
];

/// What srun does with a caught signal other than SIGINT and SIGTERM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passed {
    /// Send it to every task (SIGUSR1, SIGUSR2, SIGALRM).
    Forward,
    /// End the step as SIGTERM does (SIGHUP: the terminal is gone; SIGQUIT: Ctrl-\).
    End,
    /// Nothing: Ctrl-Z (SIGTSTP) neither stops srun nor its tasks, and SIGCONT has nothing
    /// to resume.
    Ignore,
    /// The terminal changed size (SIGWINCH): with `--pty`, task 0's terminal follows.
    Window,
}

/// How srun treats signal `n` (one of [`CAUGHT`]).
pub fn other_signal(n: i32) -> Passed {
    match n {
        sig::HUP | sig::QUIT => Passed::End,
        sig::CONT | sig::TSTP => Passed::Ignore,
        sig::WINCH => Passed::Window,
        _ => Passed::Forward,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caught_signals_are_forwarded_end_the_step_or_are_ignored() {
        let passed: Vec<Passed> = CAUGHT.iter().map(|n| other_signal(*n)).collect();
        assert_eq!(
            passed,
            [
                Passed::End,
                Passed::End,
                Passed::Forward,
                Passed::Forward,
                Passed::Forward,
                Passed::Ignore,
                Passed::Ignore,
                Passed::Window,
            ]
        );
    }

    #[test]
    fn two_quick_interrupts_forward_sigint() {
        let t0 = Instant::now();
        let mut i = Interrupts::new(false, false);
        assert_eq!(i.on_interrupt(t0), Action::Status);
        assert_eq!(
            i.on_interrupt(t0 + Duration::from_millis(500)),
            Action::ForwardInt
        );
        assert_eq!(
            i.on_interrupt(t0 + Duration::from_millis(900)),
            Action::Kill
        );
        assert_eq!(
            i.on_interrupt(t0 + Duration::from_millis(950)),
            Action::Abandon
        );
    }

    #[test]
    fn slow_interrupts_only_report_status() {
        let t0 = Instant::now();
        let mut i = Interrupts::new(false, false);
        assert_eq!(i.on_interrupt(t0), Action::Status);
        assert_eq!(i.on_interrupt(t0 + Duration::from_secs(2)), Action::Status);
        assert_eq!(i.on_interrupt(t0 + Duration::from_secs(4)), Action::Status);
    }

    #[test]
    fn disable_status_forwards_at_once() {
        let t0 = Instant::now();
        let mut i = Interrupts::new(true, false);
        assert_eq!(i.on_interrupt(t0), Action::ForwardInt);
        assert_eq!(
            i.on_interrupt(t0 + Duration::from_secs(3)),
            Action::ForwardInt
        );
        assert_eq!(
            i.on_interrupt(t0 + Duration::from_millis(3100)),
            Action::Kill
        );
    }

    #[test]
    fn quit_on_interrupt_ends_the_step() {
        let t0 = Instant::now();
        let mut i = Interrupts::new(false, true);
        assert_eq!(i.on_interrupt(t0), Action::ForwardIntAndKill);
        assert_eq!(i.on_interrupt(t0 + Duration::from_secs(5)), Action::Abandon);
    }
}
