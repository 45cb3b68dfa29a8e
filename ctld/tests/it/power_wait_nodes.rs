//! When a batch script starts on nodes that must boot (simulated time): as soon as its batch
//! host is up (Slurm's default, `--wait-all-nodes=0`), or only once every node is
//! (`--wait-all-nodes=1`, `SchedulerParameters=sbatch_wait_nodes`, or cloud nodes booting for
//! it). Either way the job stays CONFIGURING, and its time limit counts, from when the last
//! node is up; steps wait for it.

use crate::power_support;

use power_support::{cluster, register, register_local, status};
use sluice_ctld::core::{
    CancelRequest, JobRef, PlaceOpts, PowerRequest, PowerStatus, StepRequest, SubmitRequest,
    on_cancel, on_node_power, on_step_create,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::JobState;

/// A job on `tux1` (up) and `second`, `-w tux1,<second>`, in partition `both`.
fn job_on(second: &str, wait_all: Option<bool>) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, "mixed")
        .nodes(2)
        .minutes(10)
        .place(PlaceOpts {
            nodelist: vec!["tux1".into(), second.into()],
            wait_all_nodes: wait_all,
            ..PlaceOpts::default()
        });
    req.partition = Some("both".into());
    req
}

/// tux2, an ordinary node, powered down by an administrator.
fn mixed_job(wait_all: Option<bool>) -> SubmitRequest {
    job_on("tux2", wait_all)
}

/// Local nodes up but tux2, powered down (not a cloud node); partition `both` of tux1,
/// tux2 and ec1.
fn fixture(extra: &[&str]) -> CoreFixture {
    let mut lines = vec!["PartitionName=both Nodes=tux[1-2],ec1"];
    lines.extend_from_slice(extra);
    let mut fx = cluster(&lines);
    register_local(&mut fx);
    let admin = fx.admin();
    on_node_power(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        "tux2",
        PowerRequest::Down,
    )
    .unwrap();
    fx.tick();
    fx.advance(31);
    fx.tick();
    assert_eq!(status(&fx, "tux2"), PowerStatus::Off);
    fx.out.take();
    fx
}

#[test]
fn by_default_the_script_starts_once_its_batch_host_is_up() {
    let mut fx = fixture(&[]);
    let id = fx.submit(mixed_job(None)).unwrap();
    fx.tick();
    let job = fx.core.job(id).unwrap();
    let names: Vec<&str> = job
        .nodes
        .iter()
        .map(|&n| fx.core.nodes()[n.get() as usize].name.as_str())
        .collect();
    assert_eq!(names, ["tux1", "tux2"], "tux1 is the batch host");
    assert!(fx.core.job_configuring(id), "tux2 boots");
    assert_eq!(fx.out.launched(), [id], "tux1, its batch host, is up");
    // Its steps wait for tux2 (srun retries while the nodes are busy).
    let (now, admin) = (fx.now, fx.admin());
    let step = on_step_create(&mut fx.core, &mut fx.out, now, admin, StepRequest::new(id));
    assert!(matches!(step, Err(CtldError::NodesBusy)), "{step:?}");
    fx.advance(30);
    register(&mut fx, "tux2");
    assert!(!fx.core.job_configuring(id));
    assert_eq!(fx.out.launched(), [id], "launched once");
    assert_eq!(fx.core.job(id).unwrap().start_time, Some(fx.now));
    let (now, admin) = (fx.now, fx.admin());
    assert!(on_step_create(&mut fx.core, &mut fx.out, now, admin, StepRequest::new(id)).is_ok());
}

#[test]
fn wait_all_nodes_or_sbatch_wait_nodes_hold_the_script_for_every_node() {
    for (extra, wait) in [
        (&[][..], Some(true)),
        (&["SchedulerParameters=sbatch_wait_nodes"][..], None),
    ] {
        let mut fx = fixture(extra);
        let id = fx.submit(mixed_job(wait)).unwrap();
        fx.tick();
        assert!(fx.core.job_configuring(id));
        assert!(fx.out.launched().is_empty(), "{extra:?} {wait:?}");
        register(&mut fx, "tux2");
        assert_eq!(fx.out.launched(), [id]);
    }
    // --wait-all-nodes=0 overrides sbatch_wait_nodes.
    let mut fx = fixture(&["SchedulerParameters=sbatch_wait_nodes"]);
    let id = fx.submit(mixed_job(Some(false))).unwrap();
    fx.tick();
    assert_eq!(fx.out.launched(), [id]);
}

#[test]
fn a_script_started_early_is_not_freed_before_its_host_reports_its_end() {
    let mut fx = fixture(&[]);
    let id = fx.submit(mixed_job(None)).unwrap();
    fx.tick();
    assert_eq!(fx.out.launched(), [id]);
    let admin = fx.admin();
    let req = CancelRequest {
        job: JobRef::Job(id),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, admin, req).unwrap();
    let job = fx.core.job(id).unwrap();
    assert_eq!(job.state, JobState::Cancelled);
    assert!(job.completing, "the script on tux1 still has to end");
    fx.exit(id, 0).unwrap();
    assert!(!fx.core.job(id).unwrap().completing);
}

#[test]
fn cloud_nodes_booting_for_the_job_hold_the_script_whatever_it_asked() {
    let mut fx = fixture(&[]);
    let id = fx.submit(job_on("ec1", Some(false))).unwrap();
    fx.tick();
    assert!(fx.core.job_configuring(id));
    assert!(fx.out.launched().is_empty(), "ec1 is a cloud node");
    register(&mut fx, "ec1");
    assert_eq!(fx.out.launched(), [id]);
}

#[test]
fn salloc_is_granted_at_once_unless_it_waits_for_every_node() {
    // salloc without --wait-all-nodes: granted while tux2 boots; its steps wait.
    let mut fx = fixture(&[]);
    let mut req = mixed_job(None);
    req.launch.interactive = true;
    let id = fx.submit(req).unwrap();
    fx.tick();
    assert!(fx.core.job_configuring(id));
    assert!(fx.core.allocation_ready(id));
    let (now, admin) = (fx.now, fx.admin());
    let step = on_step_create(&mut fx.core, &mut fx.out, now, admin, StepRequest::new(id));
    assert!(matches!(step, Err(CtldError::NodesBusy)), "{step:?}");
    // srun (which always asks to wait), salloc --wait-all-nodes=1, salloc_wait_nodes, and
    // cloud nodes booting: granted once every node is up.
    for (extra, wait, second) in [
        (&[][..], Some(true), "tux2"),
        (&["SchedulerParameters=salloc_wait_nodes"][..], None, "tux2"),
        (&[][..], Some(false), "ec1"),
    ] {
        let mut fx = fixture(extra);
        let mut req = job_on(second, wait);
        req.launch.interactive = true;
        let id = fx.submit(req).unwrap();
        fx.tick();
        assert!(!fx.core.allocation_ready(id), "{extra:?} {wait:?} {second}");
        register(&mut fx, second);
        assert!(fx.core.allocation_ready(id));
    }
}
