//! `MessageTimeout` bounds every request a command makes: with the controller stopped
//! (SIGSTOP), squeue and sbatch give up after it with Slurm's socket timeout error and exit 1,
//! and the submission left in the stopped controller is never applied.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::common;
use common::cluster::Cluster;

/// Sends SIGCONT to the stopped process when dropped, so a failing test leaves no stopped
/// controller behind.
struct Stopped(Pid);

impl Stopped {
    fn new(pid: i32) -> Self {
        let pid = Pid::from_raw(pid);
        kill(pid, Signal::SIGSTOP).unwrap();
        Self(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

#[test]
fn commands_give_up_on_a_stopped_controller_after_message_timeout() {
    let c = Cluster::start_with(1, &["MessageTimeout=2"]);
    let stopped = Stopped::new(c.pid("ctld-cluster").expect("controller pid"));

    let out = c.cmd("squeue", &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "slurm_load_jobs error: Socket timed out on send/recv operation\n"
        ),
        "{out:?}"
    );
    let out = c.cmd("sbatch", &["--wrap", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n"
        ),
        "{out:?}"
    );

    // Resumed, the controller serves again, and the submission whose client gave up (it sat
    // in the stopped controller's socket past its deadline) is not applied: the only job is
    // the new one, and it took the first job id.
    drop(stopped);
    let job = c.sbatch(&["--wrap", "true"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    let all = c.ok("squeue", &["-h", "-t", "all", "-o", "%i"]);
    assert_eq!(all, format!("{job}\n"), "the timed-out submission ran");
    assert_eq!(job, 1);
}

#[test]
fn a_request_the_controller_takes_too_close_to_its_clients_deadline_is_refused_unapplied() {
    use sluice_cli::slurm_conf::SlurmConf;
    use sluice_wire::auth::{KEY_FILE, Key, Signer};
    use sluice_wire::proto::CancelRequest;
    use sluice_wire::proto::controller_client::ControllerClient;
    use std::time::Duration;

    let c = Cluster::start(1);
    let job = c.sbatch(&["--hold", "--wrap", "true"]);
    let conf = SlurmConf::read(&c.conf()).unwrap();
    let key = Key::load(&c.conf().parent().unwrap().join(KEY_FILE)).unwrap();
    let cancel = |waits: Duration| {
        let (host, port, key) = (conf.ctld_host.clone(), conf.ctld_port, key.clone());
        common::block_on(async move {
            let ch = sluice_wire::client::connect_bounded(&host, port, Signer::new(key, 0), waits)
                .await
                .unwrap();
            ControllerClient::new(ch)
                .cancel(CancelRequest {
                    job_ids: vec![job],
                    ..Default::default()
                })
                .await
        })
    };
    // A client that waits less than the controller needs to commit and answer (its requests
    // say so): the cancel is refused and not applied, as for a client that waited long
    // enough but whose request sat in a stopped controller.
    let late = cancel(Duration::from_millis(500))
        .expect("an answer")
        .into_inner();
    assert!(late.cancelled.is_empty(), "{late:?}");
    assert_eq!(
        late.errors
            .iter()
            .map(|e| e.message.as_str())
            .collect::<Vec<_>>(),
        ["the request reached the controller's core too late for its client's deadline"]
    );
    assert_eq!(c.state(&job.to_string()), "PENDING");
    cancel(Duration::from_secs(5)).expect("applied in time");
    assert_eq!(c.wait_done(job), "CANCELLED");
}

#[test]
fn a_change_the_accounting_daemon_takes_too_close_to_its_clients_deadline_is_not_made() {
    use sluice_cli::slurm_conf::SlurmConf;
    use sluice_wire::auth::{KEY_FILE, Key, Signer};
    use sluice_wire::proto::accounting_client::AccountingClient;
    use sluice_wire::proto::{AddQosRequest, ListQosRequest};
    use std::time::Duration;

    let c = Cluster::start(1);
    let conf = SlurmConf::read(&c.conf()).unwrap();
    let key = Key::load(&c.conf().parent().unwrap().join(KEY_FILE)).unwrap();
    let client = |waits: Duration| {
        let (host, port, key) = (conf.dbd_host.clone(), conf.dbd_port, key.clone());
        async move {
            let ch = sluice_wire::client::connect_bounded(&host, port, Signer::new(key, 0), waits)
                .await
                .unwrap();
            AccountingClient::new(ch)
        }
    };
    let add = |waits: Duration| {
        common::block_on(async {
            client(waits)
                .await
                .add_qos(AddQosRequest {
                    names: vec!["late".into()],
                    set: None,
                    commit: true,
                })
                .await
        })
    };
    let listed = || {
        common::block_on(async {
            let reply = client(Duration::from_secs(5))
                .await
                .list_qos(ListQosRequest::default())
                .await
                .unwrap();
            reply
                .into_inner()
                .qos
                .into_iter()
                .map(|q| q.name)
                .collect::<Vec<_>>()
        })
    };
    // A client waiting less than the daemon needs to answer (its requests say so), as one
    // whose request sat in a stopped daemon: refused, and the QOS is not added.
    let late = add(Duration::from_millis(500)).expect_err("refused");
    assert_eq!(late.code(), tonic::Code::DeadlineExceeded, "{late:?}");
    assert_eq!(listed(), ["normal"]);
    add(Duration::from_secs(5)).expect("made in time");
    assert_eq!(listed(), ["normal", "late"]);
}
