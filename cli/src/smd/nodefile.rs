//! The new job environment smd writes after replacing or dropping nodes,
//! `/tmp/smd_job_<id>_nodes.sh`, for the batch script to source before its next step.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ::smd::Allocation;

/// Where the file of `job` goes: `/tmp/smd_job_<id>_nodes.sh` on the host smd runs on.
pub fn path(job: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/smd_job_{job}_nodes.sh"))
}

/// The file's text: the node list, node count and CPUs per node as `export` lines, and
/// `SLURM_TASKS_PER_NODE` unset (the old task layout no longer fits).
pub fn text(a: &Allocation) -> String {
    let list = escape(&a.node_list);
    let count = a.nodes.len();
    let cpus = escape(&a.cpus_per_node);
    format!(
        "export SLURM_NODELIST={list}\nexport SLURM_JOB_NODELIST={list}\n\
         export SLURM_NNODES={count}\nexport SLURM_JOB_NUM_NODES={count}\n\
         export SLURM_JOB_CPUS_PER_NODE={cpus}\nunset SLURM_TASKS_PER_NODE\n"
    )
}

/// Backslash before every character a shell would read specially (`2(x2)` is `2\(x2\)`, a
/// host range's brackets are not a glob).
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if !(c.is_ascii_alphanumeric() || ",._-+=/:@%".contains(c)) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Writes `text` to `path` with mode 0600, owned by the caller: written to a new file beside
/// it (never following a link someone left in /tmp) and renamed over the old one.
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("sh.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::smd::{Node, NodeState};
    use std::os::unix::fs::PermissionsExt;

    fn alloc(list: &str, cpus: &str, names: &[&str]) -> Allocation {
        Allocation {
            job_id: 151,
            node_list: list.into(),
            cpus_per_node: cpus.into(),
            nodes: names
                .iter()
                .map(|n| Node {
                    name: n.to_string(),
                    cpus: 2,
                    state: NodeState::Ok,
                })
                .collect(),
            ..Allocation::default()
        }
    }

    #[test]
    fn the_text_is_the_guides() {
        assert_eq!(
            text(&alloc("dario,prometeo", "2(x2)", &["dario", "prometeo"])),
            "export SLURM_NODELIST=dario,prometeo\nexport SLURM_JOB_NODELIST=dario,prometeo\n\
             export SLURM_NNODES=2\nexport SLURM_JOB_NUM_NODES=2\n\
             export SLURM_JOB_CPUS_PER_NODE=2\\(x2\\)\nunset SLURM_TASKS_PER_NODE\n"
        );
        assert!(text(&alloc("n[1-3]", "1(x3)", &["n1", "n2", "n3"])).contains("=n\\[1-3\\]\n"));
    }

    #[test]
    fn the_file_is_private_and_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("smd_job_7_nodes.sh");
        std::fs::write(&p, "old").unwrap();
        write(&p, "new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new\n");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(path(151), PathBuf::from("/tmp/smd_job_151_nodes.sh"));
    }
}
