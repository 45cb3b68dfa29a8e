//! The fault suite's CI run: the `sluice soak` driver on one cluster of two node daemons, a
//! fixed seed and a bounded number of rounds. Jobs with known exit codes (some `afterok`
//! dependants, some with an `srun` step) stream in while the dbd, the controller and the node
//! daemons are killed with `kill -9` (and started again by `sluice up`) or held with SIGSTOP
//! past their peers' timeouts, and the controller's state directory (a small tmpfs) is
//! filled up for seconds, then freed. Every accepted job must end exactly once with its true exit
//! code and reach sacct, no submission refused to its client may run, no daemon may die on
//! its own. Before a node daemon is killed, a job whose `srun` step runs on its node is started
//! (the daemon restarts while the step runs; the job ends 0 only if srun gets the step's true
//! exit). `sluice soak --minutes N` runs the same driver longer with a random seed.

use crate::common;

use sluice_testkit::site::federation::{bin_dir, kill_jobs_of};
use sluice_testkit::site::ports::Reserved;
use sluice_tool::soak::{self, Budget, Site};

/// The seed of the CI run: its rounds kill (2 noded, 1 ctld, 1 dbd) and stop (1 of each)
/// every kind of daemon and fill the controller's state directory once (as root; see
/// `soak::driver::planned_faults`, which the test checks). The schedule depends on the seed
/// and on whether the state directory can be a tmpfs.
const SEED: u64 = 662;
/// Rounds of the CI run (about a minute of faults on a loaded 2-core host).
const ROUNDS: u32 = 14;

/// Stops the site's daemons and kills its jobs' processes, even when the test fails.
struct Down<'a>(&'a Site);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.down();
        self.0.release();
        for (_, conf, _) in &self.0.clusters {
            kill_jobs_of(conf);
        }
    }
}

#[test]
fn every_job_ends_once_with_its_true_exit_code_whatever_is_killed_or_stopped() {
    let _ = common::bin("sluice");
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut ports = Reserved::default();
    let site = Site::prepare(&tmp.path().join("site"), 1, 2, bin_dir(), &mut |n| {
        ports.take(n)
    })
    .expect("preparing the site");
    let _down = Down(&site);
    let planned: std::collections::BTreeSet<_> = soak::driver::planned_faults(&site, SEED, ROUNDS)
        .iter()
        .map(|f| f.kind())
        .collect();
    if site.state_tmpfs.is_empty() {
        eprintln!("SKIPPED in part: no disk-full fault (the state directory cannot be a tmpfs)");
    } else {
        assert_eq!(planned.len(), 7, "every kind of fault planned: {planned:?}");
    }
    let report = soak::soak(&site, SEED, Budget::Rounds(ROUNDS), &mut |line| {
        eprintln!("soak: {line}")
    })
    .unwrap_or_else(|e| panic!("the soak could not run: {e}"));
    let text = soak::render(&report);
    eprintln!("{text}");
    assert!(report.verdict.ok(), "violations:\n{text}");
    // The run did what it claims: jobs of every kind, faults of every kind.
    assert!(report.verdict.accepted >= 15, "{text}");
    let injected: std::collections::BTreeSet<_> = report.faults.keys().copied().collect();
    assert_eq!(
        injected, planned,
        "every kind of fault planned was injected:\n{text}"
    );
    // Every node daemon killed had an srun step running (its job ends 0 only when srun got
    // the step's true exit after the daemon came back).
    assert!(
        report.steps_cut >= 1,
        "a node daemon killed under a step:\n{text}"
    );
}
