//! What the commands share besides their options ([`crate::getopt`]): user and group names,
//! a small runtime to run one request on, the arguments and the
//! clock.

use std::io::Write;

/// The login name of `uid`, or the number when the account is unknown (Slurm's
/// `uid_to_string`).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}

/// The name of group `gid`, or the number when unknown.
pub fn group_name(gid: u32) -> String {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map_or_else(|| gid.to_string(), |g| g.name)
}

/// The uid of a user given by name or number.
pub fn uid_of(user: &str) -> Option<u32> {
    if let Ok(n) = user.parse::<u32>() {
        return Some(n);
    }
    nix::unistd::User::from_name(user)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
}

/// The calling user's uid.
pub fn current_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// A single-threaded runtime for one command's requests.
pub fn runtime(prog: &str, err: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            let _ = writeln!(err, "{prog}: error: {e}");
            None
        }
    }
}

/// The process's arguments without the program name.
pub fn args() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// Now, in unix seconds (only the commands' entry points read the clock).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Runs a command's `main` and exits with its status. Should anything panic, the user sees one
/// line, `<prog>: error: internal error: <what>`, on stderr and the command exits 1: no
/// backtrace, as Slurm's commands never print one.
pub fn run(prog: &'static str, main: fn() -> i32) -> ! {
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("panic");
        let what = what.replace('\n', " ");
        eprintln!("{prog}: error: internal error: {what}");
    }));
    let code = std::panic::catch_unwind(main).unwrap_or(1);
    std::process::exit(code)
}
