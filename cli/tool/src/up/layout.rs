//! The files of a local federation directory and how they are first written.
//!
//! ```text
//! DIR/slurmdbd.conf  DIR/slurm.key  DIR/slurm_acct.db  DIR/clusters  DIR/env.sh
//! DIR/<cluster>/slurm.conf  DIR/<cluster>/slurm.key  DIR/<cluster>/state/  DIR/<cluster>/spool/<node>/
//! DIR/log/<daemon>.log  DIR/run/<daemon>.pid
//! ```
//! Configuration files (and `clusters`, the list of clusters in order) are written once and
//! then left alone, so an admin may edit them; `env.sh` is derived (it names the binaries
//! being run) and rewritten every time. Every daemon and command finds the key next to its
//! configuration file, so each cluster's directory holds the same key as the dbd's.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::UpError;
use super::storage::StorageSpec;

/// The paths of one local federation directory (absolute).
#[derive(Debug, Clone)]
pub struct Layout {
    /// The directory itself.
    pub dir: PathBuf,
}

/// Header of every generated configuration file.
pub const HEADER: &str =
    "# Written by `sluice up`. Edit freely: `sluice up` keeps this file as it is.";

impl Layout {
    /// The layout of `dir`, made absolute so the files work from any directory.
    pub fn new(dir: &Path) -> Result<Self, UpError> {
        let dir = std::path::absolute(dir).map_err(|source| UpError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Self { dir })
    }

    /// The dbd's configuration.
    pub fn slurmdbd_conf(&self) -> PathBuf {
        self.dir.join("slurmdbd.conf")
    }
    /// The key shared by daemons and commands.
    pub fn key(&self) -> PathBuf {
        self.dir.join(sluice_wire::auth::KEY_FILE)
    }
    /// The list of the federation's clusters, one per line, the first one `env.sh` points at.
    pub fn clusters_file(&self) -> PathBuf {
        self.dir.join("clusters")
    }
    /// The shell snippet that points a shell at the first cluster.
    pub fn env_sh(&self) -> PathBuf {
        self.dir.join("env.sh")
    }
    /// Where daemons write their pid files.
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }
    /// Where daemons write their logs.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("log")
    }
    /// The pid file of daemon `id` (e.g. `dbd`, `ctld-cluster`).
    pub fn pid_file(&self, id: &str) -> PathBuf {
        self.run_dir().join(format!("{id}.pid"))
    }
    /// The log file of daemon `id`.
    pub fn log_file(&self, id: &str) -> PathBuf {
        self.log_dir().join(format!("{id}.log"))
    }
    /// The directory of cluster `name`: its configuration, key, state and spool.
    pub fn cluster_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    /// Cluster `name`'s `slurm.conf`, the one commands read through `SLURM_CONF`.
    pub fn cluster_conf(&self, name: &str) -> PathBuf {
        self.cluster_dir(name).join("slurm.conf")
    }

    /// Creates the directory tree, failing clearly if it is not writable.
    pub fn create_dirs(&self) -> Result<(), UpError> {
        for dir in [&self.dir, &self.run_dir(), &self.log_dir()] {
            create_dir(dir)?;
        }
        Ok(())
    }

    /// Creates cluster `name`'s directory and puts the federation's key in it (a hard link, so
    /// there is one key) unless a key is there already.
    pub fn create_cluster_dir(&self, name: &str) -> Result<(), UpError> {
        let dir = self.cluster_dir(name);
        create_dir(&dir)?;
        let key = dir.join(sluice_wire::auth::KEY_FILE);
        if key.exists() {
            return Ok(());
        }
        let write = |source| UpError::Write {
            path: key.clone(),
            source,
        };
        if std::fs::hard_link(self.key(), &key).is_err() {
            // A copy keeps the source's mode (0600).
            std::fs::copy(self.key(), &key).map_err(write)?;
        }
        Ok(())
    }

    /// Writes `slurmdbd.conf` for a dbd on `127.0.0.1:port` unless it exists. Returns whether it wrote.
    pub fn write_slurmdbd_conf(
        &self,
        port: u16,
        storage: &StorageSpec,
        slurm_user: &str,
        auth: &[String],
    ) -> Result<bool, UpError> {
        let mut lines = vec![
            HEADER.to_string(),
            "DbdHost=127.0.0.1".into(),
            format!("DbdPort={port}"),
            format!("SlurmUser={slurm_user}"),
        ];
        lines.extend(storage.conf_lines(&self.dir));
        lines.push(format!("PidFile={}", self.pid_file("dbd").display()));
        lines.push("DebugLevel=info".into());
        lines.extend(auth.iter().cloned());
        // It may hold a database password.
        write_new(&self.slurmdbd_conf(), &lines, 0o600)
    }

    /// The `DbdPort` of an existing `slurmdbd.conf`.
    pub fn dbd_port(&self) -> Result<Option<u16>, UpError> {
        if !self.slurmdbd_conf().exists() {
            return Ok(None);
        }
        let file = sluice_vocab::conf::ConfFile::read(&self.slurmdbd_conf())?;
        match file.get("DbdPort") {
            Some(p) => Ok(Some(file.number::<u16>(p)?)),
            None => Ok(None),
        }
    }

    /// The clusters of the directory, in order, if `clusters` was written.
    pub fn read_clusters(&self) -> Result<Option<Vec<String>>, UpError> {
        let path = self.clusters_file();
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect(),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(UpError::Read { path, source }),
        }
    }

    /// Writes the list of clusters unless it exists.
    pub fn write_clusters(&self, names: &[String]) -> Result<bool, UpError> {
        let mut lines = vec![
            "# The clusters `sluice up` runs, one per line; env.sh points at the first."
                .to_string(),
        ];
        lines.extend(names.iter().cloned());
        write_new(&self.clusters_file(), &lines, 0o644)
    }

    /// (Re)writes `env.sh`: `SLURM_CONF` of cluster `first`, and first on `PATH` the installed
    /// scripts (`DIR/bin`: `nonstop.sh`) and the directory of the commands.
    pub fn write_env_sh(&self, bin_dir: &Path, first: &str) -> Result<(), UpError> {
        let text = format!(
            "# Written by `sluice up` on every run. Use it with: . {env}\nexport SLURM_CONF={conf}\nexport PATH={scripts}:{bin}:\"$PATH\"\n",
            env = shell_quote(&self.env_sh().display().to_string()),
            conf = shell_quote(&self.cluster_conf(first).display().to_string()),
            bin = shell_quote(&bin_dir.display().to_string()),
            scripts = shell_quote(&super::scripts::script_dir(self).display().to_string()),
        );
        std::fs::write(self.env_sh(), text).map_err(|source| UpError::Write {
            path: self.env_sh(),
            source,
        })
    }
}

