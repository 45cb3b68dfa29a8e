use super::*;

#[test]
fn tres_lists_parse_with_units_and_clear_with_minus_one() {
    let edit = parse_edit("cpu=4,mem=2G,node=-1").unwrap();
    assert_eq!(
        edit,
        vec![
            (TresKind::Cpu, Some(4)),
            (TresKind::Mem, Some(2048)),
            (TresKind::Node, None)
        ]
    );
    let mut t = Tres {
        node: Some(3),
        ..Tres::default()
    };
    t.apply(&edit);
    assert_eq!(t.to_string(), "cpu=4,mem=2048M");
    assert_eq!(Tres::from_stored(&t.to_stored()), Some(t));
    assert_eq!(Tres::from_stored(""), None);
}

#[test]
fn bad_tres_entries_are_named() {
    assert_eq!(parse_edit("gpu=1").unwrap_err(), "Invalid TRES name 'gpu'");
    assert_eq!(
        parse_edit("cpu=x").unwrap_err(),
        "Invalid TRES value 'cpu=x'"
    );
    assert!(parse_edit("mem=3Q").is_err());
    assert!(parse_edit("cpu").is_err());
}

#[test]
fn max_limits_are_inherited_and_group_limits_are_not() {
    let parent = AssocLimits {
        max_jobs: Some(2),
        max_wall_minutes: Some(60),
        max_tres_per_job: Tres {
            cpu: Some(8),
            ..Tres::default()
        },
        grp_jobs: Some(5),
        ..AssocLimits::default()
    };
    let child = AssocLimits {
        max_jobs: Some(1),
        ..AssocLimits::default()
    };
    let eff = child.inherit(&parent);
    assert_eq!(eff.max_jobs, Some(1));
    assert_eq!(eff.max_wall_minutes, Some(60));
    assert_eq!(eff.max_tres_per_job.cpu, Some(8));
    assert_eq!(eff.grp_jobs, None);
}

#[test]
fn edits_set_and_clear() {
    let edit = AssocLimitsEdit {
        max_jobs: Some(None),
        grp_jobs: Some(Some(3)),
        ..AssocLimitsEdit::default()
    };
    let before = AssocLimits {
        max_jobs: Some(4),
        ..AssocLimits::default()
    };
    let after = edit.applied(&before);
    assert_eq!(after.max_jobs, None);
    assert_eq!(after.grp_jobs, Some(3));
    assert!(AssocLimitsEdit::default().is_empty());
}

#[test]
fn enforce_values() {
    let e = AcctEnforce::parse("associations").unwrap();
    assert!(e.associations && !e.limits);
    let e = AcctEnforce::parse("limits").unwrap();
    assert!(e.associations && e.limits);
    assert_eq!(e.to_string(), "associations,limits");
    let e = AcctEnforce::parse("qos").unwrap();
    assert!(e.associations && e.qos && !e.limits);
    assert_eq!(
        AcctEnforce::parse("limits,qos").unwrap().to_string(),
        "associations,limits,qos"
    );
    assert!(AcctEnforce::parse("wckeys").unwrap_err().contains("wckeys"));
    assert!(AcctEnforce::parse("bogus").unwrap_err().contains("bogus"));
}

#[test]
fn safe_implies_limits_and_associations() {
    let e = AcctEnforce::parse("safe").unwrap();
    assert!(e.associations && e.limits && e.safe);
    assert_eq!(e.to_string(), "associations,limits,safe");
    let e = AcctEnforce::parse("associations,limits").unwrap();
    assert!(!e.safe);
}

#[test]
fn tres_minutes_are_group_limits_edited_like_tres() {
    let edit = AssocLimitsEdit {
        grp_tres_mins: parse_edit("cpu=600,mem=1G").unwrap(),
        ..AssocLimitsEdit::default()
    };
    let after = edit.applied(&AssocLimits::default());
    assert_eq!(after.grp_tres_mins.cpu, Some(600));
    assert_eq!(after.grp_tres_mins.mem_mb, Some(1024));
    // Group limits stay where they are set.
    assert_eq!(
        AssocLimits::default().inherit(&after).grp_tres_mins,
        Tres::default()
    );
    let cleared = AssocLimitsEdit {
        grp_tres_mins: parse_edit("cpu=-1").unwrap(),
        ..AssocLimitsEdit::default()
    }
    .applied(&after);
    assert_eq!(cleared.grp_tres_mins.cpu, None);
}
