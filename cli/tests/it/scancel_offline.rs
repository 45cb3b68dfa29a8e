//! The real `scancel` binary on input it refuses before contacting the controller.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn scancel(args: &[&str]) -> (i32, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let conf = write_conf(dir.path(), listener.local_addr().unwrap().port());
    let out = Command::new(env!("CARGO_BIN_EXE_scancel"))
        .args(args)
        .env("SLURM_CONF", conf)
        .output()
        .expect("scancel runs");
    let contacted =
        !matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        contacted,
    )
}

fn write_conf(dir: &Path, port: u16) -> std::path::PathBuf {
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("SlurmctldHost=127.0.0.1\nSlurmctldPort={port}\n"),
    )
    .unwrap();
    let key = dir.join("slurm.key");
    std::fs::write(&key, [7u8; 64]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    conf
}

#[test]
fn refusals_print_slurm_errors_and_send_nothing() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "scancel: error: No job identification provided\n"),
        (
            &["--signal=INT"],
            "scancel: error: No job identification provided\n",
        ),
        (&["12x"], "scancel: error: Invalid job id 12x\n"),
        (
            &["-s", "WAT", "12"],
            "scancel: error: Unknown job signal: WAT\n",
        ),
        (
            &["-t", "DONE", "-u", "0"],
            "scancel: error: Invalid job state specified: DONE\n\
             scancel: error: Valid job states are PENDING, RUNNING and SUSPENDED\n",
        ),
        (
            &["--nope"],
            "scancel: unrecognized option '--nope'\nTry \"scancel --help\" for more information\n",
        ),
    ];
    for (args, expected) in cases {
        let (code, stderr, contacted) = scancel(args);
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(stderr, *expected, "{args:?}");
        assert!(!contacted, "{args:?}: scancel contacted the controller");
    }
}

#[test]
fn an_unreachable_controller_is_an_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let conf = write_conf(dir.path(), port);
    let out = Command::new(env!("CARGO_BIN_EXE_scancel"))
        .arg("12")
        .env("SLURM_CONF", conf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "scancel: error: Kill job error: Unable to contact slurm controller (connect failure)\n"
    );
}
