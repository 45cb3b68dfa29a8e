//! A change `sacct` shows reaches the history: after `scontrol update TimeLimit=` or `JobName=`
//! the job's submission record goes out again, eligible time 0 (the dbd keeps the one it has).

use sluice_ctld::conf::TimeLimit;
use sluice_ctld::core::{AcctRecord, JobChange, JobRef, SubmitRequest, on_update_job};
use sluice_ctld::testkit::ClusterBuilder;

#[test]
fn a_new_time_limit_or_name_sends_the_submission_record_again() {
    let mut fx = ClusterBuilder::new()
        .nodes("n1", "CPUs=1")
        .partition("p", "Nodes=n1 Default=YES")
        .build();
    fx.register_all();
    let id = fx.submit(SubmitRequest::new(1000, "a")).unwrap();
    fx.out.take();
    let admin = fx.admin();
    let changes = [
        JobChange::TimeLimit(TimeLimit::Minutes(41)),
        JobChange::Name("renamed".into()),
    ];
    on_update_job(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        admin,
        JobRef::Job(id),
        &changes,
        &[],
    )
    .unwrap();
    let records = fx.out.take().acct;
    assert_eq!(records.len(), 1, "{records:?}");
    match &records[0] {
        AcctRecord::JobSubmitted {
            job,
            name,
            time_limit,
            eligible,
            ..
        } => {
            assert_eq!(*job, id);
            assert_eq!(name, "renamed");
            assert_eq!(*time_limit, TimeLimit::Minutes(41));
            assert_eq!(eligible.secs(), 0, "the dbd keeps its eligible time");
        }
        other => panic!("not a submission record: {other:?}"),
    }
}
