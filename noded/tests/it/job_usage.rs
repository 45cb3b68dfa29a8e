//! Job accounting by a real node daemon: a batch job's exit report and an srun step's last
//! message carry what the processes used.

use crate::common;
use sluice_wire::jobacct::StepUsageWire;

use common::*;
use sluice_vocab::jobacct::{StepUsage, TRES_CPU, TRES_MEM};
use sluice_wire::auth::Key;
use sluice_wire::proto::RunStepRequest;

const NODE: &str = "NodeName=n1 NodeAddr=127.0.0.1 Port=0 CPUs=4";
/// Burns CPU in a child the script waits for, then exits at once.
const BURN: &str = "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'";

async fn setup(extra: &str) -> (TestCluster, FakeCtld, RunningNoded) {
    let ctld = FakeCtld::start(&Key::from_bytes(vec![42; 64]), 0, Vec::new()).await;
    let cluster = TestCluster::new(ctld.port, &format!("{extra}\n{NODE}"));
    let noded = cluster.start_noded("n1").await;
    (cluster, ctld, noded)
}

#[tokio::test]
async fn a_cpu_burning_batch_job_reports_its_cpu_time_and_memory() {
    let (cluster, ctld, noded) = setup("").await;
    let work = cluster.workdir("u1");
    let script = format!("#!/bin/sh\n{BURN}\n");
    noded
        .client()
        .await
        .launch_batch(launch_request(301, &work, &script))
        .await
        .unwrap();
    let exit = ctld.exit_of(301).await;
    assert_eq!((exit.exit_code, exit.signal), (0, 0));
    let usage = StepUsage::from_proto(exit.usage.as_ref().expect("usage measured")).unwrap();
    assert_eq!(usage.tasks, 1);
    assert!(
        usage.total_cpu_ms() >= 100,
        "the burnt CPU is counted: {usage:?}"
    );
    let rss = usage.usage_in.max.get(TRES_MEM).unwrap();
    assert!(
        (64 * 1024..1 << 30).contains(&rss),
        "a shell's resident size: {rss}"
    );
    assert_eq!(usage.usage_in.max_task.get(TRES_MEM), Some(0));
    assert_eq!(usage.usage_in.tot.get(TRES_CPU), Some(usage.total_cpu_ms()));
    noded.stop().await;
}

#[tokio::test]
async fn with_gathering_off_no_usage_is_reported() {
    let (cluster, ctld, noded) = setup("JobAcctGatherType=jobacct_gather/none").await;
    let work = cluster.workdir("u2");
    noded
        .client()
        .await
        .launch_batch(launch_request(302, &work, "#!/bin/sh\ntrue\n"))
        .await
        .unwrap();
    assert_eq!(ctld.exit_of(302).await.usage, None);
    noded.stop().await;
}

#[tokio::test]
async fn a_steps_last_message_carries_its_tasks_usage_on_this_node() {
    let (cluster, _ctld, noded) = setup("JobAcctGatherFrequency=task=1").await;
    let work = cluster.workdir("u3");
    let req = RunStepRequest {
        job_id: 303,
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
        argv: vec!["sh".into(), "-c".into(), BURN.into()],
        workdir: work.display().to_string(),
        node_list: "n[0-1]".into(),
        node_count: 2,
        node_index: 1,
        ntasks: 3,
        first_task: 1,
        tasks_here: 2,
        name: "burn".into(),
        ..Default::default()
    };
    let mut stream = noded
        .client()
        .await
        .run_step(req)
        .await
        .unwrap()
        .into_inner();
    let mut last = None;
    while let Some(msg) = tokio::time::timeout(DEADLINE, stream.message())
        .await
        .expect("step messages in time")
        .unwrap()
    {
        if !msg.exits.is_empty() {
            last = Some(msg);
        }
    }
    let last = last.expect("the last message");
    let usage = StepUsage::from_proto(last.usage.as_ref().expect("usage measured")).unwrap();
    assert_eq!(usage.tasks, 2);
    let cpu_max_task = usage.usage_in.max_task.get(TRES_CPU).unwrap();
    assert!([1, 2].contains(&cpu_max_task), "a rank of this node");
    assert_eq!(usage.usage_in.max_node.get(TRES_CPU), Some(1));
    assert!(
        usage.usage_in.min.get(TRES_CPU).unwrap() >= 100,
        "{usage:?}"
    );
    noded.stop().await;
}
