//! `sluice-stepd` on its own, as after its node daemon died right after starting it: it writes
//! the launch record once the script runs (so a restarted daemon finds the script), reaps the
//! script and leaves its status.

use std::process::{Command, Stdio};

use sluice_noded::supervise::Ended;
use sluice_testkit::eventually;

#[tokio::test]
async fn a_supervisor_without_its_node_daemon_records_the_launch_and_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let (status, record, gate) = (
        dir.path().join("7.status"),
        dir.path().join("7"),
        dir.path().join("go"),
    );
    let script = format!(
        "while [ ! -e {} ]; do sleep 0.05; done; exit 4",
        gate.display()
    );
    let mut stepd = Command::new(env!("CARGO_BIN_EXE_sluice-stepd"))
        .arg(&status)
        .arg(&record)
        .args(["3", "-", "-", "/bin/sh", "-c", &script])
        // No node daemon: its end of the conversation is closed from the start.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let text = eventually("the launch record", async || {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.ends_with('\n'))
    })
    .await;
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(fields.len(), 3, "{text:?}");
    assert!(
        fields[0].parse::<i32>().unwrap() > 1,
        "the script's pid: {text:?}"
    );
    assert_eq!(fields[1..], ["3".to_string(), stepd.id().to_string()]);
    assert!(
        Ended::read(&status).is_none(),
        "no status while the script runs"
    );
    std::fs::write(&gate, "").unwrap();
    assert!(stepd.wait().unwrap().success());
    assert_eq!(
        Ended::read(&status),
        Some(Ended {
            exit_code: 4,
            signal: 0
        })
    );
}
