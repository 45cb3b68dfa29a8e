//! A Python virtualenv with the workflow tools of `tests/python/requirements.txt`, made once
//! per version of that file with the machine's `python3 -m venv` and pip, and kept in a cache
//! directory: every later test (and CI run on the same machine) reuses it without downloading.
//!
//! The venv lives in `$SLUICE_PYTHON_CACHE` (default `$XDG_CACHE_HOME/sluice`, then
//! `$HOME/.cache/sluice`) under `python-<hash of the requirements file>`. Concurrent tests
//! take a file lock while one of them makes it; a venv is only used once its `ready` mark is
//! written, so a half-made one (a test killed mid-install) is made again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use nix::fcntl::{Flock, FlockArg};

/// The pinned requirements file.
pub fn requirements() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python/requirements.txt")
}

/// A driver script of `tests/python/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(name)
}

/// The venv's python, making the venv first if this version of the requirements has none.
pub fn venv_python() -> PathBuf {
    let pins = std::fs::read(requirements()).expect("read tests/python/requirements.txt");
    let dir = cache_dir().join(format!("python-{:016x}", fnv1a(&pins)));
    std::fs::create_dir_all(cache_dir()).expect("make the python cache directory");
    let lock = File::create(cache_dir().join(format!("{}.lock", name_of(&dir))))
        .expect("create the venv lock file");
    let _held = Flock::lock(lock, FlockArg::LockExclusive).expect("lock the venv");
    let python = dir.join("bin/python");
    if !dir.join("ready").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        run(Command::new(system_python()).args(["-m", "venv"]).arg(&dir));
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(requirements()));
        std::fs::write(dir.join("ready"), &pins).expect("mark the venv ready");
    }
    python
}

/// The machine's python3: the system's own when there is one (a user's pyenv shim may point
/// anywhere), else the first on `PATH`.
fn system_python() -> PathBuf {
    let system = PathBuf::from("/usr/bin/python3");
    if system.exists() {
        system
    } else {
        PathBuf::from("python3")
    }
}

fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SLUICE_PYTHON_CACHE") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("sluice");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".cache/sluice")
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// FNV-1a: a hash that is the same on every build (std's hasher promises no such thing).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
