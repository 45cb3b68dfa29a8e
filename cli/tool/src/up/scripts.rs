//! The scripts `sluice up` installs beside the commands, in `DIR/bin/` (first on the `PATH`
//! that `env.sh` sets): `nonstop.sh`, the failure management's step-loop helper (it runs
//! `smd --auto`; see `sluice_cli::smd`). Rewritten on every `up`, like `env.sh`, since it names
//! the `smd` binary being run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::UpError;
use super::layout::{Layout, shell_quote};

/// `cli/scripts/nonstop.sh` as shipped.
pub const NONSTOP_SH: &str = include_str!("../../../scripts/nonstop.sh");

/// The line of the script that chooses the smd binary.
const SMD_LINE: &str = "smd=${SMD:-smd}";

/// The directory of the installed scripts.
pub fn script_dir(layout: &Layout) -> PathBuf {
    layout.dir.join("bin")
}

/// `nonstop.sh` with `smd` defaulting to the one in `bin_dir`, so the script works in a batch
/// job whatever its `PATH`.
pub fn nonstop_sh(bin_dir: &Path) -> String {
    let smd = shell_quote(&bin_dir.join("smd").display().to_string());
    NONSTOP_SH.replacen(SMD_LINE, &format!("smd=${{SMD:-{smd}}}"), 1)
}

/// Writes `DIR/bin/nonstop.sh` (mode 0755); returns the directory.
pub fn install(layout: &Layout, bin_dir: &Path) -> Result<PathBuf, UpError> {
    let dir = script_dir(layout);
    std::fs::create_dir_all(&dir).map_err(|source| UpError::Dir {
        path: dir.clone(),
        source,
    })?;
    let path = dir.join("nonstop.sh");
    let err = |source| UpError::Write {
        path: path.clone(),
        source,
    };
    std::fs::write(&path, nonstop_sh(bin_dir)).map_err(err)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(err)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonstop_sh_is_installed_runnable_and_names_the_smd_being_run() {
        assert!(NONSTOP_SH.contains(SMD_LINE));
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path()).unwrap();
        let dir = install(&layout, Path::new("/opt/it's/bin")).unwrap();
        let path = dir.join("nonstop.sh");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("smd=${SMD:-'/opt/it'\\''s/bin/smd'}\n"),
            "{text}"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        // Outside a job it refuses; inside, it names the smd it would run.
        let out = std::process::Command::new(&path)
            .env_remove("SLURM_JOB_ID")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "nonstop.sh: error: SLURM_JOB_ID is not set: run it inside a job\n"
        );
        let out = std::process::Command::new(&path)
            .env("SLURM_JOB_ID", "5")
            .env_remove("SMD")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "nonstop.sh: error: /opt/it's/bin/smd not found (set PATH or SMD)\n"
        );
    }
}
