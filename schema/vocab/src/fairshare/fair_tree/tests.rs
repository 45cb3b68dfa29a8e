use super::super::{Algorithm, compute_with, user_factors};
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

/// The worked example: accounts A and B (1 share each) under root; A used 10, B 30.
/// A: a1 (1 share, 10 used), a2 (1 share, none). B: b1 (1 share, 10), b2 (3 shares, 20).
/// Root level: A has S 1/2, U 1/4, LevelFS 2; B has S 1/2, U 3/4, LevelFS 2/3: A first.
/// In A: a2 has no usage (LevelFS inf), a1 S 1/2 U 1 (0.5): ranks 4 and 3.
/// In B: b2 S 3/4 U 2/3 (1.125), b1 S 1/4 U 1/3 (0.75): ranks 2 and 1.
fn example() -> Vec<AssocInput> {
    vec![
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("A", "", "root", Shares::Count(1), 0.0),
        assoc("B", "", "root", Shares::Count(1), 0.0),
        assoc("A", "a1", "", Shares::Count(1), 10.0),
        assoc("A", "a2", "", Shares::Count(1), 0.0),
        assoc("B", "b1", "", Shares::Count(1), 10.0),
        assoc("B", "b2", "", Shares::Count(3), 20.0),
    ]
}

#[test]
fn worked_example_ranks_users_down_the_tree() {
    let rows = compute(&example());
    assert!(close(row(&rows, "A", "").level_fs.unwrap(), 2.0));
    assert!(close(row(&rows, "B", "").level_fs.unwrap(), 2.0 / 3.0));
    assert!(close(row(&rows, "A", "").effective_usage, 0.25));
    assert_eq!(row(&rows, "A", "a2").level_fs, Some(f64::INFINITY));
    assert!(close(row(&rows, "A", "a1").level_fs.unwrap(), 0.5));
    assert!(close(row(&rows, "B", "b2").level_fs.unwrap(), 1.125));
    assert!(close(row(&rows, "B", "b1").level_fs.unwrap(), 0.75));
    assert!(close(row(&rows, "B", "b1").effective_usage, 1.0 / 3.0));
    let f = |a, u| row(&rows, a, u).fairshare;
    assert!(close(f("A", "a2"), 1.0));
    assert!(close(f("A", "a1"), 0.75));
    assert!(close(f("B", "b2"), 0.5));
    assert!(close(f("B", "b1"), 0.25));
    // Accounts have no factor; the classic normalized shares are still shown.
    assert!(close(f("A", ""), 0.0));
    assert!(close(row(&rows, "B", "b2").norm_shares, 0.375));
    assert_eq!(row(&rows, "root", "").level_fs, None);
}

/// A used 10 (all a1's, among four users), B used 12 (all b2's, b1 none).
pub(crate) fn uneven() -> Vec<AssocInput> {
    let mut v = vec![
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("A", "", "root", Shares::Count(1), 0.0),
        assoc("B", "", "root", Shares::Count(1), 0.0),
        assoc("A", "a1", "", Shares::Count(1), 10.0),
        assoc("B", "b1", "", Shares::Count(1), 0.0),
        assoc("B", "b2", "", Shares::Count(1), 12.0),
    ];
    for u in ["a2", "a3", "a4"] {
        v.push(assoc("A", u, "", Shares::Count(1), 0.0));
    }
    v
}

#[test]
fn every_user_of_the_better_account_ranks_above_the_other_accounts_users() {
    // A's LevelFS (1/2 over 10/22) beats B's (1/2 over 12/22), so even a1, A's only user
    // with usage, ranks above B's unused b1; the classic factor puts b1 far above a1 (a1
    // holds a quarter of A's shares and all its usage).
    let classic = user_factors(compute_with(Algorithm::Classic, &uneven()));
    let tree = user_factors(compute_with(Algorithm::FairTree, &uneven()));
    let key = |a: &str, u: &str| (a.to_string(), u.to_string());
    assert!(classic[&key("B", "b1")] > classic[&key("A", "a1")]);
    assert!(tree[&key("A", "a1")] > tree[&key("B", "b1")]);
    // a2..a4 tie at rank 6 of 6; a1 takes rank 3, b1 2, b2 1.
    assert!(close(tree[&key("A", "a2")], 1.0));
    assert!(close(tree[&key("A", "a1")], 0.5));
    assert!(close(tree[&key("B", "b1")], 2.0 / 6.0));
    assert!(close(tree[&key("B", "b2")], 1.0 / 6.0));
    assert_eq!(tree.len(), 6);
}

#[test]
fn tied_users_share_a_rank_and_the_next_skips() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("acct", "", "root", Shares::Count(1), 0.0),
        assoc("acct", "u1", "", Shares::Count(1), 10.0),
        assoc("acct", "u2", "", Shares::Count(1), 10.0),
        assoc("acct", "u3", "", Shares::Count(1), 30.0),
    ]);
    let f = |u| row(&rows, "acct", u).fairshare;
    assert!(close(f("u1"), 1.0));
    assert!(close(f("u2"), 1.0));
    assert!(close(f("u3"), 1.0 / 3.0));
}

#[test]
fn tied_accounts_have_their_users_sorted_together() {
    // A and B unused tie at infinity: their users are merged and ranked together.
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("A", "", "root", Shares::Count(1), 0.0),
        assoc("B", "", "root", Shares::Count(1), 0.0),
        assoc("C", "", "root", Shares::Count(1), 0.0),
        assoc("A", "a1", "", Shares::Count(1), 0.0),
        assoc("A", "a2", "", Shares::Count(1), 0.0),
        assoc("B", "b1", "", Shares::Count(1), 0.0),
        assoc("C", "c1", "", Shares::Count(1), 5.0),
    ]);
    // C used everything: A and B tie (inf) and go first; a1, a2, b1 all unused tie too.
    let f = |a, u| row(&rows, a, u).fairshare;
    assert!(close(f("A", "a1"), 1.0));
    assert!(close(f("A", "a2"), 1.0));
    assert!(close(f("B", "b1"), 1.0));
    assert!(close(f("C", "c1"), 0.25));
}

#[test]
fn no_shares_rank_last_and_parent_accounts_are_no_level() {
    let rows = compute(&[
        assoc("root", "", "", Shares::Count(1), 0.0),
        assoc("A", "", "root", Shares::Count(1), 0.0),
        assoc("sub", "", "A", Shares::Parent, 0.0),
        assoc("A", "a1", "", Shares::Count(0), 0.0),
        assoc("sub", "s1", "", Shares::Count(1), 10.0),
        assoc("sub", "s2", "", Shares::Count(1), 0.0),
    ]);
    // sub's users are ranked with a1: s2 (inf), s1 (1/2 over 1), a1 (no shares: 0).
    let f = |a, u| row(&rows, a, u).fairshare;
    assert!(close(f("sub", "s2"), 1.0));
    assert!(close(f("sub", "s1"), 2.0 / 3.0));
    assert!(close(f("A", "a1"), 1.0 / 3.0));
    assert_eq!(row(&rows, "A", "a1").level_fs, Some(0.0));
}
