//! A user's login environment, as Slurm loads it for `--get-user-env`: `env` run by the
//! user's login shell through `su -` (root only). The node daemon loads it for a batch script
//! (`sbatch --get-user-env`), salloc for its command (`salloc --get-user-env`).
//!
//! As Slurm 22.05, the shell may take up to 120 s (whatever timeout the option was given);
//! Slurm's cache of the last environment loaded (used when the shell does not answer in time)
//! is not kept.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// Slurm's words when someone other than root asks for a login environment.
pub const NOT_ROOT: &str = "SlurmdUser must be root to use --get-user-env";

/// How long the login shell may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The line printed before the environment, so that what a login shell prints first
/// (a message of the day, profile output) is skipped.
const MARK: &str = "SLUICE_LOGIN_ENV_FOLLOWS";

/// Variables of the login shell's own running that are no part of the user's environment.
const SHELL_OWN: [&str; 3] = ["_", "SHLVL", "PWD"];

/// `user`'s login environment: `env -0` run by their login shell (`su - user`). Only root
/// may ([`NOT_ROOT`]).
pub async fn load(user: &str) -> Result<BTreeMap<String, String>, String> {
    if !nix::unistd::geteuid().is_root() {
        return Err(NOT_ROOT.to_string());
    }
    let mut child = Command::new("su")
        .args(["-", user, "-c", &format!("echo {MARK}; env -0")])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run su for {user}'s login environment: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("su has no stdout")?;
    let mut out = Vec::new();
    let read = async {
        stdout.read_to_end(&mut out).await?;
        child.wait().await
    };
    let status = match tokio::time::timeout(TIMEOUT, read).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(format!("su for {user}'s login environment: {e}")),
        Err(_) => {
            return Err(format!(
                "{user}'s login environment did not come within {} s",
                TIMEOUT.as_secs()
            ));
        }
    };
    if !status.success() {
        return Err(format!(
            "su for {user}'s login environment failed ({status})"
        ));
    }
    parse(&out).ok_or_else(|| format!("no login environment in the output of su for {user}"))
}

/// The variables after the [`MARK`] line of `out` (NUL-separated `NAME=value`).
fn parse(out: &[u8]) -> Option<BTreeMap<String, String>> {
    let text = String::from_utf8_lossy(out);
    let start = text.find(&format!("{MARK}\n"))? + MARK.len() + 1;
    Some(
        text[start..]
            .split('\0')
            .filter_map(|item| item.split_once('='))
            .filter(|(name, _)| !name.is_empty() && !SHELL_OWN.contains(name))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_follows_the_mark_and_keeps_multi_line_values() {
        let out =
            b"Welcome!\nSLUICE_LOGIN_ENV_FOLLOWS\nHOME=/home/a\0A=x\ny\0_=/usr/bin/env\0SHLVL=1\0";
        let env = parse(out).unwrap();
        assert_eq!(env.get("HOME").map(String::as_str), Some("/home/a"));
        assert_eq!(env.get("A").map(String::as_str), Some("x\ny"));
        assert!(!env.contains_key("_") && !env.contains_key("SHLVL"));
        assert_eq!(parse(b"no mark here"), None);
    }
}
