//! The real `sacctmgr` binary on errors it reports before (or without) reaching a dbd:
//! bad words, bad settings, bad formats, a missing configuration and an unreachable daemon.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_with(conf: &Path, args: &[&str], stdin: &str) -> Out {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sacctmgr"))
        .args(args)
        .env("SLURM_CONF", conf)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sacctmgr starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("sacctmgr ends");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A configuration whose dbd port has nothing listening.
fn dead_conf(dir: &Path) -> std::path::PathBuf {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = dir.join("slurm.conf");
    std::fs::write(
        &conf,
        format!("ClusterName=c1\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort={port}\n"),
    )
    .unwrap();
    let key = dir.join("slurm.key");
    std::fs::write(&key, [7u8; 64]).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    conf
}

fn run(args: &[&str]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    run_with(&dead_conf(dir.path()), args, "")
}

fn assert_fails_with(args: &[&str], stderr: &str) {
    let out = run(args);
    assert_eq!(out.code, 1, "{args:?}: {}", out.stderr);
    assert_eq!(out.stderr, stderr, "{args:?}");
    assert_eq!(out.stdout, "", "{args:?}");
}

#[test]
fn parse_errors_use_slurms_words_and_need_no_daemon() {
    assert_fails_with(&["bogus"], "invalid keyword: bogus\n");
    assert_fails_with(
        &["show", "wckey"],
        "No valid entity in list command\nInput line must include \"Account\", \"Cluster\", \"Federation\" or \"User\"\n",
    );
    assert_fails_with(
        &["show", "cluster", "format=cluster,xyz"],
        "Unknown field 'xyz'\n",
    );
    assert_fails_with(
        &["show", "cluster", "bogus=1"],
        " Unknown condition: bogus=1\n Use keyword 'set' to modify value\n",
    );
    assert_fails_with(
        &["modify", "cluster", "c1"],
        " You didn't give me anything to set\n",
    );
    assert_fails_with(
        &["modify", "cluster", "c1", "set", "fedstate=bogus"],
        "Invalid FedState bogus.\n",
    );
    assert_fails_with(
        &["modify", "cluster", "c1", "set", "nonsense=1"],
        " Unknown option: nonsense=1\n Use keyword 'where' to modify condition\n",
    );
    assert_fails_with(
        &[
            "modify",
            "cluster",
            "c1",
            "set",
            "features=a",
            "features+=b",
        ],
        "sacctmgr: error: You can't use '=' and '+' or '-' in the same line\n",
    );
    assert_fails_with(
        &["modify", "cluster", "c1", "set", "features-="],
        " You didn't specify any features to remove\n",
    );
    assert_fails_with(
        &["modify", "federation", "f1", "set", "clusters+="],
        " You didn't specify any clusters to add\n",
    );
    assert_fails_with(
        &["modify", "federation", "f1", "set", "clusters=+a,b"],
        "sacctmgr: error: You can't use '=' and '+' or '-' in the same line\n",
    );
    assert_fails_with(
        &["delete", "cluster"],
        " No conditions given to remove, not executing.\n",
    );
    assert_fails_with(
        &["delete", "federation"],
        " No conditions given to remove, not executing.\n",
    );
    assert_fails_with(&["add", "cluster"], " Need name of cluster to add.\n");
    assert_fails_with(&["add", "federation"], " Need name of federation to add.\n");
    assert_fails_with(
        &["add", "user", "bob", "adminlevel=boss"],
        " Invalid AdminLevel boss, must be None, Operator or Administrator.\n",
    );
    assert_fails_with(
        &["delete", "account", "root"],
        " You are not allowed to remove the root account.\n Use remove cluster instead.\n",
    );
}

#[test]
fn options_version_and_help() {
    let v = run(&["-V"]);
    assert_eq!(
        (v.code, v.stdout.as_str()),
        (0, concat!("sluice ", env!("CARGO_PKG_VERSION"), "\n"))
    );
    let h = run(&["--help"]);
    assert!(
        h.code == 0 && h.stdout.contains("sacctmgr [<OPTION>] [<COMMAND>]"),
        "{}",
        h.stdout
    );
    let bad = run(&["-x", "show", "cluster"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.starts_with("sacctmgr: invalid option -- 'x'"),
        "{}",
        bad.stderr
    );
}

#[test]
fn an_unreachable_dbd_is_a_clear_error() {
    let out = run(&["show", "cluster"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with("sacctmgr: error: "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Connection refused"), "{}", out.stderr);
}

#[test]
fn a_missing_configuration_is_named() {
    let out = run_with(
        Path::new("/nonexistent/slurm.conf"),
        &["show", "cluster"],
        "",
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("/nonexistent/slurm.conf"),
        "{}",
        out.stderr
    );
}

#[test]
fn interactive_mode_reads_commands_until_quit() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dead_conf(dir.path());
    let out = run_with(&conf, &[], "# a comment\n\nversion\nbogus\nquit\nversion\n");
    assert_eq!(
        out.stdout,
        concat!("sluice ", env!("CARGO_PKG_VERSION"), "\n"),
        "no prompt without a terminal, stops at quit"
    );
    assert_eq!(out.stderr, "invalid keyword: bogus\n");
    assert_eq!(out.code, 1, "the last failure decides the exit code");
    let ok = run_with(&conf, &["-i"], "version\nexit\n");
    assert_eq!(ok.code, 0);
}
