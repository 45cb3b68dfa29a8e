use super::*;

fn assoc(account: &str, user: &str, parent: &str, shares: Shares, usage: f64) -> AssocInput {
    AssocInput {
        account: account.into(),
        user: user.into(),
        parent: parent.into(),
        shares,
        raw_usage: usage,
    }
}

fn row<'a>(rows: &'a [ShareRow], account: &str, user: &str) -> &'a ShareRow {
    rows.iter()
        .find(|r| r.account == account && r.user == user)
        .unwrap_or_else(|| panic!("no row {account}/{user}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn no_usage_gives_everyone_factor_one_and_shares_split_by_count() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("phys", "", "root", Shares::Count(3), 0.0),
        assoc("chem", "", "root", Shares::Count(1), 0.0),
        assoc("phys", "alice", "", Shares::Count(1), 0.0),
        assoc("phys", "bob", "", Shares::Count(1), 0.0),
    ]);
    let names: Vec<(&str, &str, usize)> = rows
        .iter()
        .map(|r| (r.account.as_str(), r.user.as_str(), r.depth))
        .collect();
    assert_eq!(
        names,
        [
            ("root", "", 0),
            ("chem", "", 1),
            ("phys", "", 1),
            ("phys", "alice", 2),
            ("phys", "bob", 2)
        ]
    );
    assert!(close(row(&rows, "phys", "").norm_shares, 0.75));
    assert!(close(row(&rows, "phys", "alice").norm_shares, 0.375));
    assert!(close(row(&rows, "phys", "bob").fairshare, 1.0));
}

#[test]
fn the_heavier_user_gets_the_lower_factor() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("acct", "", "root", Shares::Count(1), 0.0),
        assoc("acct", "heavy", "", Shares::Count(1), 300.0),
        assoc("acct", "light", "", Shares::Count(1), 100.0),
    ]);
    let heavy = row(&rows, "acct", "heavy");
    let light = row(&rows, "acct", "light");
    assert!(close(heavy.norm_usage, 0.75));
    // UE = U + (UE_parent - U) * S/S_siblings; the account holds all usage (UE 1).
    assert!(close(heavy.effective_usage, 0.75 + (1.0 - 0.75) * 0.5));
    assert!(close(heavy.fairshare, (-(0.875) / 0.5f64).exp2()));
    assert!(heavy.fairshare < light.fairshare);
    assert!(close(row(&rows, "acct", "").raw_usage, 400.0));
    assert!(close(row(&rows, "root", "").raw_usage, 400.0));
}

#[test]
fn more_shares_raise_the_factor_for_the_same_usage() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("a", "", "root", Shares::Count(1), 0.0),
        assoc("a", "big", "", Shares::Count(9), 100.0),
        assoc("a", "small", "", Shares::Count(1), 100.0),
    ]);
    assert!(row(&rows, "a", "big").fairshare > row(&rows, "a", "small").fairshare);
}

#[test]
fn parent_shares_take_the_accounts_numbers() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("a", "", "root", Shares::Count(1), 0.0),
        assoc("b", "", "root", Shares::Count(1), 0.0),
        assoc("a", "u", "", Shares::Parent, 50.0),
        assoc("b", "v", "", Shares::Count(1), 10.0),
    ]);
    let a = row(&rows, "a", "");
    let u = row(&rows, "a", "u");
    assert!(close(u.norm_shares, a.norm_shares));
    assert!(close(u.fairshare, a.fairshare));
    assert_eq!(u.shares, Some(Shares::Parent));
}

#[test]
fn shares_parse_and_print() {
    assert_eq!(Shares::parse("parent"), Some(Shares::Parent));
    assert_eq!(Shares::parse("12"), Some(Shares::Count(12)));
    assert_eq!(Shares::parse("-3"), None);
    assert_eq!(Shares::from_raw(Shares::Parent.to_raw()), Shares::Parent);
    assert_eq!(Shares::Count(5).to_string(), "5");
}

#[test]
fn usage_decays_by_half_each_half_life() {
    let day = 86_400;
    // One CPU for one second, one half-life ago, is worth half a CPU-second now.
    let old = decayed_usage(1.0, 0, 1, day + 1, day, 0);
    assert!((old - 0.5).abs() < 1e-4, "{old}");
    // No decay: plain CPU-seconds, the part after a reset only.
    assert!(close(decayed_usage(4.0, 100, 200, 1000, 0, 0), 400.0));
    assert!(close(decayed_usage(4.0, 100, 200, 1000, 0, 150), 200.0));
    // A running job counts up to now.
    assert!(close(decayed_usage(2.0, 100, i64::MAX, 160, 0, 0), 120.0));
}

#[test]
fn reset_periods_start_at_calendar_boundaries() {
    use crate::cluster_conf::UsageReset;
    // Wednesday 2026-11-25 13:00:00 UTC.
    let now = 1_795_611_600;
    assert_eq!(UsageReset::None.since(now, 5), 0);
    assert_eq!(UsageReset::Now.since(now, 5), 5);
    assert_eq!(UsageReset::Daily.since(now, 5), 1_795_564_800); // 2026-11-25 00:00
    assert_eq!(UsageReset::Weekly.since(now, 5), 1_795_305_600); // Sunday 2026-11-22
    assert_eq!(UsageReset::Monthly.since(now, 5), 1_793_491_200); // 2026-11-01
    assert_eq!(UsageReset::Quarterly.since(now, 5), 1_790_812_800); // 2026-10-01
    assert_eq!(UsageReset::Yearly.since(now, 5), 1_767_225_600); // 2026-01-01
}
