//! `--oversubscribe`/`--exclusive` through the real service: what the wire carries reaches
//! the job, the job lists what it may share, and a value the controller does not know is
//! refused.

use crate::runtime_support;

use runtime_support::{Ctld, client, conf, conf_text, job, temp};
use sluice_wire::proto::{JobShare, ListJobsRequest, SubmitJobRequest};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_sharing_request_is_kept_and_listed() {
    let (dir, state) = temp();
    let extra = "PartitionName=forced Nodes=ALL OverSubscribe=FORCE:2\n";
    let ctld = Ctld::start(conf(dir.path(), &conf_text(&state, 1, extra)), None).await;
    let mut user = client(ctld.port, 4242).await;
    let mut ids = Vec::new();
    for (share, partition) in [
        (JobShare::Unset, None),
        (JobShare::Oversubscribe, None),
        (JobShare::Exclusive, None),
        (JobShare::Exclusive, Some("forced")),
    ] {
        let req = SubmitJobRequest {
            share: share.into(),
            partition: partition.map(String::from),
            ..job("j")
        };
        ids.push(user.submit(req).await.unwrap().into_inner().job_id);
    }
    let mut jobs = user
        .list_jobs(ListJobsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .jobs;
    jobs.sort_by_key(|j| j.job_id);
    let shown: Vec<(u32, &str)> = jobs
        .iter()
        .map(|j| (j.job_id, j.oversubscribe.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (ids[0], "OK"),
            (ids[1], "YES"),
            (ids[2], "NO"),
            (ids[3], "YES")
        ]
    );

    let bad = SubmitJobRequest {
        share: 7,
        ..job("bad")
    };
    let e = user.submit(bad).await.unwrap_err();
    assert_eq!(e.message(), "Invalid --exclusive specification");
    ctld.stop().await;
}
