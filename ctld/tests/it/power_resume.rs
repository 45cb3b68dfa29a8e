//! Cloud nodes in simulated time: a job allocated powered-down nodes waits in CONFIGURING
//! while they resume, launches once they registered; ResumeTimeout sets a node DOWN~ and
//! requeues its job; the resume file lists the jobs.

use crate::power_support;

use power_support::{cluster, powering_up, programs, register, status};
use sluice_ctld::core::{
    AcctRecord, CancelRequest, JobRef, NodeCommand, NodeEventKind, PowerCommand, PowerStatus,
    ResumeJob, SubmitRequest, on_cancel,
};
use sluice_vocab::JobState;

fn cloud_job(nodes: u32) -> SubmitRequest {
    SubmitRequest::new(1000, "burst")
        .partition("cloud")
        .nodes(nodes)
        .minutes(10)
}

#[test]
fn cloud_nodes_start_powered_down_and_usable() {
    let fx = cluster(&[]);
    let ec1 = fx.core.node("ec1").unwrap();
    assert_eq!(ec1.power.status, PowerStatus::Off);
    assert!(ec1.power.cloud && ec1.available());
    let tux1 = fx.core.node("tux1").unwrap();
    assert_eq!(tux1.power.status, PowerStatus::On);
    assert!(
        !tux1.available(),
        "a local node is usable only once registered"
    );
}

#[test]
fn a_job_waits_configuring_until_its_nodes_registered_then_launches() {
    let mut fx = cluster(&[]);
    let id = fx.submit(cloud_job(2)).unwrap();
    fx.tick();
    assert_eq!(fx.state(id), JobState::Running);
    assert_eq!(fx.nodes_of(id), "ec[1-2]");
    assert!(fx.core.job_configuring(id));
    assert!(
        fx.out.launched().is_empty(),
        "the launch waits for the nodes"
    );
    assert_eq!(programs(&fx), ["resume:ec[1-2]"]);
    let Some(PowerCommand::Resume { file, .. }) = fx.out.power_cmds.first() else {
        panic!("no resume");
    };
    assert_eq!(
        file.jobs,
        [ResumeJob {
            extra: None,
            features: None,
            job_id: id.get(),
            nodes_alloc: "ec[1-2]".into(),
            nodes_resume: "ec[1-2]".into(),
            oversubscribe: "OK".into(),
            partition: "cloud".into(),
            reservation: None,
        }]
    );
    assert_eq!(
        file.to_json(),
        format!(
            "{{\"all_nodes_resume\":\"ec[1-2]\",\"jobs\":[{{\"extra\":null,\"features\":null,\
             \"job_id\":{},\"nodes_alloc\":\"ec[1-2]\",\"nodes_resume\":\"ec[1-2]\",\
             \"oversubscribe\":\"OK\",\"partition\":\"cloud\",\"reservation\":null}}]}}",
            id.get()
        )
    );
    assert!(powering_up(&fx, "ec1") && powering_up(&fx, "ec2"));
    assert!(fx.out.acct.iter().any(|r| matches!(
        r,
        AcctRecord::NodeEvent { node, kind: NodeEventKind::PowerUp, .. } if node == "ec1"
    )));
    // A minute of boot does not count against the ten-minute limit.
    fx.advance(20);
    register(&mut fx, "ec1");
    assert!(fx.core.job_configuring(id), "ec2 is still booting");
    assert!(fx.out.launched().is_empty());
    fx.advance(20);
    register(&mut fx, "ec2");
    assert!(!fx.core.job_configuring(id));
    assert_eq!(fx.out.launched(), [id]);
    assert_eq!(fx.core.job(id).unwrap().start_time, Some(fx.now));
    assert_eq!(status(&fx, "ec2"), PowerStatus::On);
    fx.advance(590);
    fx.tick();
    assert_eq!(
        fx.state(id),
        JobState::Running,
        "the limit counts from the launch"
    );
    fx.advance(20);
    fx.tick();
    assert_eq!(fx.state(id), JobState::Timeout);
}

#[test]
fn resume_timeout_sets_the_node_down_powered_down_and_requeues_the_job() {
    let mut fx = cluster(&[]);
    let id = fx.submit(cloud_job(2)).unwrap();
    fx.tick();
    register(&mut fx, "ec1");
    fx.advance(59);
    fx.tick();
    assert!(powering_up(&fx, "ec2"), "not yet ResumeTimeout");
    fx.advance(1);
    fx.tick();
    let ec2 = fx.core.node("ec2").unwrap();
    assert_eq!(ec2.power.status, PowerStatus::Off);
    assert_eq!(ec2.state_name(), "DOWN");
    assert_eq!(ec2.reason.as_deref(), Some("ResumeTimeout reached"));
    assert!(programs(&fx).contains(&"resume_fail:ec2".to_string()));
    let job = fx.core.job(id).unwrap();
    assert_eq!(job.restarts, 1, "requeued");
    // The job runs again, elsewhere: ec2 is DOWN~.
    fx.tick();
    assert_eq!(fx.state(id), JobState::Running);
    assert!(!fx.nodes_of(id).contains("ec2"), "{}", fx.nodes_of(id));
    assert!(fx.core.job_configuring(id), "ec3 must boot");
    // An admin resume makes ec2 usable again, still powered down: idle~.
    let admin = fx.admin();
    sluice_ctld::core::on_node_update(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        "ec2",
        sluice_ctld::core::NodeUpdate::Resume,
    )
    .unwrap();
    let ec2 = fx.core.node("ec2").unwrap();
    assert_eq!(ec2.power.status, PowerStatus::Off);
    assert!(ec2.available());
}

#[test]
fn cancelling_a_configuring_job_frees_its_nodes_at_once() {
    let mut fx = cluster(&[]);
    let id = fx.submit(cloud_job(1)).unwrap();
    fx.tick();
    assert!(fx.core.job_configuring(id));
    let admin = fx.admin();
    let req = CancelRequest {
        job: JobRef::Job(id),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, admin, req).unwrap();
    assert_eq!(fx.state(id), JobState::Cancelled);
    assert!(!fx.core.job_configuring(id));
    let ec1 = fx.core.node("ec1").unwrap();
    assert!(
        ec1.job.is_none(),
        "nothing will report the exit of a job never launched"
    );
    // The node still boots; once up it is idle.
    register(&mut fx, "ec1");
    assert!(fx.out.launched().is_empty());
    assert_eq!(status(&fx, "ec1"), PowerStatus::On);
}

#[test]
fn resume_rate_spreads_resumes_and_the_file_follows() {
    let mut fx = cluster(&["ResumeRate=1"]);
    let id = fx.submit(cloud_job(3)).unwrap();
    fx.tick();
    assert_eq!(programs(&fx), ["resume:ec1"]);
    fx.advance(1);
    fx.tick();
    assert_eq!(programs(&fx).len(), 1, "one per minute");
    register(&mut fx, "ec1");
    fx.advance(59);
    fx.tick();
    assert_eq!(programs(&fx), ["resume:ec1", "resume:ec2"]);
    let Some(PowerCommand::Resume { file, .. }) = fx.out.power_cmds.last() else {
        panic!("no resume");
    };
    assert_eq!(file.jobs[0].nodes_alloc, "ec[1-3]");
    assert_eq!(file.jobs[0].nodes_resume, "ec2");
    assert!(fx.core.job_configuring(id));
    assert!(
        fx.out
            .node_cmds
            .iter()
            .all(|c| !matches!(c, NodeCommand::LaunchBatch { .. }))
    );
}
