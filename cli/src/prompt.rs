//! Reading stdin: interactive commands and the answers to sacctmgr's questions
//! ("Would you like to commit changes? (You have 30 seconds to decide)").
//!
//! One reader thread owns stdin and hands over lines, so a question can time out while a
//! read is pending, and commands and answers piped together arrive in order.

use std::io::{BufRead, IsTerminal};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// How long sacctmgr waits for an answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// What a read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A line, without its newline.
    Line(String),
    /// Input ended.
    Eof,
    /// Nothing arrived in time.
    Timeout,
}

/// A source of lines: stdin (read on a helper thread once first needed) or fixed text.
pub struct Input {
    rx: Option<Receiver<String>>,
    from_stdin: bool,
    is_terminal: bool,
}

impl Input {
    /// Lines from this process's stdin.
    pub fn stdin() -> Self {
        Self {
            rx: None,
            from_stdin: true,
            is_terminal: std::io::stdin().is_terminal(),
        }
    }

    /// Fixed lines (tests, scripted sessions).
    pub fn from_text(text: &str) -> Self {
        let (tx, rx) = channel();
        for line in text.lines() {
            // The receiver is alive: it is in the struct being built.
            let _ = tx.send(line.to_string());
        }
        Self {
            rx: Some(rx),
            from_stdin: false,
            is_terminal: false,
        }
    }

    /// Whether stdin is a terminal (sacctmgr prints its `sacctmgr: ` prompt only then).
    pub fn is_terminal(&self) -> bool {
        self.is_terminal
    }

    /// The next line, waiting at most `timeout` (forever when `None`).
    pub fn read(&mut self, timeout: Option<Duration>) -> Read {
        let from_stdin = self.from_stdin;
        let rx = self.rx.get_or_insert_with(|| spawn_reader(from_stdin));
        let got = match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match got {
            Ok(line) => Read::Line(line),
            Err(RecvTimeoutError::Timeout) => Read::Timeout,
            Err(RecvTimeoutError::Disconnected) => Read::Eof,
        }
    }
}

fn spawn_reader(from_stdin: bool) -> Receiver<String> {
    let (tx, rx) = channel();
    if from_stdin {
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut lock = stdin.lock();
            let mut line = String::new();
            loop {
                line.clear();
                match lock.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(text).is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
    rx
}

/// The answer to a yes/no question: only a line starting with `y`/`Y` means yes.
pub fn is_yes(answer: &Read) -> bool {
    matches!(answer, Read::Line(l) if l.trim_start().starts_with(['y', 'Y']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_text_is_read_then_ends() {
        let mut input = Input::from_text("y\nshow cluster\n");
        assert_eq!(input.read(None), Read::Line("y".into()));
        assert_eq!(
            input.read(Some(Duration::from_millis(1))),
            Read::Line("show cluster".into())
        );
        assert_eq!(input.read(None), Read::Eof);
        assert!(!input.is_terminal());
    }

    #[test]
    fn only_y_answers_yes() {
        assert!(is_yes(&Read::Line("y".into())));
        assert!(is_yes(&Read::Line(" Yes".into())));
        for no in [
            Read::Line("n".into()),
            Read::Line(String::new()),
            Read::Line("x".into()),
            Read::Eof,
            Read::Timeout,
        ] {
            assert!(!is_yes(&no), "{no:?}");
        }
    }
}
