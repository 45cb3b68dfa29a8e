//! `srun --bcast[=dest] [--send-libs]`: the step's executable (and the shared libraries srun
//! chose to send with it) arrives with the step's request; this node writes it, as the job's
//! user, before any task starts, and the tasks run that copy.
//!
//! Where the copy goes, as Slurm 22.05 places it (seen on a real cluster): without a
//! destination, `slurm_bcast_<job>.<step>_<node>` in the step's working directory; a
//! destination ending in `/` is a directory for that name; any other is the file itself
//! (relative to the working directory). Libraries go in `<copy>_libs/` (mode 0700), which is
//! put first in the tasks' `LD_LIBRARY_PATH`. The task's `argv[0]` is the copy. Copies stay
//! after the step, as in Slurm.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use sluice_wire::proto::{BcastFile, RunStepRequest};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::env::Env;
use crate::spawn::{self, RunAs};

/// Where the copy of the executable goes on node `node`.
pub fn dest_path(req: &RunStepRequest, dest: &str, dir: &Path, node: &str) -> PathBuf {
    let name = format!("slurm_bcast_{}.{}_{node}", req.job_id, req.step_id);
    let dest = Path::new(dest);
    let base = if dest.is_absolute() {
        dest.to_path_buf()
    } else {
        dir.join(dest)
    };
    if dest.as_os_str().is_empty() || dest.to_string_lossy().ends_with('/') {
        base.join(name)
    } else {
        base
    }
}

/// The libraries' directory of copy `exe`.
pub fn libs_dir(exe: &Path) -> PathBuf {
    let mut dir = exe.as_os_str().to_owned();
    dir.push("_libs");
    PathBuf::from(dir)
}

// Writes stdin to "$1" with mode "$2" (octal), as the user, through a new file renamed into
// place, so a task of an earlier step still running the old copy is not disturbed.
const WRITE: &str =
    "umask 077; cat > \"$1.part\" && chmod \"$2\" \"$1.part\" && mv -f \"$1.part\" \"$1\"";
const MKDIR: &str = "umask 077; mkdir -p \"$1\"";

async fn run(mut cmd: Command, data: Option<&[u8]>) -> Result<(), String> {
    cmd.stdin(if data.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    if let (Some(bytes), Some(mut stdin)) = (data, child.stdin.take()) {
        stdin.write_all(bytes).await.map_err(|e| e.to_string())?;
        drop(stdin);
    }
    let out = child.wait_with_output().await.map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn shell(run_as: Option<RunAs>, dir: &Path, env: &Env, script: &str, args: &[String]) -> Command {
    let mut cmd = spawn::user_shell(run_as, dir, env);
    cmd.arg("-c").arg(script).arg("sluice-bcast").args(args);
    cmd
}

/// Writes `file` (and its libraries) as the job's user; returns the copy's path.
pub async fn place(
    file: &BcastFile,
    at: &Path,
    run_as: Option<RunAs>,
    dir: &Path,
    env: &Env,
) -> Result<PathBuf, String> {
    let arg = |p: &Path| p.display().to_string();
    // srun --compress: expanded here, before anything is written.
    let expand = |data: &[u8], size: u64, what: &str| {
        sluice_wire::bcast::expand_as(&file.compression, data, size)
            .map_err(|e| format!("cannot expand {what}: {e}"))
    };
    let data = expand(&file.data, file.size, "the copy")?;
    let mode = format!("{:o}", file.mode & 0o7777);
    let write = shell(run_as, dir, env, WRITE, &[arg(at), mode]);
    run(write, Some(&data))
        .await
        .map_err(|e| format!("cannot write {}: {e}", at.display()))?;
    if file.send_libs {
        let libs = libs_dir(at);
        run(shell(run_as, dir, env, MKDIR, &[arg(&libs)]), None)
            .await
            .map_err(|e| format!("cannot make {}: {e}", libs.display()))?;
        for lib in &file.libs {
            let Some(name) = Path::new(&lib.name).file_name() else {
                continue;
            };
            let to = libs.join(name);
            let data = expand(&lib.data, lib.size, &lib.name)?;
            let mode = format!("{:o}", lib.mode & 0o7777);
            run(
                shell(run_as, dir, env, WRITE, &[arg(&to), mode]),
                Some(&data),
            )
            .await
            .map_err(|e| format!("cannot write {}: {e}", to.display()))?;
        }
    }
    Ok(at.to_path_buf())
}

/// `LD_LIBRARY_PATH` with the copy's libraries first.
pub fn library_path(exe: &Path, env: &Env) -> String {
    let libs = libs_dir(exe).display().to_string();
    match env.get("LD_LIBRARY_PATH").filter(|p| !p.is_empty()) {
        Some(old) => format!("{libs}:{old}"),
        None => libs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_as_slurm_names_them() {
        let req = RunStepRequest {
            job_id: 7,
            step_id: 2,
            ..Default::default()
        };
        let dir = Path::new("/work");
        assert_eq!(
            dest_path(&req, "", dir, "n1"),
            PathBuf::from("/work/slurm_bcast_7.2_n1")
        );
        assert_eq!(
            dest_path(&req, "/tmp/", dir, "n1"),
            PathBuf::from("/tmp/slurm_bcast_7.2_n1")
        );
        assert_eq!(
            dest_path(&req, "bin/x", dir, "n1"),
            PathBuf::from("/work/bin/x")
        );
        assert_eq!(libs_dir(Path::new("/tmp/x")), PathBuf::from("/tmp/x_libs"));
        let mut env = Env::new();
        assert_eq!(library_path(Path::new("/t/x"), &env), "/t/x_libs");
        env.insert("LD_LIBRARY_PATH".into(), "/opt/lib".into());
        assert_eq!(library_path(Path::new("/t/x"), &env), "/t/x_libs:/opt/lib");
    }

    #[tokio::test]
    async fn the_copy_and_its_libraries_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("copy");
        let file = BcastFile {
            data: b"#!/bin/sh\necho hi\n".to_vec(),
            mode: 0o755,
            send_libs: true,
            libs: vec![sluice_wire::proto::BcastLib {
                name: "/usr/local/lib/libx.so.1".into(),
                data: b"lib".to_vec(),
                mode: 0o644,
                size: 3,
            }],
            ..Default::default()
        };
        let env = Env::new();
        let placed = place(&file, &at, None, dir.path(), &env).await.unwrap();
        assert_eq!(std::fs::read(&placed).unwrap(), file.data);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&placed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let lib = dir.path().join("copy_libs/libx.so.1");
        assert_eq!(std::fs::read(lib).unwrap(), b"lib");
    }

    #[tokio::test]
    async fn compressed_copies_are_expanded_and_bad_ones_refused_before_writing() {
        use sluice_wire::bcast::{LZ4, compress};
        let dir = tempfile::tempdir().unwrap();
        let data = b"#!/bin/sh\necho hi\n".repeat(100);
        let file = BcastFile {
            data: compress(&data),
            size: data.len() as u64,
            compression: LZ4.into(),
            mode: 0o755,
            ..Default::default()
        };
        let env = Env::new();
        let at = dir.path().join("copy");
        place(&file, &at, None, dir.path(), &env).await.unwrap();
        assert_eq!(std::fs::read(&at).unwrap(), data);
        let lying = BcastFile {
            size: 1 << 40,
            ..file.clone()
        };
        let at = dir.path().join("bad");
        let e = place(&lying, &at, None, dir.path(), &env)
            .await
            .unwrap_err();
        assert!(e.starts_with("cannot expand the copy"), "{e}");
        assert!(!at.exists(), "nothing written");
    }
}
