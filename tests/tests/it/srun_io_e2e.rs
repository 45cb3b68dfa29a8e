//! srun's standard streams on a real local cluster, as Slurm 22.05's srun handles them: its
//! stdin forwarded to every task (or one, or none), `-u` showing partial lines at once, and
//! `-o/-e` files named by Slurm's patterns, as workflow tools (submitit) ask for them.

use crate::common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use common::cluster::{Cluster, STATE_TIMEOUT};

#[test]
fn srun_forwards_its_stdin_to_the_tasks() {
    let c = Cluster::start(1);
    let out = c.cmd_stdin("srun", &["-n1", "cat"], "hello\n");
    assert_eq!((out.code, out.stdout.as_str()), (0, "hello\n"), "{out:?}");
    let out = c.cmd_stdin("srun", &["-n2", "cat"], "hello\n");
    assert_eq!(out.stdout, "hello\nhello\n", "every task reads it: {out:?}");
    let out = c.cmd_stdin("srun", &["-n2", "-l", "--input=1", "cat"], "hello\n");
    assert_eq!(out.stdout, "1: hello\n", "only task 1 reads it: {out:?}");
    let out = c.cmd_stdin(
        "srun",
        &["--input=none", "sh", "-c", "cat; readlink /proc/self/fd/0"],
        "hello\n",
    );
    assert_eq!(out.stdout, "/dev/null\n", "{out:?}");
    let env_mode = c
        .command("srun", &["sh", "-c", "cat; echo end"])
        .env("SLURM_STDINMODE", "none")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&env_mode.stdout), "end\n");
}

#[test]
fn srun_unbuffered_shows_a_partial_line_at_once() {
    let c = Cluster::start(1);
    // The task prints half a line, then waits for a line on its stdin, which the test sends
    // only after it saw the half line.
    let mut child = c
        .command(
            "srun",
            &["-u", "sh", "-c", "printf part; read x; echo \" $x\""],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    let first = rx.recv_timeout(STATE_TIMEOUT);
    if first.is_err() {
        let _ = child.kill();
    }
    assert_eq!(
        first.unwrap(),
        b"part",
        "the half line shows before the task goes on"
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"done\n").unwrap();
    drop(stdin);
    let rest: Vec<u8> = rx.iter().flatten().collect();
    assert_eq!(String::from_utf8_lossy(&rest), " done\n");
    assert!(child.wait().unwrap().success());
}

#[test]
fn srun_writes_pattern_named_files_with_the_users_umask() {
    let c = Cluster::start(1);
    let task = "echo out$SLURM_PROCID $SLURM_JOB_ID; echo err$SLURM_PROCID >&2";
    let out = c
        .command(
            "srun",
            &[
                "-n2",
                "-o",
                "o_%j_%t.txt",
                "-e",
                "e_%3t_%N.txt",
                "sh",
                "-c",
                task,
            ],
        )
        .env("SLURM_UMASK", "0077")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "output went to the files: {out:?}");
    let first = c.read("e_000_clustern1.txt");
    assert_eq!(first, "err0\n");
    assert_eq!(c.read("e_001_clustern1.txt"), "err1\n");
    let job = std::fs::read_dir(&c.work)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find_map(|n| {
            n.strip_prefix("o_")?
                .strip_suffix("_0.txt")
                .map(String::from)
        })
        .expect("o_<job>_0.txt");
    assert_eq!(c.read(&format!("o_{job}_0.txt")), format!("out0 {job}\n"));
    assert_eq!(c.read(&format!("o_{job}_1.txt")), format!("out1 {job}\n"));
    let mode = std::fs::metadata(c.work.join("e_000_clustern1.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "created with the job's umask");
}

#[test]
fn srun_output_open_mode_and_single_task_output() {
    let c = Cluster::start(1);
    // Without -e, stderr goes to the -o file too; both tasks share it.
    let args = ["-n2", "-o", "all.txt", "sh", "-c", "echo o; echo e >&2"];
    assert_eq!(c.cmd("srun", &args).code, 0);
    assert_eq!(
        c.read("all.txt").lines().count(),
        4,
        "{}",
        c.read("all.txt")
    );
    assert_eq!(c.cmd("srun", &args).code, 0);
    assert_eq!(c.read("all.txt").lines().count(), 4, "truncated again");
    let append = ["--open-mode=append", "-o", "all.txt", "echo", "more"];
    assert_eq!(c.cmd("srun", &append).code, 0);
    assert_eq!(
        c.read("all.txt").lines().count(),
        5,
        "{}",
        c.read("all.txt")
    );
    let out = c.cmd("srun", &["-n2", "-l", "-o", "1", "sh", "-c", "echo x"]);
    assert_eq!(
        out.stdout, "1: x\n",
        "only task 1's output is shown: {out:?}"
    );
    let out = c.cmd("srun", &["-o", "none", "echo", "gone"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    let out = c.cmd("srun", &["-o", "/nonexistent/x", "echo", "lost"]);
    assert_eq!(out.code, 1, "{out:?}");
    let words = "srun: error: Could not open stdout file: No such file or directory";
    assert!(out.stderr.starts_with(words), "{out:?}");
    let out = c.cmd("srun", &["-i", "missing.txt", "cat"]);
    let words = "srun: error: Could not open stdin file: No such file or directory";
    assert!(out.code == 1 && out.stderr.starts_with(words), "{out:?}");
}

#[test]
fn submitit_srun_line_inside_a_batch_job() {
    let c = Cluster::start(2);
    let logs = c.work.join("logs");
    std::fs::create_dir(&logs).unwrap();
    let dir = logs.display();
    let script = format!(
        "#!/bin/sh\n\
         srun --unbuffered --output {dir}/%j_%t_log.out --error {dir}/%j_%t_log.err \
         python3 -u -c 'import os; print(\"task\", os.environ[\"SLURM_PROCID\"]); \
         import sys; print(\"warn\", file=sys.stderr)'\n"
    );
    std::fs::write(c.work.join("submitit.sh"), script).unwrap();
    let id = c.sbatch(&["-N2", "-n2", "submitit.sh"]);
    assert_eq!(
        c.wait_done(id),
        "COMPLETED",
        "{}",
        c.read(&format!("slurm-{id}.out"))
    );
    for t in 0..2 {
        let out = std::fs::read_to_string(logs.join(format!("{id}_{t}_log.out"))).unwrap();
        assert_eq!(out, format!("task {t}\n"));
        let err = std::fs::read_to_string(logs.join(format!("{id}_{t}_log.err"))).unwrap();
        assert_eq!(err, "warn\n");
    }
    let q = c.cmd("srun", &["--cpu-bind=q", "true"]);
    assert_eq!(q.code, 0, "{q:?}");
}