fn create_dir(dir: &Path) -> Result<(), UpError> {
    std::fs::create_dir_all(dir).map_err(|source| UpError::Dir {
        path: dir.to_path_buf(),
        source,
    })
}

/// Creates `path` with `lines` unless it exists; `Ok(false)` if it was already there.
pub fn write_new(path: &Path, lines: &[String], mode: u32) -> Result<bool, UpError> {
    let err = |source| UpError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(err(e)),
    };
    let mut text = lines.join("\n");
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(err)?;
    Ok(true)
}

/// Single-quotes `s` for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_vocab::conf::ConfFile;

    #[test]
    fn the_dbd_conf_and_the_cluster_list_are_written_once() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(&tmp.path().join("fed")).unwrap();
        layout.create_dirs().unwrap();
        assert!(
            layout
                .write_slurmdbd_conf(4567, &StorageSpec::Sqlite(None), "root", &[])
                .unwrap()
        );
        assert!(
            !layout
                .write_slurmdbd_conf(1, &StorageSpec::Sqlite(None), "root", &[])
                .unwrap(),
            "an existing file is kept"
        );
        assert_eq!(layout.dbd_port().unwrap(), Some(4567));
        let dbd = ConfFile::read(&layout.slurmdbd_conf()).unwrap();
        let db = layout.dir.join("slurm_acct.db");
        assert_eq!(
            dbd.get("StorageLoc").unwrap().value,
            db.display().to_string()
        );

        assert_eq!(layout.read_clusters().unwrap(), None);
        let names = vec!["b".to_string(), "a".to_string()];
        assert!(layout.write_clusters(&names).unwrap());
        assert!(!layout.write_clusters(&["x".to_string()]).unwrap());
        assert_eq!(layout.read_clusters().unwrap(), Some(names));
    }

    #[test]
    fn a_cluster_directory_shares_the_key() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path()).unwrap();
        layout.create_dirs().unwrap();
        let key = sluice_wire::auth::Key::create_if_missing(&layout.key()).unwrap();
        layout.create_cluster_dir("c1").unwrap();
        let copy = sluice_wire::auth::Key::load(
            &layout.cluster_dir("c1").join(sluice_wire::auth::KEY_FILE),
        )
        .unwrap();
        let token = key.sign(&sluice_wire::auth::Claims {
            uid: 7,
            gid: 7,
            issued: 1000,
            nonce: sluice_wire::auth::token::new_nonce(),
            binding: sluice_wire::auth::Binding::new("/a/b", b""),
        });
        let empty = sluice_wire::auth::token::BodyDigest::of(b"");
        assert_eq!(copy.open(&token, &empty).unwrap().uid, 7);
    }

    #[test]
    fn env_sh_points_a_shell_at_the_first_cluster() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(&tmp.path().join("it's here")).unwrap();
        layout.create_dirs().unwrap();
        layout
            .write_env_sh(Path::new("/opt/sluice/bin"), "alpha")
            .unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                ". {} && echo \"$SLURM_CONF\" && echo \"$PATH\"",
                shell_quote(&layout.env_sh().display().to_string())
            ))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some(layout.cluster_conf("alpha").display().to_string().as_str())
        );
        let scripts = layout.dir.join("bin").display().to_string();
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with(&format!("{scripts}:/opt/sluice/bin:")),
            "{text}"
        );
    }
}
