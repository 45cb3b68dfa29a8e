//! What the sreport tests share: running the real binary (UTC, a given `slurm.conf`, optional
//! stdin), a `slurm.conf` with its key, and the report banner.

pub mod fake;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sluice_wire::auth::{KEY_FILE, Key};

pub const SREPORT: &str = env!("CARGO_BIN_EXE_sreport");
pub const RULE: &str =
    "--------------------------------------------------------------------------------";

/// What a command printed and returned.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Writes `slurm.conf` (cluster c1) and its key in `dir` for a dbd at `port`.
pub fn write_conf(dir: &Path, port: u16) -> PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("ClusterName=c1\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"),
    )
    .expect("write slurm.conf");
    Key::create_if_missing(&dir.join(KEY_FILE)).expect("key");
    conf
}

/// Runs sreport with `SLURM_CONF=conf`, `TZ=UTC`, no `SREPORT_*` presets, and `stdin`.
pub fn run_bin(conf: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(SREPORT);
    cmd.args(args)
        .env("SLURM_CONF", conf)
        .env("TZ", "UTC")
        .env_remove("SREPORT_TRES")
        .env_remove("SREPORT_CLUSTER")
        .env_remove("SREPORT_FEDERATION")
        .env_remove("SREPORT_LOCAL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("sreport runs");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("stdin write");
    drop(input);
    let out = child.wait_with_output().expect("sreport exits");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The dashed banner with a title and one line under it.
pub fn banner(title: &str, usage: &str) -> String {
    format!("{RULE}\n{title}\n{usage}\n{RULE}\n")
}
