//! The gang scheduling seed's examples, replayed in simulated time on its five-node cluster:
//! each `squeue` shown in the seed is checked line by line (job, state, TIME, nodes), at the
//! times the printed TIME values imply with a 30 s timeslicer started at the first tick.

use crate::gang_support;

use gang_support::{myload, run_to, seed_cluster, squeue};
use sluice_ctld::core::NodeCommand;

#[test]
fn a_simple_example_two_whole_cluster_jobs_swap_every_timeslice() {
    let mut fx = seed_cluster(3, &[]);
    run_to(&mut fx, 19);
    let j3 = myload(&mut fx, 5, None);
    run_to(&mut fx, 24);
    assert_eq!(squeue(&fx, &[j3]), ["3 R 0:05 n[12-16]"]);

    run_to(&mut fx, 32);
    let j4 = myload(&mut fx, 5, None);
    assert_eq!(
        squeue(&fx, &[j3, j4]),
        ["3 R 0:13 n[12-16]", "4 S 0:00 n[12-16]"]
    );
    // Job 4 was launched and stopped at once (its srun would retry until resumed).
    let cmds: Vec<&NodeCommand> = fx.out.node_cmds.iter().rev().take(2).collect();
    assert!(matches!(cmds[0], NodeCommand::Suspend { job, .. } if *job == j4));
    assert!(matches!(cmds[1], NodeCommand::LaunchBatch { job, .. } if *job == j4));

    run_to(&mut fx, 68);
    assert_eq!(
        squeue(&fx, &[j3, j4]),
        ["4 R 0:08 n[12-16]", "3 S 0:41 n[12-16]"]
    );
    run_to(&mut fx, 81);
    assert_eq!(
        squeue(&fx, &[j3, j4]),
        ["4 R 0:21 n[12-16]", "3 S 0:41 n[12-16]"]
    );
    run_to(&mut fx, 99);
    assert_eq!(
        squeue(&fx, &[j3, j4]),
        ["3 R 0:50 n[12-16]", "4 S 0:30 n[12-16]"]
    );
}

#[test]
fn job_10_runs_continually_while_9_and_11_are_timesliced() {
    let mut fx = seed_cluster(9, &[]);
    run_to(&mut fx, 19);
    let j9 = myload(&mut fx, 3, None);
    run_to(&mut fx, 22);
    let j10 = myload(&mut fx, 2, None);
    run_to(&mut fx, 30);
    let j11 = myload(&mut fx, 3, None);
    let all = [j9, j10, j11];
    assert_eq!(
        squeue(&fx, &all),
        [
            "9 R 0:11 n[12-14]",
            "10 R 0:08 n[15-16]",
            "11 S 0:00 n[12-14]"
        ]
    );
    run_to(&mut fx, 72);
    assert_eq!(
        squeue(&fx, &all),
        [
            "10 R 0:50 n[15-16]",
            "11 R 0:12 n[12-14]",
            "9 S 0:41 n[12-14]"
        ]
    );
    run_to(&mut fx, 86);
    assert_eq!(
        squeue(&fx, &all),
        [
            "10 R 1:04 n[15-16]",
            "11 R 0:26 n[12-14]",
            "9 S 0:41 n[12-14]"
        ]
    );
    run_to(&mut fx, 95);
    assert_eq!(
        squeue(&fx, &all),
        [
            "9 R 0:46 n[12-14]",
            "10 R 1:13 n[15-16]",
            "11 S 0:30 n[12-14]"
        ]
    );
    // Job 10 was never suspended.
    let suspended_10 = fx
        .out
        .node_cmds
        .iter()
        .any(|c| matches!(c, NodeCommand::Suspend { job, .. } if *job == j10));
    assert!(!suspended_10);
}

