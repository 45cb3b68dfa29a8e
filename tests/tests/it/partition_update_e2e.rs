//! `scontrol update PartitionName=debug State=...` on a real local cluster: what sbatch,
//! squeue, sinfo and `scontrol show partition` then show, that the state survives a
//! controller restart, and that `scontrol reconfigure` puts back slurm.conf's.

use crate::common;

use common::cluster::Cluster;

fn avail(c: &Cluster) -> String {
    c.ok("sinfo", &["-h", "-o", "%a", "-p", "debug"])
        .trim()
        .to_string()
}

fn shown_state(c: &Cluster) -> String {
    let out = c.ok("scontrol", &["show", "partition", "debug"]);
    out.split_whitespace()
        .find_map(|w| w.strip_prefix("State="))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn partition_states_queue_refuse_show_and_survive_a_restart() {
    let c = Cluster::start(1);
    c.ok("scontrol", &["update", "PartitionName=debug", "State=DOWN"]);
    assert_eq!(avail(&c), "down");
    assert_eq!(shown_state(&c), "DOWN");
    // DOWN: jobs queue but do not start.
    let job = c.sbatch(&["--wrap", "true"]);
    c.wait_for("PartitionDown reason", || {
        c.ok("squeue", &["-h", "-o", "%r", "-j", &job.to_string()])
            .trim()
            == "PartitionDown"
    });
    // DRAIN and INACTIVE: submissions are refused.
    for state in ["DRAIN", "INACTIVE"] {
        c.ok(
            "scontrol",
            &["update", "PartitionName=debug", &format!("State={state}")],
        );
        assert_eq!(shown_state(&c), state);
        let out = c.cmd("sbatch", &["--wrap", "true"]);
        assert_ne!(out.code, 0, "{out:?}");
        assert!(
            out.stderr.contains(
                "sbatch: error: Batch job submission failed: Required partition not available (inactive or drain)"
            ),
            "{out:?}"
        );
    }
    assert_eq!(avail(&c), "inact");
    // A bad state is refused by scontrol itself.
    let out = c.cmd("scontrol", &["update", "PartitionName=debug", "State=busy"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Invalid input: State=busy"), "{out:?}");

    // The state survives a controller restart.
    c.ok(
        "scontrol",
        &["update", "PartitionName=debug", "State=DRAIN"],
    );
    c.kill9_ctld();
    c.up();
    assert_eq!(shown_state(&c), "DRAIN");
    assert_eq!(avail(&c), "drain");
    // A reconfigure puts back slurm.conf's state (UP), and that is what a restart keeps.
    c.ok("scontrol", &["reconfigure"]);
    assert_eq!(shown_state(&c), "UP");
    assert_eq!(c.wait_done(job), "COMPLETED");
    c.kill9_ctld();
    c.up();
    assert_eq!(shown_state(&c), "UP");
}
