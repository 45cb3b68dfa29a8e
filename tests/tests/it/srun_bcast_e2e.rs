//! `srun --bcast`: the step's executable is copied to each node before its tasks start, and
//! the tasks run the copy (their `$0`), named and placed as Slurm places it.

use crate::common;

use common::cluster::Cluster;

/// A program that prints its own path and the first directory of its `LD_LIBRARY_PATH`.
const PROG: &str = "#!/bin/sh\necho \"$0 ${LD_LIBRARY_PATH%%:*}\"\n";

fn program(c: &Cluster) {
    use std::os::unix::fs::PermissionsExt;
    let path = c.work.join("prog");
    std::fs::write(&path, PROG).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn bcast_runs_each_node_s_copy() {
    let c = Cluster::start(2);
    program(&c);
    let work = c.work.display().to_string();
    let out = c.cmd("srun", &["-N2", "-l", "--bcast", "./prog"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut lines: Vec<&str> = out.stdout.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines.len(), 2, "{out:?}");
    for (line, node) in lines.iter().zip(["clustern1", "clustern2"]) {
        let copy = line.split(' ').nth(1).unwrap_or_default();
        assert!(
            copy.starts_with(&format!("{work}/slurm_bcast_"))
                && copy.ends_with(&format!(".0_{node}")),
            "{out:?}"
        );
        assert_eq!(
            std::fs::read_to_string(copy).unwrap(),
            PROG,
            "the copy stays"
        );
    }
    std::fs::create_dir(c.work.join("copies")).unwrap();
    let out = c.cmd("srun", &["--bcast=copies/", "./prog"]);
    assert!(
        out.stdout
            .starts_with(&format!("{work}/copies/slurm_bcast_")),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--bcast=mine", "--send-libs", "./prog"]);
    assert_eq!(
        out.stdout,
        format!("{work}/mine {work}/mine_libs\n"),
        "{out:?}"
    );
    assert!(c.work.join("mine_libs").is_dir());
    // Without --bcast, --send-libs changes nothing (as in Slurm).
    let out = c.cmd("srun", &["--send-libs", "./prog"]);
    assert!(
        out.stdout.starts_with("./prog ") && !out.stdout.contains("_libs"),
        "{out:?}"
    );
    let out = c.cmd("srun", &["--bcast", "/nonexistent"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "srun: fatal: Can not execute /nonexistent\n"),
        "{out:?}"
    );
}
