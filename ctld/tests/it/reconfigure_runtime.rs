//! `ControllerAdmin.Reconfigure` on an in-process controller: the file is read again from the
//! path the controller started with, a new SuspendProgram is the one run from then on, and a
//! bad file is refused naming file, line and key, with the configuration in force unchanged.

use crate::runtime_support;
use sluice_testkit::file_contents;

use runtime_support::{Ctld, client, conf, conf_text, key, register, temp};
use sluice_wire::auth::Signer;
use sluice_wire::client::{CtldAdminClient, connect};
use sluice_wire::proto::{GetConfigRequest, ReconfigureRequest, UpdateNodeRequest};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A program writing its arguments to `dir/<name>.args`.
fn program(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.sh"));
    let out = dir.join(format!("{name}.args"));
    let body = format!(
        "#!/bin/sh\necho \"$@\" > {0}.tmp && mv {0}.tmp {0}\n",
        out.display()
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

async fn admin(port: u16) -> CtldAdminClient {
    let ch = connect("127.0.0.1", port, Signer::new(key(), 0))
        .await
        .unwrap();
    CtldAdminClient::new(ch)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconfigured_suspend_program_is_the_one_run_and_a_bad_file_changes_nothing() {
    let (dir, state) = temp();
    let resume = program(dir.path(), "resume");
    let old = program(dir.path(), "old_suspend");
    let new = program(dir.path(), "new_suspend");
    let power = |suspend: &Path| {
        format!(
            "SuspendTime=3600\nSuspendTimeout=5\nSuspendProgram={}\nResumeProgram={}\n",
            suspend.display(),
            resume.display()
        )
    };
    let text = conf_text(&state, 1, &power(&old));
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let mut c = client(ctld.port, 0).await;
    register(&mut c, "n1", 1, Vec::new()).await;
    let mut a = admin(ctld.port).await;

    let path = dir.path().join("slurm.conf");
    std::fs::write(&path, conf_text(&state, 1, &power(&new))).unwrap();
    a.reconfigure(ReconfigureRequest {}).await.unwrap();
    c.update_node(UpdateNodeRequest {
        nodes: vec!["n1".into()],
        state: Some("POWER_DOWN".into()),
        ..UpdateNodeRequest::default()
    })
    .await
    .unwrap();
    let args = file_contents(&dir.path().join("new_suspend.args")).await;
    assert_eq!(args.trim(), "n1");
    assert!(!dir.path().join("old_suspend.args").exists());

    std::fs::write(&path, format!("{text}KillWait=never\n")).unwrap();
    let err = a.reconfigure(ReconfigureRequest {}).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
    let msg = err.message();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("KillWait"),
        "{msg}"
    );
    let shown = c
        .get_config(GetConfigRequest {})
        .await
        .unwrap()
        .into_inner();
    let value = |k: &str| {
        shown
            .entries
            .iter()
            .find(|e| e.name == k)
            .map(|e| e.value.clone())
    };
    assert_eq!(value("SuspendProgram"), Some(new.display().to_string()));
    assert_eq!(value("KillWait").as_deref(), Some("0 sec"));
    ctld.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_parameters_are_shown_and_reconfigured_live() {
    let (dir, state) = temp();
    let text = conf_text(&state, 1, "");
    let ctld = Ctld::start(conf(dir.path(), &text), None).await;
    let mut c = client(ctld.port, 0).await;
    let mut a = admin(ctld.port).await;
    let mut shown = async || {
        let reply = c
            .get_config(GetConfigRequest {})
            .await
            .unwrap()
            .into_inner();
        reply
            .entries
            .into_iter()
            .find(|e| e.name == "SchedulerParameters")
            .map(|e| e.value)
    };
    assert_eq!(shown().await.as_deref(), Some("(null)"));

    let params = "bf_window=60,bf_max_job_test=7";
    let path = dir.path().join("slurm.conf");
    std::fs::write(&path, format!("{text}SchedulerParameters={params}\n")).unwrap();
    a.reconfigure(ReconfigureRequest {}).await.unwrap();
    assert_eq!(shown().await.as_deref(), Some(params));

    // A bad value is refused naming file, line and key; the parameters in force stay.
    std::fs::write(&path, format!("{text}SchedulerParameters=bf_window=0\n")).unwrap();
    let err = a.reconfigure(ReconfigureRequest {}).await.unwrap_err();
    let msg = err.message();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("SchedulerParameters"),
        "{msg}"
    );
    assert_eq!(shown().await.as_deref(), Some(params));
    ctld.stop().await;
}
