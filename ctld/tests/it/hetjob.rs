//! Heterogeneous jobs in the core, in simulated time: components start together on nodes of
//! their own or not at all (FIFO and backfill), end with the leader's script, are cancelled
//! and requeued together, and a follower's own time limit ends it alone.

use crate::core_support;

use core_support::{cluster, job};
use sluice_ctld::core::{
    Caller, CancelRequest, JobReason, JobRef, NodeCommand, NodeUpdate, SubmitRequest, on_cancel,
    on_node_update, on_submit_het, on_will_run, on_will_run_het,
};
use sluice_ctld::testkit::CoreFixture;
use sluice_vocab::{FedJobId, JobState};

/// Submits a heterogeneous job of `parts`; its component ids, leader first.
fn submit_het(fx: &mut CoreFixture, parts: Vec<SubmitRequest>) -> Vec<FedJobId> {
    on_submit_het(&mut fx.core, &mut fx.out, fx.now, parts)
        .expect("heterogeneous submission")
        .jobs
}

fn launches(fx: &CoreFixture) -> Vec<FedJobId> {
    fx.out.launched()
}

fn states(fx: &CoreFixture, ids: &[FedJobId]) -> Vec<JobState> {
    ids.iter().map(|&id| fx.state(id)).collect()
}

#[test]
fn components_get_the_following_ids_and_start_together_on_nodes_of_their_own() {
    let mut fx = cluster(4, "");
    let blocker = fx.submit_and_schedule(job("big").nodes(3).minutes(60));
    let het = submit_het(&mut fx, vec![job("h").ntasks(1), job("h").ntasks(2)]);
    assert_eq!(het[1].get(), het[0].get() + 1);
    fx.schedule();
    // One node is free, two are needed (components never share a node): neither starts.
    assert_eq!(states(&fx, &het), [JobState::Pending, JobState::Pending]);
    assert_eq!(fx.reason(het[0]), JobReason::Resources);
    assert_eq!(fx.reason(het[1]), JobReason::Resources);
    assert_eq!(launches(&fx), [blocker]);

    fx.exit(blocker, 0).unwrap();
    fx.schedule();
    assert_eq!(states(&fx, &het), [JobState::Running, JobState::Running]);
    let (a, b) = (fx.nodes_of(het[0]), fx.nodes_of(het[1]));
    assert_ne!(a, b, "each component on nodes of its own");
    // The leader alone runs the batch script; its launch carries every component's variables.
    assert_eq!(launches(&fx), [blocker, het[0]]);
    let env = fx.core.het_env(het[0]);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("SLURM_HET_SIZE"), Some("2"));
    assert_eq!(
        get("SLURM_JOB_ID_HET_GROUP_1"),
        Some(het[1].to_string().as_str())
    );
    assert_eq!(get("SLURM_JOB_NODELIST_HET_GROUP_0"), Some(a.as_str()));
    assert_eq!(get("SLURM_JOB_NODELIST_HET_GROUP_1"), Some(b.as_str()));
    assert_eq!(get("SLURM_NTASKS_HET_GROUP_1"), Some("2"));
    assert_eq!(get("SLURM_PACK_SIZE"), Some("2"));
}

#[test]
fn backfill_never_starts_part_of_a_heterogeneous_job() {
    let mut fx = cluster(4, "");
    let long = fx.submit_and_schedule(job("long").nodes(2).minutes(60));
    let het = submit_het(
        &mut fx,
        vec![job("h").minutes(30), job("h").minutes(30), job("h")],
    );
    let small = fx.submit(job("small").minutes(10)).unwrap();
    fx.schedule();
    // Two nodes are free for three components: the job waits whole, while a short job that
    // ends before its reservation is backfilled.
    assert_eq!(
        states(&fx, &het),
        [JobState::Pending, JobState::Pending, JobState::Pending]
    );
    assert_eq!(fx.state(small), JobState::Running);
    assert_eq!(launches(&fx), [long, small]);

    fx.exit(small, 0).unwrap();
    fx.exit(long, 0).unwrap();
    fx.schedule();
    assert_eq!(
        states(&fx, &het),
        [JobState::Running, JobState::Running, JobState::Running]
    );
}

#[test]
fn a_held_component_keeps_the_whole_job_waiting() {
    let mut fx = cluster(4, "");
    let het = submit_het(&mut fx, vec![job("h"), job("h").held()]);
    fx.schedule();
    assert_eq!(states(&fx, &het), [JobState::Pending, JobState::Pending]);
    assert_eq!(fx.reason(het[0]), JobReason::JobHeldUser);
    assert!(launches(&fx).is_empty());
}

#[test]
fn the_leaders_script_ends_every_component() {
    let mut fx = cluster(4, "");
    let het = submit_het(&mut fx, vec![job("h"), job("h").nodes(2)]);
    fx.schedule();
    fx.exit(het[0], 3).unwrap();
    assert_eq!(states(&fx, &het), [JobState::Failed, JobState::Failed]);
    assert_eq!(
        fx.core.job(het[1]).unwrap().exit_code,
        3,
        "the script's code"
    );
    assert!(fx.core.job_alloc(het[1]).is_none(), "its nodes are free");
    let follower_nodes = fx
        .out
        .node_cmds
        .iter()
        .any(|c| matches!(c, NodeCommand::Terminate { job, .. } if *job == het[1]));
    assert!(follower_nodes, "the follower's nodes are told to clean up");
}

