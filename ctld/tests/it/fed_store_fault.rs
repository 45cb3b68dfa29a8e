//! A member whose state store fails (a full disk) while federation events arrive for it: the
//! events it could not save come again once the store works, so the job offered to it
//! meanwhile still runs there. (The event follower used to stop for good at the first batch it
//! could not commit, and the member never heard of a federated job again: found by the soak.)

use crate::fed_support;
use crate::runtime_support;

use fed_support::{Dbd, Member, next_launch};
use std::sync::atomic::Ordering;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn events_a_full_state_store_could_not_save_come_again_once_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let dbd = Dbd::start(dir.path(), &["a", "b"]).await;
    // `a` can run jobs but cannot save anything for now; `b`, the origin, has no node up.
    let (mut a, full) = Member::start_gated(dir.path(), "a", dbd.port, true).await;
    let b = Member::start(dir.path(), "b", dbd.port, false).await;
    b.wait_view("sibling known", |v| v.siblings.len() == 1)
        .await;
    full.store(true, Ordering::SeqCst);

    let id = b
        .try_submit(runtime_support::job("offered while full"))
        .await
        .unwrap();
    // The offer is in `a`'s event log; whatever `a` tried of it was not kept.
    dbd.wait_job(id, "offered to a", |j| j.active.contains(&"a".to_string()))
        .await;
    assert!(
        a.jobs(id).await.is_empty(),
        "a holds no copy it could not save"
    );

    full.store(false, Ordering::SeqCst);
    let (_, launched) = next_launch(&mut [&mut a]).await;
    assert_eq!(launched, id);
    dbd.wait_job(id, "started on a", |j| j.winner == "a").await;
}
