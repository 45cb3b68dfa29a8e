//! `sbatch --batch=features` on the pure core: the first node of the allocation with those
//! features runs the script (its batch host, the job's first node); the features must be
//! within the job's `--constraint`, or the submission is refused with Slurm's words.

use sluice_ctld::core::{PlaceOpts, SubmitRequest};
use sluice_ctld::error::CtldError;
use sluice_ctld::testkit::{ClusterBuilder, CoreFixture};

/// n1, n2 `knl`, n3 `knl,haswell`, n4 `haswell`; 4 CPUs each.
fn cluster() -> CoreFixture {
    let mut fx = ClusterBuilder::new()
        .nodes("n[1-2]", "CPUs=4 Features=knl")
        .nodes("n3", "CPUs=4 Features=knl,haswell")
        .nodes("n4", "CPUs=4 Features=haswell")
        .partition("debug", "Nodes=n[1-4] Default=YES MaxTime=60")
        .conf("SlurmdTimeout=0")
        .build();
    fx.register_all();
    fx
}

fn job(constraint: Option<&str>, batch: &str, nodes: u32) -> SubmitRequest {
    let mut req = SubmitRequest::new(1000, "b")
        .minutes(10)
        .nodes(nodes)
        .place(PlaceOpts {
            batch_features: Some(batch.to_string()),
            ..PlaceOpts::default()
        });
    req.constraint = constraint.map(String::from);
    req
}

fn batch_host(fx: &CoreFixture, id: sluice_vocab::FedJobId) -> String {
    let first = fx.core.job(id).unwrap().nodes[0];
    fx.core.nodes()[first.get() as usize].name.clone()
}

#[test]
fn the_batch_host_is_the_first_node_with_the_features() {
    let mut fx = cluster();
    // -N 3 -C "knl|haswell" --batch=haswell: n1, n2, n3 allocated, the script on n3.
    let a = fx.submit_and_schedule(job(Some("knl|haswell"), "haswell", 3));
    assert_eq!(fx.nodes_of(a), "n[1-3]");
    assert_eq!(batch_host(&fx, a), "n3");
    let held = fx.core.cpus_held(a, &fx.core.job(a).unwrap().nodes);
    assert_eq!(held, [4, 4, 4], "every node's share moves with it");
    fx.exit(a, 0).unwrap();
    // None of the nodes has them: the first node runs it.
    let b = fx.submit_and_schedule(job(Some("knl|haswell"), "haswell", 2));
    assert_eq!(fx.nodes_of(b), "n[1-2]");
    assert_eq!(batch_host(&fx, b), "n1");
}

#[test]
fn batch_features_outside_the_constraint_are_refused() {
    let mut fx = cluster();
    for (constraint, batch) in [
        (None, "knl"),
        (Some("knl"), "haswell"),
        (Some("knl"), "k n l"),
    ] {
        let e = fx.submit(job(constraint, batch, 1)).unwrap_err();
        assert!(
            matches!(e, CtldError::InvalidBatchFeatures { .. }),
            "{constraint:?} {batch}: {e:?}"
        );
        assert_eq!(
            e.to_string(),
            "Job --batch option is invalid or not a subset of --constraints"
        );
    }
    assert!(fx.submit(job(Some("knl&haswell"), "haswell", 1)).is_ok());
}
