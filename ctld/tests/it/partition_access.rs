//! Who may use a partition and who sees what, in simulated time: `AllowGroups` (root and the
//! SlurmUser exempt), `AllowAccounts`/`DenyAccounts` refused at submission with
//! `EnforcePartLimits` or pending `InvalidAccount` without it, applied again by
//! `scontrol reconfigure`, and `PrivateData=jobs,nodes,partitions`.

use sluice_ctld::conf::CtldConf;
use sluice_ctld::core::private::{may_list, sees_job};
use sluice_ctld::core::{
    Caller, JobChange, JobReason, JobRef, SubmitRequest, on_reconfigure, on_update_job,
};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};
use sluice_vocab::JobState;
use sluice_vocab::private_data::Private;
use std::path::Path;

/// One 4-CPU node in `open` (default) and in `phys` with `rules`; `top` lines first.
fn cluster(top: &str, rules: &str) -> ClusterBuilder {
    ClusterBuilder::new()
        .conf("SlurmdTimeout=0")
        .conf(top)
        .nodes("n1", "CPUs=4")
        .partition("open", "Nodes=n1 Default=YES")
        .partition("phys", &format!("Nodes=n1 {rules}"))
}

fn built(top: &str, rules: &str) -> CoreFixture {
    let mut fx = cluster(top, rules).build();
    fx.register_all();
    fx
}

/// A job of uid 1000 charged to `account` ("" = none known) in partition `part`.
fn job(part: &str, account: &str) -> SubmitRequest {
    let mut r = SubmitRequest::new(1000, "a").partition(part);
    r.launch.account = account.to_string();
    r
}

fn refused(fx: &mut CoreFixture, r: SubmitRequest) -> String {
    fx.submit(r).unwrap_err().to_string()
}

const INVALID_ACCOUNT: &str = "Invalid account or account/partition combination specified";

#[test]
fn allow_groups_does_not_apply_to_root_and_the_slurm_user() {
    let mut fx = built("", "AllowGroups=g77");
    assert_eq!(
        refused(&mut fx, job("phys", "")),
        "User's group not permitted to use this partition"
    );
    let mut root = job("phys", "");
    root.root_or_slurm_user = true;
    assert!(fx.submit(root).is_ok());
    let mut member = job("phys", "");
    member.groups.push(77);
    assert!(fx.submit(member).is_ok());
}

#[test]
fn root_only_partitions_refuse_other_users() {
    let mut fx = built("", "RootOnly=YES");
    assert_eq!(
        refused(&mut fx, job("phys", "")),
        "Access/permission denied"
    );
    let mut root = job("phys", "");
    root.root_or_slurm_user = true;
    assert!(fx.submit(root).is_ok());
}

#[test]
fn allow_and_deny_accounts_refuse_at_submission_with_enforce_part_limits() {
    let mut fx = built("EnforcePartLimits=ALL", "AllowAccounts=phys,chem");
    assert_eq!(refused(&mut fx, job("phys", "bio")), INVALID_ACCOUNT);
    assert_eq!(
        refused(&mut fx, job("phys", "")),
        INVALID_ACCOUNT,
        "no account known: AllowAccounts refuses"
    );
    assert!(fx.submit(job("phys", "chem")).is_ok());
    assert!(fx.submit(job("open", "bio")).is_ok());
    let mut fx = built("EnforcePartLimits=ALL", "DenyAccounts=bio");
    assert_eq!(refused(&mut fx, job("phys", "bio")), INVALID_ACCOUNT);
    assert!(fx.submit(job("phys", "chem")).is_ok());
    assert!(
        fx.submit(job("phys", "")).is_ok(),
        "unknown account passes a deny list"
    );
}

#[test]
fn without_enforce_the_job_pends_invalid_account_until_a_reconfigure_allows_it() {
    let mut fx = built("", "AllowAccounts=chem");
    let id = fx.submit(job("phys", "bio")).unwrap();
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Pending);
    assert_eq!(fx.reason(id), JobReason::InvalidAccount);
    let (conf, _) = CtldConf::parse(
        Path::new("slurm.conf"),
        &cluster("", "AllowAccounts=chem,bio").text(),
    )
    .unwrap();
    on_reconfigure(&mut fx.core, Caller::admin(), conf, &|_| None).unwrap();
    assert_eq!(
        fx.core.partitions()[1].access.allow_accounts.as_deref(),
        Some(&["chem".to_string(), "bio".to_string()][..])
    );
    fx.schedule();
    assert_eq!(fx.state(id), JobState::Running);
}

#[test]
fn moving_a_job_to_a_partition_its_account_may_not_use_is_refused() {
    let mut fx = built("", "DenyAccounts=bio");
    let id = fx.submit(job("open", "bio")).unwrap();
    let err = on_update_job(
        &mut fx.core,
        &mut fx.out,
        fx.now,
        Caller::user(1000),
        JobRef::Job(id),
        &[JobChange::Partition("phys".into())],
        &[1000],
    )
    .unwrap_err();
    assert!(matches!(err, CtldError::InvalidAccount { .. }), "{err}");
}

#[test]
fn private_data_hides_other_users_jobs_nodes_and_partitions() {
    let mut fx = built("PrivateData=jobs,nodes,partitions", "");
    let mine = fx.submit(job("open", "")).unwrap();
    let theirs = fx.submit(SubmitRequest::new(2000, "b")).unwrap();
    let me = Caller::user(1000);
    let job = |id| fx.core.job(id).unwrap();
    assert!(sees_job(&fx.core, me, job(mine)));
    assert!(!sees_job(&fx.core, me, job(theirs)));
    let operator = Caller {
        operator: true,
        ..me
    };
    assert!(sees_job(&fx.core, operator, job(theirs)));
    assert!(sees_job(&fx.core, Caller::admin(), job(theirs)));
    for kind in [Private::Nodes, Private::Partitions] {
        let err = may_list(&fx.core, me, kind).unwrap_err();
        assert_eq!(err.to_string(), "Access/permission denied");
        assert!(may_list(&fx.core, operator, kind).is_ok());
    }
    let open = built("", "");
    assert!(may_list(&open.core, me, Private::Nodes).is_ok());
}

#[test]
fn without_private_data_everyone_sees_every_job() {
    let mut fx = built("", "");
    let theirs = fx.submit(SubmitRequest::new(2000, "b")).unwrap();
    assert!(sees_job(
        &fx.core,
        Caller::user(1000),
        fx.core.job(theirs).unwrap()
    ));
}
