//! The record of a job whose epilog is due on a node running only its steps (not its batch
//! script, whose launch record serves): one file `here/<job>` in the spool (0600), holding the
//! run and the `Prolog`/`Epilog` environment, written when its first step or its allocation
//! prolog comes and removed when its epilog is started. A node daemon restarted meanwhile
//! loads them, so the epilog still runs when the controller ends the job here.

use std::path::{Path, PathBuf};

use crate::env::Env;

/// One job's record as saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HereRecord {
    /// The job.
    pub job: u32,
    /// Its run (requeue count at launch).
    pub run: u32,
    /// The epilog's environment (but its context).
    pub env: Env,
}

fn path(dir: &Path, job: u32) -> PathBuf {
    dir.join(job.to_string())
}

/// The text of a record: `run N`, then one `NAME=VALUE` a line (line breaks in values, which
/// the variables saved never hold, become spaces).
fn encode(run: u32, env: &Env) -> String {
    let mut text = format!("run {run}\n");
    for (k, v) in env {
        text.push_str(&format!("{k}={}\n", v.replace('\n', " ")));
    }
    text
}

fn decode(job: u32, text: &str) -> Option<HereRecord> {
    let mut lines = text.lines();
    let run = lines.next()?.strip_prefix("run ")?.parse().ok()?;
    let mut env = Env::new();
    for line in lines {
        let (k, v) = line.split_once('=')?;
        env.insert(k.to_string(), v.to_string());
    }
    Some(HereRecord { job, run, env })
}

/// Saves `job`'s record in `dir` (0600); a failure is logged (the epilog then needs this
/// daemon to stay up).
pub fn save(dir: &Path, job: u32, run: u32, env: &Env) {
    let path = path(dir, job);
    if let Err(e) = write_private(&path, encode(run, env).as_bytes()) {
        tracing::warn!(
            "cannot record job {job}'s due epilog in {}: {e}",
            path.display()
        );
    }
}

/// Writes `data` to `path` through a temporary file (0600) renamed over it.
fn write_private(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(data)?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Removes `job`'s record from `dir`, if any.
pub fn remove(dir: &Path, job: u32) {
    let path = path(dir, job);
    if let Err(e) = std::fs::remove_file(&path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", path.display());
    }
}

/// Every record in `dir`; unreadable ones are removed and logged.
pub fn load(dir: &Path) -> Vec<HereRecord> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut records = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let record = name
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .and_then(|job| {
                let text = std::fs::read_to_string(entry.path()).ok()?;
                decode(job, &text)
            });
        match record {
            Some(r) => records.push(r),
            None => {
                tracing::warn!("{}: not a job record, removed", entry.path().display());
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    records.sort_unstable_by_key(|r| r.job);
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn records_survive_a_reload_privately_and_go_when_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = Env::new();
        env.insert("SLURM_JOB_ID".into(), "12".into());
        env.insert("SLURM_JOB_NODELIST".into(), "n[1-2]".into());
        save(dir.path(), 12, 3, &env);
        std::fs::write(dir.path().join("junk"), "x").unwrap();
        std::fs::write(dir.path().join("13"), "no run line\n").unwrap();
        let mode = std::fs::metadata(dir.path().join("12")).unwrap().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            load(dir.path()),
            [HereRecord {
                job: 12,
                run: 3,
                env
            }]
        );
        assert!(!dir.path().join("junk").exists(), "unreadable: removed");
        remove(dir.path(), 12);
        assert!(load(dir.path()).is_empty());
    }
}