#[test]
fn local_backfilling_runs_job_14_beside_12_while_13_waits_its_turn() {
    let mut fx = seed_cluster(12, &[]);
    run_to(&mut fx, 1);
    let j12 = myload(&mut fx, 3, None);
    run_to(&mut fx, 7);
    let j13 = myload(&mut fx, 5, None);
    run_to(&mut fx, 9);
    let j14 = myload(&mut fx, 2, None);
    run_to(&mut fx, 15);
    assert_eq!(
        squeue(&fx, &[j12, j13, j14]),
        [
            "12 R 0:14 n[12-14]",
            "14 R 0:06 n[15-16]",
            "13 S 0:00 n[12-16]"
        ]
    );
    // At the next timeslice job 13 gets the whole cluster; the two others wait together.
    run_to(&mut fx, 31);
    assert_eq!(
        squeue(&fx, &[j12, j13, j14]),
        [
            "13 R 0:01 n[12-16]",
            "12 S 0:29 n[12-14]",
            "14 S 0:21 n[15-16]"
        ]
    );
    run_to(&mut fx, 61);
    assert_eq!(
        squeue(&fx, &[j12, j13, j14]),
        [
            "12 R 0:30 n[12-14]",
            "14 R 0:22 n[15-16]",
            "13 S 0:30 n[12-16]"
        ]
    );
}

/// Six `-n10 -N5` jobs (2 CPUs per node each) on 8-CPU nodes: `(first squeue, rotations)`.
fn six_jobs(first_id: u32, params: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut fx = seed_cluster(
        first_id,
        &[
            "SelectType=select/cons_res",
            &format!("SelectTypeParameters={params}"),
            "DefMemPerCPU=100",
        ],
    );
    run_to(&mut fx, 16);
    let mut ids = Vec::new();
    for at in [16, 17, 17, 18, 19, 19] {
        run_to(&mut fx, at);
        ids.push(myload(&mut fx, 5, Some(10)));
    }
    run_to(&mut fx, 25);
    let first = squeue(&fx, &ids);
    let mut later = Vec::new();
    for t in [31, 61, 91] {
        run_to(&mut fx, t);
        later.push(squeue(&fx, &ids));
    }
    (first, later)
}

fn states(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            format!("{} {}", f[0], f[1])
        })
        .collect()
}

#[test]
fn cr_core_timeslices_only_the_jobs_sharing_cores() {
    let (first, later) = six_jobs(44, "CR_CORE_MEMORY");
    assert_eq!(
        first,
        [
            "44 R 0:09 n[12-16]",
            "45 R 0:08 n[12-16]",
            "46 R 0:08 n[12-16]",
            "47 R 0:07 n[12-16]",
            "48 S 0:00 n[12-16]",
            "49 S 0:00 n[12-16]",
        ]
    );
    // Jobs 48 and 49 landed on the cores of 44 and 45: only those four take turns.
    assert_eq!(
        states(&later[0]),
        ["46 R", "47 R", "48 R", "49 R", "44 S", "45 S"]
    );
    assert_eq!(
        states(&later[1]),
        ["44 R", "45 R", "46 R", "47 R", "48 S", "49 S"]
    );
    assert_eq!(
        states(&later[2]),
        ["46 R", "47 R", "48 R", "49 R", "44 S", "45 S"]
    );
}

#[test]
fn cr_cpu_timeslices_all_six_jobs_over_the_counted_cpus() {
    let (first, later) = six_jobs(51, "CR_CPU_MEMORY");
    assert_eq!(
        states(&first),
        ["51 R", "52 R", "53 R", "54 R", "55 S", "56 S"]
    );
    assert_eq!(
        states(&later[0]),
        ["51 R", "52 R", "55 R", "56 R", "53 S", "54 S"]
    );
    assert_eq!(
        states(&later[1]),
        ["53 R", "54 R", "55 R", "56 R", "51 S", "52 S"]
    );
    assert_eq!(
        states(&later[2]),
        ["51 R", "52 R", "53 R", "54 R", "55 S", "56 S"]
    );
}
