//! `srun --bcast`: the step's executable is copied to each node before its tasks start, and
//! the tasks run the copy (their `$0`), named and placed as Slurm places it; with
//! `--compress` it travels as LZ4 and arrives whole.

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

#[test]
fn compressed_copies_arrive_whole() {
    let c = Cluster::start(1);
    program(&c);
    let work = c.work.display().to_string();
    // A larger program that compresses well, with a library beside it (--send-libs).
    let big = format!("{PROG}{}", "# padding that LZ4 folds\n".repeat(4000));
    let path = c.work.join("prog");
    std::fs::write(&path, &big).unwrap();
    let out = c.cmd("srun", &["--bcast=zcopy", "--compress", "./prog"]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{out:?}");
    assert!(out.stdout.starts_with(&format!("{work}/zcopy ")), "{out:?}");
    assert_eq!(std::fs::read_to_string(c.work.join("zcopy")).unwrap(), big);
    // The type named, in any case; through srun's input variable; `none`.
    for (args, env) in [
        (vec!["--bcast=z2", "--compress=LZ4", "./prog"], None),
        (vec!["--bcast=z3", "./prog"], Some("lz4")),
        (vec!["--bcast=z4", "--compress=none", "./prog"], None),
    ] {
        let mut cmd = c.command("srun", &args);
        if let Some(v) = env {
            cmd.env("SLURM_COMPRESS", v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        let copy = args[0].trim_start_matches("--bcast=");
        assert_eq!(std::fs::read_to_string(c.work.join(copy)).unwrap(), big);
    }
    // A type Slurm does not know: its line, and the copy goes uncompressed.
    let out = c.cmd("srun", &["--bcast=z5", "--compress=zlib", "./prog"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stderr,
        "srun: error: Compression type 'zlib' unknown, disabling compression support.\n"
    );
    assert_eq!(std::fs::read_to_string(c.work.join("z5")).unwrap(), big);
}
