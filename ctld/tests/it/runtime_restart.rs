//! The real `sluice-ctld` binary killed with SIGKILL mid-workload and restarted on the same
//! StateSaveLocation: no job is lost or run twice, running jobs stay RUNNING and are
//! reconciled when their nodes re-register, pending jobs keep their place, ids go on.

use crate::runtime_support;

use runtime_support::*;
use sluice_vocab::JobState;
use sluice_wire::proto::ListJobsRequest;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command};

/// A running `sluice-ctld`; dropping it kills it with SIGKILL and reaps it.
struct Proc(Child);

impl Proc {
    fn kill_9(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_ctld(dir: &Path) -> (Proc, u16) {
    let port_file = dir.join("port");
    let _ = std::fs::remove_file(&port_file);
    let child = Proc(
        Command::new(env!("CARGO_BIN_EXE_sluice-ctld"))
            .arg("-D")
            .arg("-f")
            .arg(dir.join("slurm.conf"))
            .env("SLUICE_PORT_FILE", &port_file)
            .env_remove("SLURM_CONF")
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(port) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return (child, port);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "sluice-ctld did not start"
        );
        std::thread::yield_now();
    }
}

async fn states(c: &mut sluice_wire::client::CtldClient) -> HashMap<u32, JobState> {
    c.list_jobs(ListJobsRequest {
        include_finished: true,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .jobs
    .into_iter()
    .map(|j| (j.job_id, JobState::from_stored(j.state).unwrap()))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_no_job_is_lost_or_run_twice() {
    let (dir, state) = temp();
    let (ports, mut events) = fake_nodes(&["n1", "n2"]).await;
    conf(dir.path(), &conf_text(&state, 2, "FirstJobId=100\n"));
    let key_file = dir.path().join(sluice_wire::auth::KEY_FILE);
    std::fs::write(&key_file, vec![42u8; 64]).unwrap();
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let (child, port) = spawn_ctld(dir.path());
    let mut admin = client(port, 0).await;
    register(&mut admin, "n1", ports[0], vec![]).await;
    register(&mut admin, "n2", ports[1], vec![]).await;
    let mut user = client(port, 4242).await;
    let mut ids = Vec::new();
    for name in ["a", "b", "c", "d"] {
        ids.push(user.submit(job(name)).await.unwrap().into_inner().job_id);
    }
    assert_eq!(ids, [100, 101, 102, 103], "ids count up from FirstJobId");
    let mut host = HashMap::new();
    for _ in 0..2 {
        if let NodeEvent::Launch { node, req } = next_event(&mut events).await {
            host.insert(req.job_id, node);
        }
    }
    assert_eq!(host.len(), 2);

    child.kill_9();
    let (child, port) = spawn_ctld(dir.path());
    let mut admin = client(port, 0).await;
    let mut user = client(port, 4242).await;
    let before = states(&mut user).await;
    assert_eq!(before[&100], JobState::Running);
    assert_eq!(before[&101], JobState::Running);
    assert_eq!(
        (before[&102], before[&103]),
        (JobState::Pending, JobState::Pending)
    );

    // The nodes come back with their jobs: nothing to kill, except a job nobody knows.
    let on = |n: &str| {
        host.iter()
            .find(|(_, h)| h.as_str() == n)
            .map(|(j, _)| *j)
            .unwrap()
    };
    assert!(
        register(&mut admin, "n1", ports[0], vec![on("n1")])
            .await
            .is_empty()
    );
    assert_eq!(
        register(&mut admin, "n2", ports[1], vec![on("n2"), 777]).await,
        [777]
    );
    let after = states(&mut user).await;
    assert_eq!(
        (after[&100], after[&101]),
        (JobState::Running, JobState::Running)
    );
    let next = user.submit(job("e")).await.unwrap().into_inner().job_id;
    assert_eq!(next, 104, "no id handed out twice");

    // The first pending job takes the first freed node; nothing ran twice.
    exited(&mut admin, "n1", on("n1"), 0).await;
    let launched = loop {
        if let NodeEvent::Launch { req, .. } = next_event(&mut events).await {
            break req.job_id;
        }
    };
    assert_eq!(launched, 102, "pending jobs keep their place");
    while let Ok(ev) = events.try_recv() {
        if let NodeEvent::Launch { req, .. } = ev {
            panic!("job {} launched again", req.job_id);
        }
    }
    assert_eq!(states(&mut user).await[&100], JobState::Completed);
    child.kill_9();
}
