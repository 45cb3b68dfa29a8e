//! The priority keys and the partitions' priority keys.

use super::*;

fn parse(text: &str) -> Result<(CtldConf, Vec<ConfWarning>), ConfError> {
    CtldConf::parse(Path::new("slurm.conf"), text)
}

const BASE: &str = "ClusterName=a\nSlurmctldHost=ctl\nNodeName=n1\n";

#[test]
fn defaults_are_slurms() {
    let (c, w) = parse(BASE).unwrap();
    assert!(w.is_empty(), "{w:?}");
    let p = &c.priority;
    assert_eq!(p.kind, PriorityType::Basic);
    assert_eq!(
        (p.max_age_secs, p.decay_half_life_secs),
        (7 * 86_400, 7 * 86_400)
    );
    assert_eq!((p.calc_period_secs, p.usage_reset), (300, UsageReset::None));
    assert!(!p.favor_small && !p.accrue_always);
    assert_eq!(p.fairshare_algorithm, crate::fairshare::Algorithm::FairTree);
}

#[test]
fn every_key_is_read() {
    let (c, w) = parse(&format!(
        "{BASE}PriorityType=priority/multifactor\nPriorityWeightAge=1000\n\
         PriorityWeightFairshare=10000\nPriorityWeightJobSize=10\nPriorityWeightPartition=100\n\
         PriorityWeightQOS=5\nPriorityMaxAge=1-0\nPriorityDecayHalfLife=0\n\
         PriorityCalcPeriod=0:30\nPriorityFavorSmall=YES\nPriorityUsageResetPeriod=WEEKLY\n\
         PriorityFlags=ACCRUE_ALWAYS,NO_FAIR_TREE,MAX_TRES\n\
         PriorityWeightTRES=CPU=1000,Mem=20,gres/gpu=5,node=3\n\
         PartitionName=p Nodes=ALL PriorityJobFactor=7 PriorityTier=3\n"
    ))
    .unwrap();
    let p = &c.priority;
    assert_eq!(p.kind, PriorityType::Multifactor);
    assert_eq!(
        (
            p.weight_age,
            p.weight_fairshare,
            p.weight_job_size,
            p.weight_partition,
            p.weight_qos
        ),
        (1000, 10_000, 10, 100, 5)
    );
    assert_eq!(
        (p.max_age_secs, p.decay_half_life_secs, p.calc_period_secs),
        (86_400, 0, 30)
    );
    assert!(p.favor_small && p.accrue_always);
    assert_eq!(p.fairshare_algorithm, crate::fairshare::Algorithm::Classic);
    assert_eq!(p.usage_reset, UsageReset::Weekly);
    let part = &c.partitions[0];
    assert_eq!((part.priority_job_factor, part.priority_tier), (7, 3));
    // Read but not implemented: said so, by key.
    let keys: Vec<&str> = w.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        ["PriorityFlags=MAX_TRES", "PriorityWeightTRES=gres/gpu"]
    );
    assert_eq!(
        p.weight_tres,
        [
            (TresKind::Cpu, 1000),
            (TresKind::Mem, 20),
            (TresKind::Node, 3)
        ]
    );
    assert!(
        w.iter()
            .all(|w| w.note == Some("not implemented by Sluice"))
    );
}

#[test]
fn bad_values_name_the_key() {
    for line in [
        "PriorityType=priority/fancy",
        "PriorityWeightAge=-1",
        "PriorityMaxAge=soon",
        "PriorityFavorSmall=maybe",
        "PriorityUsageResetPeriod=HOURLY",
        "PriorityFlags=NOT_A_FLAG",
        "PriorityWeightTRES=cpu",
        "PriorityWeightTRES=cpu=lots",
    ] {
        let e = parse(&format!("{BASE}{line}\n")).unwrap_err().to_string();
        let key = line.split('=').next().unwrap();
        assert!(e.contains(key), "{line}: {e}");
    }
}
