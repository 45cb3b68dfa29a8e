//! Signal names and numbers as the commands take them (`INT`, `SIGINT`, `2`) and the
//! descriptions srun prints for tasks a signal ended (glibc's `strsignal` texts).

use std::str::FromStr;

use nix::sys::signal::Signal;

/// Parses `INT`, `SIGINT`, `sigint` or `2`; `None` for anything else.
pub fn parse(text: &str) -> Option<i32> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i32>() {
        return Signal::try_from(n).ok().map(|s| s as i32);
    }
    let upper = t.to_ascii_uppercase();
    let name = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    Signal::from_str(&name).ok().map(|s| s as i32)
}

/// What `strsignal` says about `sig` (srun's `task 0: Killed`).
pub fn describe(sig: i32) -> String {
    const TEXT: [&str; 32] = [
        "Unknown signal 0",
        "Hangup",
        "Interrupt",
        "Quit",
        "Illegal instruction",
        "Trace/breakpoint trap",
        "Aborted",
        "Bus error",
        "Floating point exception",
        "Killed",
        "User defined signal 1",
        "Segmentation fault",
        "User defined signal 2",
        "Broken pipe",
        "Alarm clock",
        "Terminated",
        "Stack fault",
        "Child exited",
        "Continued",
        "Stopped (signal)",
        "Stopped",
        "Stopped (tty input)",
        "Stopped (tty output)",
        "Urgent I/O condition",
        "CPU time limit exceeded",
        "File size limit exceeded",
        "Virtual timer expired",
        "Profiling timer expired",
        "Window changed",
        "I/O possible",
        "Power failure",
        "Bad system call",
    ];
    match usize::try_from(sig).ok().and_then(|i| TEXT.get(i)) {
        Some(t) if sig > 0 => (*t).to_string(),
        _ if (34..=64).contains(&sig) => format!("Real-time signal {}", sig - 34),
        _ => format!("Unknown signal {sig}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_and_without_prefix_and_numbers() {
        assert_eq!(parse("INT"), Some(2));
        assert_eq!(parse("SIGINT"), Some(2));
        assert_eq!(parse("usr1"), Some(10));
        assert_eq!(parse("9"), Some(9));
        assert_eq!(parse("KILL"), Some(9));
        assert_eq!(parse("NOPE"), None);
        assert_eq!(parse("0"), None);
        assert_eq!(parse("999"), None);
    }

    #[test]
    fn descriptions() {
        assert_eq!(describe(9), "Killed");
        assert_eq!(describe(11), "Segmentation fault");
        assert_eq!(describe(15), "Terminated");
        assert_eq!(describe(0), "Unknown signal 0");
        assert_eq!(describe(40), "Real-time signal 6");
    }
}
