//! The real `sbatch` binary on input it refuses before sending anything: Slurm's messages,
//! exit code 1, and no connection made to the controller's port.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A configuration whose controller port is a listener nobody should connect to.
fn conf(dir: &Path, port: u16) -> PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("ClusterName=c1\nSlurmctldHost=127.0.0.1\nSlurmctldPort={port}\n"),
    )
    .unwrap();
    let key = dir.join("slurm.key");
    std::fs::write(&key, [7u8; 64]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    conf
}

fn sbatch(dir: &Path, conf: &Path, args: &[&str], stdin: &str) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbatch"))
        .args(args)
        .current_dir(dir)
        .env("SLURM_CONF", conf)
        .env_remove("SBATCH_PARTITION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sbatch starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("sbatch ends");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs each case and checks that nobody connected to the controller's port.
fn refused(args: &[&str], stdin: &str, expected_stderr: &str) {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let conf = conf(dir.path(), listener.local_addr().unwrap().port());
    std::fs::write(dir.path().join("plain.txt"), "echo not a script\n").unwrap();
    std::fs::write(dir.path().join("ok.sh"), "#!/bin/sh\ntrue\n").unwrap();
    let out = sbatch(dir.path(), &conf, args, stdin);
    assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
    assert_eq!(out.stdout, "", "{args:?}");
    assert_eq!(out.stderr, expected_stderr, "{args:?}");
    let nobody = matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    assert!(nobody, "{args:?}: sbatch contacted the controller");
}

#[test]
fn a_file_without_shebang_is_not_a_batch_script() {
    refused(
        &["plain.txt"],
        "",
        "sbatch: error: This does not look like a batch script.  The first\n\
         sbatch: error: line must start with #! followed by the path to an interpreter.\n\
         sbatch: error: For instance: #!/bin/sh\n",
    );
}

#[test]
fn empty_stdin_is_an_empty_script() {
    refused(&[], "", "sbatch: error: Batch script is empty!\n");
}

#[test]
fn bad_numbers_times_and_memory() {
    refused(
        &["-n", "abc", "ok.sh"],
        "",
        "sbatch: error: Invalid numeric value \"abc\" for --ntasks.\n",
    );
    refused(
        &["-t", "later", "ok.sh"],
        "",
        "sbatch: error: Invalid --time specification\n",
    );
    refused(
        &["--mem=12Q", "ok.sh"],
        "",
        "sbatch: error: Invalid --mem specification\n",
    );
    refused(
        &["-N", "x", "ok.sh"],
        "",
        "sbatch: error: \"x\" is not a valid node count\n",
    );
}

#[test]
fn bad_directives_in_the_script() {
    refused(
        &[],
        "#!/bin/sh\n#SBATCH --cpus-per-task=0\n",
        "sbatch: error: Invalid numeric value \"0\" for --cpus-per-task.\n",
    );
    refused(
        &[],
        "#!/bin/sh\n#SBATCH oops\n",
        "sbatch: error: Invalid directive found in batch script: oops\n",
    );
}

#[test]
fn unknown_options_and_wrap_with_a_script() {
    refused(
        &["--frobnicate", "ok.sh"],
        "",
        "sbatch: unrecognized option '--frobnicate'\nTry \"sbatch --help\" for more information\n",
    );
    refused(
        &["--wrap=hostname", "ok.sh"],
        "",
        "sbatch: error: Script arguments not permitted with --wrap option\n",
    );
    refused(
        &["missing.sh"],
        "",
        "sbatch: error: Unable to open file missing.sh\n",
    );
}

#[test]
fn a_valid_job_goes_to_the_controller() {
    // The listener is gone: a valid job reaches the point of contacting the controller.
    let dir = tempfile::tempdir().unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = conf(dir.path(), port);
    let out = sbatch(dir.path(), &conf, &["--wrap=hostname"], "");
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n"
    );
}

#[test]
fn help_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let conf = conf(dir.path(), 1);
    let out = sbatch(dir.path(), &conf, &["--help"], "");
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("Usage: sbatch"), "{}", out.stdout);
}
