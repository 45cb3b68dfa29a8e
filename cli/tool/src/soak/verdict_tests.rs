use super::*;

fn ledger() -> Ledger {
    let mut l = Ledger::default();
    l.accepted.insert(1, (0, 0));
    l.accepted.insert(2, (1, 3));
    l.refused.insert(2, "timed out".into());
    l
}

fn runs(list: &[(u32, &[u32])]) -> BTreeMap<u32, Vec<u32>> {
    list.iter().map(|(s, ids)| (*s, ids.to_vec())).collect()
}

#[test]
fn true_outcomes_and_requeued_runs_pass() {
    let records = parse_records(
        "1|soak-0|NODE_FAIL|0:0\n1|soak-0|COMPLETED|0:0\n2|soak-1|FAILED|3:0\nbad line\n",
    );
    let v = judge(&ledger(), &records, &[], &runs(&[(0, &[1, 1]), (1, &[2])]));
    assert!(v.ok(), "{v}");
    assert_eq!((v.accepted, v.refused, v.requeues), (2, 1, 1));
}

#[test]
fn lost_duplicated_wrong_and_twice_run_jobs_are_named() {
    let records =
        parse_records("1|soak-0|COMPLETED|0:0\n1|soak-0|COMPLETED|0:0\n2|soak-1|FAILED|1:0\n");
    let v = judge(&ledger(), &records, &[], &runs(&[(1, &[2, 2])]));
    assert_eq!(v.duplicated.len(), 1);
    assert_eq!(v.wrong, [(2, "FAILED|3:0".into(), "FAILED|1:0".into())]);
    assert_eq!(v.ran_twice, [(2, 2, 1)]);
    assert!(!v.ok());

    let v = judge(
        &ledger(),
        &[],
        &["1|soak-0|PENDING|None".into()],
        &runs(&[]),
    );
    assert_eq!(v.lost.len(), 2);
    assert!(v.lost[0].1.contains("PENDING"), "{v}");
}

#[test]
fn a_final_node_fail_or_pending_is_not_an_outcome() {
    let records = parse_records("1|soak-0|NODE_FAIL|0:0\n2|soak-1|FAILED|3:0\n");
    let v = judge(&ledger(), &records, &[], &runs(&[]));
    assert_eq!(v.lost.len(), 1, "{v}");
    // Nor is a job still pending (an `afterok` dependant whose target's end was forgotten).
    let records = parse_records("1|soak-0|PENDING|0:0\n2|soak-1|FAILED|3:0\n");
    let v = judge(&ledger(), &records, &[], &runs(&[]));
    assert_eq!(v.lost.len(), 1, "{v}");
    assert!(v.lost[0].1.contains("PENDING"), "{v}");
}

#[test]
fn a_refused_job_that_shows_up_anywhere_is_a_ghost() {
    let clean = judge(&ledger(), &[], &[], &runs(&[]));
    assert!(clean.ghosts.is_empty());
    let in_sacct = parse_records("9|soak-2|COMPLETED|0:0\n");
    assert_eq!(
        judge(&ledger(), &in_sacct, &[], &runs(&[])).ghosts,
        [(2, "timed out".into())]
    );
    let queued = ["9|soak-2|PENDING|None".to_string()];
    assert_eq!(
        judge(&ledger(), &[], &queued, &runs(&[])).ghosts,
        [(2, "timed out".into())]
    );
    assert_eq!(
        judge(&ledger(), &[], &[], &runs(&[(2, &[9])])).ghosts,
        [(2, "timed out".into())]
    );
}
