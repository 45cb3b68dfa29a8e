//! The Rust API against the fake.

use smd::{Client, Endpoint, ErrorCode, EventKind, NodeState, SmdError};

use crate::fake::{Cluster, JOB};

#[test]
fn operations_and_events_through_the_rust_api() {
    let c = Cluster::start();
    let client = Client::connect(&Endpoint::from_slurm_conf(&c.conf).unwrap()).unwrap();
    let a = client.job_nodes(JOB).unwrap();
    assert_eq!(a.in_state(NodeState::Failed)[0].name, "n2");
    let mut sub = client.subscribe(JOB).unwrap();
    let first = sub.next_event().unwrap();
    assert_eq!((first.kind, first.node.as_str()), (EventKind::Failed, "n2"));
    let after = client.replace_node(JOB, "n2").unwrap();
    assert_eq!(after.node_list, "n[1,3]");
    let replaced = sub.next_event().unwrap();
    assert_eq!(
        (
            replaced.kind,
            replaced.replacement.as_str(),
            replaced.allocation.spares_used
        ),
        (EventKind::Replaced, "n3", 1)
    );
    assert_eq!(sub.next_event().unwrap().kind, EventKind::JobEnded);
    assert!(matches!(sub.next_event(), Err(SmdError::StreamEnded)));
    let e = client.replace_node(JOB, "n2").unwrap_err();
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (ErrorCode::Refused, "Failed to replace the node")
    );
    assert_eq!(
        client.job_nodes(7).unwrap_err().code(),
        ErrorCode::Permission
    );
    // Not faked: a controller that lacks the operation.
    assert_eq!(
        client.extend_time(JOB, 5).unwrap_err().code(),
        ErrorCode::NotEnabled
    );
}

#[test]
fn an_unreachable_controller_is_a_connect_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        format!("SlurmctldHost=127.0.0.1\nSlurmctldPort={port}\n"),
    )
    .unwrap();
    sluice_wire::auth::Key::create_if_missing(&dir.path().join(sluice_wire::auth::KEY_FILE))
        .unwrap();
    let e = Client::connect(&Endpoint::from_slurm_conf(&conf).unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Connect);
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
}

#[test]
fn a_client_is_shared_between_threads_and_a_subscription_moves_between_them() {
    fn shared<T: Send + Sync>() {}
    fn sent<T: Send>() {}
    shared::<Client>();
    sent::<smd::Subscription>();
    let c = Cluster::start();
    let client = Client::connect(&Endpoint::from_slurm_conf(&c.conf).unwrap()).unwrap();
    let mut sub = client.subscribe(JOB).unwrap();
    std::thread::scope(|s| {
        let watcher = s.spawn(move || {
            let mut kinds = Vec::new();
            while let Ok(e) = sub.next_event() {
                kinds.push(e.kind);
            }
            kinds
        });
        // The replacement is made from this thread while the watcher reads its stream.
        let after = client.replace_node(JOB, "n2").unwrap();
        assert_eq!(after.node_list, "n[1,3]");
        let kinds = watcher.join().unwrap();
        assert_eq!(
            kinds,
            [EventKind::Failed, EventKind::Replaced, EventKind::JobEnded]
        );
    });
}
