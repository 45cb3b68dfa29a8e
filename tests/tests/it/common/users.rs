//! Real Linux users for tests that check what another user may and may not do: created with
//! `useradd` when a test starts, removed with `userdel` when it ends. Only root can do this;
//! such tests are compiled as ignored otherwise (`cfg(test_as_root)`).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::{CmdOutput, run};

/// Serialises `useradd`/`userdel` of tests running in parallel (they lock `/etc/passwd`).
const LOCK: &str = "/tmp/sluice-test-users.lock";

/// A Linux user (with a group of its own name) that exists while this value lives.
#[derive(Debug)]
pub struct TestUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl TestUser {
    /// Creates a user named `sl<tag><pid>` (unique per test process) without a home.
    pub fn create(tag: &str) -> TestUser {
        let name = format!("sl{tag}{}", std::process::id());
        assert!(name.len() <= 32, "user name {name} too long");
        let out = run(
            Command::new("flock").args([LOCK, "useradd", "-M", "-U", "-s", "/bin/sh", &name]),
            None,
        );
        assert_eq!(out.code, 0, "useradd {name}: {out:?}");
        let user = nix::unistd::User::from_name(&name)
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("{name} was created but cannot be found"));
        TestUser {
            name,
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
        }
    }

    /// Makes `cmd` run as this user (uid, primary gid, no supplementary groups).
    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.uid(self.uid)
            .gid(self.gid)
            .env("USER", &self.name)
            .env("LOGNAME", &self.name)
            .env("HOME", "/tmp")
    }

    /// Runs `program args…` as this user.
    pub fn run(&self, program: &str, args: &[&str]) -> CmdOutput {
        let mut cmd = Command::new(program);
        cmd.args(args);
        run(self.apply(&mut cmd), None)
    }

    /// Whether this user can open `path` for reading (a directory: list it).
    pub fn can_read(&self, path: &Path) -> bool {
        let p = path.to_str().expect("UTF-8 path");
        let out = if path.is_dir() {
            self.run("ls", &[p])
        } else {
            self.run("head", &["-c", "1", p])
        };
        out.code == 0
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        // Declared before the cluster in a test, the user outlives it and its jobs; `-f`
        // removes it even so if a process of it is left.
        let out = run(
            Command::new("flock").args([LOCK, "userdel", "-f", &self.name]),
            None,
        );
        if out.code != 0 {
            eprintln!("userdel {}: {out:?}", self.name);
        }
    }
}