#[test]
fn cancelling_the_leader_cancels_every_component_and_a_pending_follower_not_alone() {
    let mut fx = cluster(4, "");
    let user = Caller::user(1000);
    let pending = submit_het(&mut fx, vec![job("p").held(), job("p")]);
    let alone = CancelRequest {
        job: JobRef::Het(pending[0], 1),
        signal: None,
    };
    let err = on_cancel(&mut fx.core, &mut fx.out, fx.now, user, alone).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Operation not permitted on individual component of heterogeneous job"
    );
    fx.cancel(user, pending[0], None).unwrap();
    assert_eq!(
        states(&fx, &pending),
        [JobState::Cancelled, JobState::Cancelled]
    );

    let running = submit_het(&mut fx, vec![job("r"), job("r")]);
    fx.schedule();
    fx.cancel(user, running[0], None).unwrap();
    assert_eq!(
        states(&fx, &running),
        [JobState::Cancelled, JobState::Cancelled]
    );
}

#[test]
fn a_running_follower_cancelled_by_its_own_id_ends_alone() {
    let mut fx = cluster(4, "");
    let het = submit_het(&mut fx, vec![job("h"), job("h")]);
    fx.schedule();
    let req = CancelRequest {
        job: JobRef::Het(het[0], 1),
        signal: None,
    };
    on_cancel(&mut fx.core, &mut fx.out, fx.now, Caller::user(1000), req).unwrap();
    assert_eq!(states(&fx, &het), [JobState::Running, JobState::Cancelled]);
}

#[test]
fn a_followers_time_limit_ends_it_alone_and_the_leaders_ends_all() {
    let mut fx = cluster(4, "");
    let het = submit_het(&mut fx, vec![job("h").minutes(5), job("h").minutes(1)]);
    fx.schedule();
    fx.advance(61);
    fx.tick();
    assert_eq!(states(&fx, &het), [JobState::Running, JobState::Timeout]);
    fx.advance(240);
    fx.tick();
    assert_eq!(fx.state(het[0]), JobState::Timeout);
}

#[test]
fn a_failed_node_of_one_component_requeues_or_fails_the_whole_job() {
    for requeue in [true, false] {
        let mut fx = cluster(4, "");
        let second = if requeue {
            job("h")
        } else {
            job("h").no_requeue()
        };
        let first = if requeue {
            job("h")
        } else {
            job("h").no_requeue()
        };
        let het = submit_het(&mut fx, vec![first, second]);
        fx.schedule();
        let node = fx.nodes_of(het[1]);
        let down = NodeUpdate::Down {
            reason: "dead".into(),
        };
        on_node_update(
            &mut fx.core,
            &mut fx.out,
            fx.now,
            Caller::admin(),
            &node,
            down,
        )
        .unwrap();
        if requeue {
            assert_eq!(states(&fx, &het), [JobState::Pending, JobState::Pending]);
            assert!(het.iter().all(|&id| fx.core.job(id).unwrap().restarts == 1));
            // The leader's script is killed; once it reports, the job runs again whole.
            fx.exit(het[0], 0).unwrap();
            fx.advance(1);
            fx.schedule();
            assert_eq!(states(&fx, &het), [JobState::Running, JobState::Running]);
        } else {
            assert_eq!(states(&fx, &het), [JobState::NodeFail, JobState::NodeFail]);
        }
    }
}

#[test]
fn a_heterogeneous_array_is_refused_and_nothing_is_queued() {
    let mut fx = cluster(4, "");
    let err = on_submit_het(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        vec![job("h"), job("h").array("1-2")],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Invalid job array specification");
    let err = on_submit_het(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        vec![job("h"), job("h").partition("nope")],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Invalid partition name specified");
    assert_eq!(fx.core.job_count(), 0);
}

#[test]
fn test_only_estimates_each_component_alone_and_queues_nothing() {
    let mut fx = cluster(4, "");
    let blocker = fx.submit_and_schedule(job("big").nodes(3).minutes(60));
    let now = fx.now;
    // The first component fits on the free node now; the second needs two nodes, free when
    // the blocker's limit ends. Each is estimated on its own (as Slurm's will-run of a
    // heterogeneous job): the latest start, all their nodes, their CPUs summed.
    let (a, b) = (job("h").minutes(10), job("h").nodes(2).minutes(10));
    let alone_a = on_will_run(&mut fx.core, now, a.clone()).unwrap();
    let alone_b = on_will_run(&mut fx.core, now, b.clone()).unwrap();
    assert_eq!(alone_a.start, Some(now));
    let w = on_will_run_het(&mut fx.core, now, vec![a, b]).expect("an estimate");
    assert_eq!(w.start.map(|t| t.secs()), Some(now.secs() + 3600));
    assert_eq!(w.start, alone_b.start);
    let mut nodes = [alone_a.nodes, alone_b.nodes].concat();
    nodes.sort_unstable();
    nodes.dedup();
    assert_eq!(w.nodes, nodes);
    assert_eq!(
        w.nodes.len(),
        3,
        "the free node now, two at the blocker's end"
    );
    assert_eq!(w.cpus, alone_a.cpus + alone_b.cpus);
    assert_eq!(w.partition, "debug");
    assert_eq!(fx.core.job_count(), 1, "nothing queued");
    // A component no node could ever run refuses the whole test, as a submission would.
    let err = on_will_run_het(
        &mut fx.core,
        now,
        vec![job("h"), job("h").partition("nope")],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Invalid partition name specified");
    let err =
        on_will_run_het(&mut fx.core, now, vec![job("h"), job("h").array("1-2")]).unwrap_err();
    assert_eq!(err.to_string(), "Invalid job array specification");
    // No id was used up.
    let next = submit_het(&mut fx, vec![job("h"), job("h")]);
    assert_eq!(next[0].get(), blocker.get() + 1);
}
