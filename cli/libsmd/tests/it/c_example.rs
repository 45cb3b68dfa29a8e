//! `examples/smd_example.c`, compiled with `cc` against `include/smd.h` and linked with the
//! built libsmd, shared and static, run against the fake: it prints the allocation, receives
//! the failure event, replaces the node and receives the replacement and the job's end.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fake::Cluster;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where cargo put libsmd.so and libsmd.a: the test executable's directory (`target/*/deps`).
fn lib_dir() -> PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

fn compile(out: &Path, link: &[String]) {
    let status = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(crate_dir().join("include"))
        .arg(crate_dir().join("examples/smd_example.c"))
        .args(link)
        .arg("-o")
        .arg(out)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc failed for {link:?}");
}

const EXPECTED: &str = "job 42 nodes n[1-2] cpus 4(x2) time_limit 30\n  node n1 cpus 4 OK\n  node n2 cpus 4 FAILED\n\
event FAILED node n2 replacement  time 1795255200 nodes n[1-2]\n\
replaced n2: job 42 nodes n[1,3] cpus 4(x2) time_limit 30\n  node n1 cpus 4 OK\n  node n3 cpus 4 OK\n\
event REPLACED node n2 replacement n3 time 1795255200 nodes n[1,3]\n\
event JOB_ENDED node  replacement  time 1795255200 nodes n[1,3]\n";

fn run(program: &Path, conf: &Path) -> (i32, String, String) {
    let out = Command::new(program)
        .arg("42")
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_c_example_receives_events_linked_shared_and_static() {
    let libs = lib_dir();
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("smd_example_shared");
    compile(
        &shared,
        &[
            format!("-L{}", libs.display()),
            "-lsmd".into(),
            format!("-Wl,-rpath,{}", libs.display()),
        ],
    );
    let static_ = tmp.path().join("smd_example_static");
    let mut link = vec![libs.join("libsmd.a").display().to_string()];
    link.extend(
        [
            // AuthType=auth/munge's library, linked shared.
            "-lmunge",
            "-lpthread",
            "-ldl",
            "-lm",
            "-lrt",
            "-lutil",
            "-lgcc_s",
            "-lc",
        ]
        .map(String::from),
    );
    compile(&static_, &link);
    for program in [&shared, &static_] {
        let c = Cluster::start();
        let (code, stdout, stderr) = run(program, &c.conf);
        assert_eq!((code, stdout.as_str()), (0, EXPECTED), "{stderr}");
    }
    // Errors come back as codes with the library's words.
    let c = Cluster::start();
    let out = Command::new(&shared)
        .arg("7")
        .env("SLURM_CONF", &c.conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "smd_example: smd_job_nodes: Access/permission denied (Access/permission denied)\n"
    );
    let missing = c.dir.path().join("nope.conf");
    let (code, _, stderr) = run(&shared, &missing);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("smd_example: smd_open: Bad or missing configuration ("),
        "{stderr}"
    );
}
