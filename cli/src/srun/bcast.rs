//! `--bcast[=dest]`, `--send-libs[=yes|no]`, `--bcast-exclude=dirs`: srun reads the step's
//! executable (found as the tasks would find it: a path, else on `PATH`) and sends it with the
//! step's request; each node writes its copy before the tasks start and runs that (see the
//! node daemon's `bcast`). With `--send-libs`, the libraries `ldd` names go too, but none
//! under the excluded directories (Slurm's default `BcastExclude`: `/lib`, `/usr/lib`, `/lib64`,
//! `/usr/lib64`; `none` excludes nothing).
//!
//! As Slurm 22.05's srun (seen on a real cluster): `--send-libs` and `--bcast-exclude` without
//! `--bcast` change nothing; a program that cannot be found or read is `Can not execute
//! <path>` (fatal, exit 1).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sluice_wire::proto::{BcastFile, BcastLib};

/// Slurm's default `BcastExclude`.
pub const DEFAULT_EXCLUDE: &[&str] = &["/lib", "/usr/lib", "/lib64", "/usr/lib64"];

/// What the user asked to send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bcast {
    /// `--bcast[=dest]` (`Some("")`: without a destination).
    pub dest: Option<String>,
    /// `--send-libs` (or `=yes`).
    pub send_libs: bool,
    /// `--bcast-exclude` (`None`: Slurm's default).
    pub exclude: Option<Vec<String>>,
    /// `--compress`: the copies travel as LZ4 blocks.
    pub compress: bool,
}

/// `--compress[=type]`: `Ok(true)` for LZ4 (the default, as Slurm 22.05 has no other),
/// `Ok(false)` for `none`; any other type is Slurm's line (after `srun: error: `), and the
/// copies go uncompressed, as there.
pub fn compression(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") | Some(sluice_wire::bcast::LZ4) => Ok(true),
        Some("none") => Ok(false),
        Some(_) => Err(format!(
            "Compression type '{}' unknown, disabling compression support.",
            value.unwrap_or_default()
        )),
    }
}

/// `--send-libs[=yes|no]`.
pub fn send_libs(value: Option<&str>) -> Option<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") | Some("yes") => Some(true),
        Some("no") => Some(false),
        Some(_) => None,
    }
}

/// `program` as the tasks would run it: a path (relative to `cwd`), else the first executable
/// file of that name on `path`.
pub fn resolve(program: &str, cwd: &Path, path: Option<&str>) -> Option<PathBuf> {
    let is_exe = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = cwd.join(program);
        return is_exe(&p).then_some(p);
    }
    path.unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| cwd.join(d).join(program))
        .find(|p| is_exe(p))
}

/// The shared libraries `ldd` lists for `exe`, outside `exclude`.
fn libraries(exe: &Path, exclude: &[String]) -> Vec<PathBuf> {
    let Ok(out) = std::process::Command::new("ldd").arg(exe).output() else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    parse_ldd(&text)
        .into_iter()
        .filter(|lib| !exclude.iter().any(|d| lib.starts_with(Path::new(d))))
        .collect()
}

/// The library paths of `ldd` output (`name => /path (0x...)` or `/path (0x...)`).
fn parse_ldd(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = line.split_once("=>").map_or(line, |(_, p)| p.trim());
            let path = path.split_whitespace().next()?;
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

fn read(path: &Path) -> Option<(Vec<u8>, u32)> {
    let data = std::fs::read(path).ok()?;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    Some((data, mode))
}

impl Bcast {
    /// The file to send for `program` (`None` when `--bcast` was not asked); `Err` is the
    /// path that cannot be run, for srun's `Can not execute` line.
    pub fn file(
        &self,
        program: &str,
        cwd: &Path,
        path: Option<&str>,
    ) -> Result<Option<BcastFile>, String> {
        let Some(dest) = &self.dest else {
            return Ok(None);
        };
        let exe = resolve(program, cwd, path).ok_or_else(|| program.to_string())?;
        let (data, mode) = read(&exe).ok_or_else(|| exe.display().to_string())?;
        let libs = if self.send_libs {
            let default: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect();
            let exclude = match &self.exclude {
                Some(list) if list.iter().any(|d| d.eq_ignore_ascii_case("none")) => Vec::new(),
                Some(list) => list.clone(),
                None => default,
            };
            libraries(&exe, &exclude)
                .iter()
                .filter_map(|lib| {
                    let (data, mode) = read(lib)?;
                    let (data, size) = self.pack(data);
                    Some(BcastLib {
                        name: lib.display().to_string(),
                        data,
                        mode,
                        size,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let (data, size) = self.pack(data);
        Ok(Some(BcastFile {
            dest: dest.clone(),
            data,
            mode,
            send_libs: self.send_libs,
            libs,
            compression: if self.compress {
                sluice_wire::bcast::LZ4.to_string()
            } else {
                String::new()
            },
            size,
        }))
    }

    /// A copy's bytes as sent and its size (compressed with `--compress`).
    fn pack(&self, data: Vec<u8>) -> (Vec<u8>, u64) {
        let size = data.len() as u64;
        if self.compress {
            (sluice_wire::bcast::compress(&data), size)
        } else {
            (data, size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_lines() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\
                    \tlibfoo.so.1 => /opt/foo/libfoo.so.1 (0x00007f)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n\
                    \tlibgone.so => not found\n";
        assert_eq!(
            parse_ldd(text),
            vec![
                PathBuf::from("/opt/foo/libfoo.so.1"),
                PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"),
                PathBuf::from("/lib64/ld-linux-x86-64.so.2"),
            ]
        );
    }

    #[test]
    fn programs_are_found_as_the_tasks_find_them() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("prog");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("plain"), "x").unwrap();
        let path = dir.path().display().to_string();
        assert_eq!(
            resolve("prog", Path::new("/"), Some(&path)),
            Some(exe.clone())
        );
        assert_eq!(
            resolve("./prog", dir.path(), None),
            Some(dir.path().join("./prog"))
        );
        assert_eq!(
            resolve("plain", Path::new("/"), Some(&path)),
            None,
            "not executable"
        );
        let asked = Bcast {
            dest: Some(String::new()),
            ..Bcast::default()
        };
        let file = asked
            .file("prog", Path::new("/"), Some(&path))
            .unwrap()
            .unwrap();
        assert_eq!(
            (file.data.as_slice(), file.mode & 0o777),
            (&b"#!/bin/sh\n"[..], 0o755)
        );
        assert_eq!(
            asked.file("/nonexistent", Path::new("/"), None),
            Err("/nonexistent".to_string())
        );
        assert_eq!(
            Bcast::default().file("prog", Path::new("/"), None),
            Ok(None)
        );
        let packed = Bcast {
            compress: true,
            ..asked.clone()
        }
        .file("prog", Path::new("/"), Some(&path))
        .unwrap()
        .unwrap();
        assert_eq!(packed.compression, "lz4");
        assert_eq!(
            sluice_wire::bcast::expand(&packed.data, packed.size).unwrap(),
            b"#!/bin/sh\n"
        );
        assert_eq!(compression(None), Ok(true));
        assert_eq!(compression(Some("LZ4")), Ok(true));
        assert_eq!(compression(Some("none")), Ok(false));
        assert_eq!(
            compression(Some("zlib")),
            Err("Compression type 'zlib' unknown, disabling compression support.".into())
        );
        assert_eq!(send_libs(Some("no")), Some(false));
        assert_eq!(send_libs(None), Some(true));
        assert_eq!(send_libs(Some("maybe")), None);
    }
}
