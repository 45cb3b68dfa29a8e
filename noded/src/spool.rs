//! The node's spool directory: one `jobNNNNN/` directory per running batch job holding its
//! script (owned by the job's user, mode 0700, as Slurm's `slurm_script`; `jobNNNNN_R/` for the
//! job's run `R` after a requeue, see [`RunId`]), and `exits/`, the
//! outbox of exit reports the controller has not acknowledged yet (see [`crate::outbox`]),
//! `launches/`, the records of running batch jobs (see [`crate::adopt`]), and `here/`, the
//! jobs whose epilog is due on a node running only their steps (see [`crate::here_file`]).

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::NodedError;
use crate::spawn::RunAs;

/// The script's name inside a job's directory.
const SCRIPT: &str = "slurm_script";

/// One run of a batch job on this node: the job and its launch count (requeue count). Every
/// file a run keeps is named by both, so the end of an older run, still being tidied up, never
/// removes what a newer run of the same job wrote: a requeued job may start here again the
/// moment the controller has the old run's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId {
    /// The job.
    pub job: u32,
    /// Its launch count.
    pub restart: u32,
}

impl RunId {
    /// Run `restart` of `job`.
    pub const fn new(job: u32, restart: u32) -> Self {
        Self { job, restart }
    }

    /// The stem of the run's files in `launches/`: `<job>_<restart>`.
    pub fn stem(self) -> String {
        format!("{}_{}", self.job, self.restart)
    }

    /// The run a `launches/` stem names (see [`RunId::stem`]).
    pub fn parse_stem(stem: &str) -> Option<Self> {
        let (job, restart) = stem.split_once('_')?;
        Some(Self::new(job.parse().ok()?, restart.parse().ok()?))
    }
}

/// A node's spool directory.
#[derive(Debug, Clone)]
pub struct Spool {
    root: PathBuf,
}

impl Spool {
    /// Creates or opens `root`, mode 0711: others may pass through it to their own job's
    /// directory (0700, theirs) to run its script, but may not list it. `exits/` and
    /// `launches/` are the daemon's alone (0700, their files 0600), also when an earlier
    /// version left them readable.
    pub fn open(root: &Path) -> Result<Self, NodedError> {
        let err = |path: &Path| {
            let path = path.to_path_buf();
            move |e| NodedError::file(path, e)
        };
        // Every directory made on the way is 0711 too, whatever the daemon's umask (0077).
        let missing: Vec<&Path> = root.ancestors().take_while(|d| !d.exists()).collect();
        for dir in missing.iter().rev() {
            match std::fs::create_dir(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(err(dir)(e));
                }
                _ => std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
                    .map_err(err(dir))?,
            }
        }
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o711))
            .map_err(err(root))?;
        let spool = Self {
            root: root.to_path_buf(),
        };
        for dir in [spool.exits_dir(), spool.launches_dir(), spool.here_dir()] {
            sluice_wire::daemon::private_dir(&dir).map_err(err(&dir))?;
            sluice_wire::daemon::private_files_in(&dir).map_err(err(&dir))?;
        }
        Ok(spool)
    }

    /// The spool directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where exit reports wait for the controller.
    pub fn exits_dir(&self) -> PathBuf {
        self.root.join("exits")
    }

    /// Where launch records of running batch jobs are (see [`crate::adopt`]).
    pub fn launches_dir(&self) -> PathBuf {
        self.root.join("launches")
    }

    /// Where the jobs whose epilog is due on a node running only their steps are recorded
    /// (see [`crate::node_scripts`]), so the epilog runs after a restart of this daemon too.
    pub fn here_dir(&self) -> PathBuf {
        self.root.join("here")
    }

    /// The directory of batch run `run`: Slurm's `jobNNNNN` for a job's first run,
    /// `jobNNNNN_R` for its run `R` after a requeue.
    pub fn job_dir(&self, run: RunId) -> PathBuf {
        match run.restart {
            0 => self.root.join(format!("job{:05}", run.job)),
            r => self.root.join(format!("job{:05}_{r}", run.job)),
        }
    }

    /// Writes `script` as the job's executable script (0700, owned by the job's user when the
    /// daemon is root) and returns its path. Runs on a blocking thread.
    pub async fn write_script(
        &self,
        run: RunId,
        script: String,
        run_as: Option<RunAs>,
    ) -> Result<PathBuf, NodedError> {
        let dir = self.job_dir(run);
        tokio::task::spawn_blocking(move || write_script(&dir, &script, run_as))
            .await
            .map_err(|e| NodedError::file(SCRIPT, std::io::Error::other(e)))?
    }

    /// Removes batch run `run`'s directory once it ended.
    pub async fn remove_job_dir(&self, run: RunId) {
        let dir = self.job_dir(run);
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove {}: {e}", dir.display());
        }
    }
}

fn write_script(dir: &Path, script: &str, run_as: Option<RunAs>) -> Result<PathBuf, NodedError> {
    use std::io::Write;
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |e| NodedError::file(path, e)
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(err(dir))?;
        }
        Err(e) => return Err(err(dir)(e)),
    }
    let path = dir.join(SCRIPT);
    // A leftover script of an earlier launch is replaced, never written through.
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(&path)(e)),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o700)
        .open(&path)
        .map_err(err(&path))?;
    f.write_all(script.as_bytes()).map_err(err(&path))?;
    drop(f);
    if let Some(who) = run_as {
        std::os::unix::fs::chown(dir, Some(who.uid), Some(who.gid)).map_err(err(dir))?;
        std::os::unix::fs::chown(&path, Some(who.uid), Some(who.gid)).map_err(err(&path))?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_runs_stem_names_the_job_and_the_run() {
        let run = RunId::new(42, 3);
        assert_eq!(run.stem(), "42_3");
        assert_eq!(RunId::parse_stem("42_3"), Some(run));
        for bad in ["42", "42_", "_3", "42_3_1", "x_3", "42.status"] {
            assert_eq!(RunId::parse_stem(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn scripts_are_private_executables_replaced_on_relaunch() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(&dir.path().join("spool/n1")).unwrap();
        for dir in [spool.root(), &dir.path().join("spool")] {
            assert_eq!(std::fs::metadata(dir).unwrap().mode() & 0o777, 0o711);
        }
        for dir in [spool.exits_dir(), spool.launches_dir()] {
            assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        }
        let first = RunId::new(12, 0);
        let path = spool
            .write_script(first, "#!/bin/sh\necho a\n".into(), None)
            .await;
        let path = path.unwrap();
        assert!(path.ends_with("job00012/slurm_script"));
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o700);
        let again = spool
            .write_script(first, "#!/bin/sh\necho b\n".into(), None)
            .await;
        assert_eq!(
            std::fs::read_to_string(again.unwrap()).unwrap(),
            "#!/bin/sh\necho b\n"
        );
        // The job requeued and started here again while its first run is still being tidied
        // up: the first run's end removes its own directory, never the new run's script.
        let second = RunId::new(12, 1);
        let path = spool
            .write_script(second, "#!/bin/sh\necho c\n".into(), None)
            .await
            .unwrap();
        assert!(path.ends_with("job00012_1/slurm_script"));
        spool.remove_job_dir(first).await;
        assert!(!spool.job_dir(first).exists());
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#!/bin/sh\necho c\n"
        );
        spool.remove_job_dir(second).await;
        assert!(!spool.job_dir(second).exists());
    }
}
