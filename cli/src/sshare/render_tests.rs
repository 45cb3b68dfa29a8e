//! Golden outputs of sshare: the tree, the default and long columns, `-P`, and what `-a`,
//! `-u`, `-A` and `-U` keep.

use super::args::SshareOpts;
use super::fields::{self, Field, Line};
use super::select;
use crate::output::{OutputMode, Printer};
use sluice_vocab::fairshare::{self, Algorithm, AssocInput, Shares};
use sluice_wire::proto::{Association, ListSharesReply, ShareLine};

fn assoc(account: &str, user: &str, parent: &str, shares: i64, usage: f64) -> Association {
    Association {
        cluster: "c1".into(),
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        shares,
        raw_usage: usage,
        ..Default::default()
    }
}

fn tree() -> Vec<Association> {
    let mut v = vec![
        assoc("root", "", "", 1, 0.0),
        assoc("root", "root", "", 1, 0.0),
        assoc("phys", "", "root", 3, 0.0),
        assoc("phys", "alice", "", 1, 3000.0),
        assoc("phys", "bob", "", -1, 1000.0),
        assoc("chem", "", "root", 1, 0.0),
        assoc("chem", "carol", "", 2, 0.0),
    ];
    for (i, a) in v.iter_mut().enumerate() {
        a.id = i as u64 + 1;
    }
    v
}

/// The tree's lines as the controller computes and sends them: each user has 30 CPU-minutes
/// of running jobs left, an account its subtree's.
fn computed(algorithm: Algorithm) -> Vec<Line> {
    let assocs = tree();
    let inputs: Vec<AssocInput> = assocs
        .iter()
        .map(|a| AssocInput {
            account: a.account.clone(),
            user: a.user.clone(),
            parent: a.parent_account.clone(),
            shares: Shares::from_raw(a.shares),
            raw_usage: a.raw_usage,
        })
        .collect();
    let users_under = |account: &str| -> u64 {
        // root: every user; another account: its own users (no sub-accounts here).
        let n = assocs
            .iter()
            .filter(|a| !a.user.is_empty() && (account == "root" || a.account == account))
            .count();
        30 * n as u64
    };
    let lines = fairshare::compute_with(algorithm, &inputs)
        .into_iter()
        .map(|r| ShareLine {
            id: assocs
                .iter()
                .find(|a| a.account == r.account && a.user == r.user)
                .map_or(0, |a| a.id),
            run_cpu_mins: if r.user.is_empty() {
                users_under(&r.account)
            } else {
                30
            },
            account: r.account,
            user: r.user,
            depth: r.depth as u32,
            shares: r.shares.map(Shares::to_raw),
            norm_shares: r.norm_shares,
            raw_usage: r.raw_usage,
            norm_usage: r.norm_usage,
            effective_usage: r.effective_usage,
            fairshare: r.fairshare,
            level_fs: r.level_fs,
        })
        .collect();
    super::lines(ListSharesReply {
        cluster: "c1".into(),
        lines,
    })
}

fn show(opts: &SshareOpts, names: &[&str], me: &str) -> String {
    show_with(Algorithm::Classic, opts, names, me)
}

fn show_with(algorithm: Algorithm, opts: &SshareOpts, names: &[&str], me: &str) -> String {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let cols = fields::parse(&names).unwrap();
    let printer = Printer::new(opts.mode, cols.iter().map(|(_, c)| c.clone()).collect());
    let mut out = Vec::new();
    printer.print_header(&mut out).unwrap();
    let fs: Vec<Field> = cols.iter().map(|(f, _)| *f).collect();
    for l in select(computed(algorithm), opts, me) {
        let values: Vec<String> = fs.iter().map(|&f| fields::value(&l, f)).collect();
        printer.print_row(&mut out, &values).unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn default_view_is_the_tree_with_the_callers_lines() {
    let out = show(&SshareOpts::default(), fields::DEFAULT, "alice");
    assert_eq!(
        out,
        "\
Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare 
-------------------- ---------- ---------- ----------- ----------- ------------- ---------- 
root                                          1.000000        4000      1.000000            
 chem                                    1    0.200000           0      0.200000            
 phys                                    3    0.600000        4000      1.000000            
  phys                    alice          1    0.600000        3000      1.000000   0.314980 
"
    );
}

#[test]
fn all_users_long_and_parsable() {
    let opts = SshareOpts {
        all: true,
        mode: OutputMode::Parsable2,
        ..SshareOpts::default()
    };
    let out = show(&opts, fields::LONG, "nobody");
    assert_eq!(
        out,
        "\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins
root|||1.000000|4000|1.000000|1.000000||||cpu=120
 root|root|1|0.200000|0|0.000000|0.200000|0.500000|||cpu=30
 chem||1|0.200000|0|0.000000|0.200000||||cpu=30
  chem|carol|2|0.200000|0|0.000000|0.200000|0.500000|||cpu=30
 phys||3|0.600000|4000|1.000000|1.000000||||cpu=60
  phys|alice|1|0.600000|3000|0.750000|1.000000|0.314980|||cpu=30
  phys|bob|parent|0.600000|1000|0.250000|1.000000|0.314980|||cpu=30
"
    );
}

#[test]
fn fair_tree_long_shows_level_fs_and_ranks() {
    // Root level: root's user and chem are unused (LevelFS inf, tied: root ranks 4 of 4, then
    // chem's carol 3), phys (S 0.6, U 1) after them: alice (S 1, U 0.75) 2, bob (parent:
    // phys's level) 1.
    let opts = SshareOpts {
        all: true,
        mode: OutputMode::Parsable2,
        ..SshareOpts::default()
    };
    let out = show_with(Algorithm::FairTree, &opts, fields::LONG, "nobody");
    assert_eq!(
        out,
        "\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins
root|||1.000000|4000|1.000000|1.000000||||cpu=120
 root|root|1|0.200000|0|0.000000|0.000000|1.000000|inf||cpu=30
 chem||1|0.200000|0|0.000000|0.000000||inf||cpu=30
  chem|carol|2|0.200000|0|0.000000|0.000000|0.750000|inf||cpu=30
 phys||3|0.600000|4000|1.000000|1.000000||0.600000||cpu=60
  phys|alice|1|0.600000|3000|0.750000|0.750000|0.500000|1.333333||cpu=30
  phys|bob|parent|0.600000|1000|0.250000|1.000000|0.250000|0.600000||cpu=30
"
    );
}

#[test]
fn id_and_raw_tres_fields() {
    let opts = SshareOpts {
        users: vec!["alice".into()],
        users_only: true,
        mode: OutputMode::Parsable2,
        ..SshareOpts::default()
    };
    let out = show(&opts, &["ID", "User", "GrpTRESRaw"], "nobody");
    assert_eq!(out, "ID|User|GrpTRESRaw\n4|alice|cpu=50\n");
    assert!(fields::help_format().contains("LevelFS"));
}

#[test]
fn users_accounts_and_users_only_filter() {
    let opts = SshareOpts {
        users: vec!["bob".into()],
        accounts: vec!["phys".into()],
        users_only: true,
        mode: OutputMode::Parsable2,
        ..SshareOpts::default()
    };
    let out = show(&opts, &["Account", "User", "RawShares"], "alice");
    assert_eq!(out, "Account|User|RawShares\n  phys|bob|parent\n");
}

#[test]
fn unknown_fields_are_refused_and_prefixes_match() {
    assert_eq!(
        fields::parse(&["bogus".to_string()]).unwrap_err(),
        "sshare: error: Invalid field requested: \"bogus\""
    );
    let cols = fields::parse(&["effectv".to_string(), "Account%30".to_string()]).unwrap();
    assert_eq!(cols[0].0, Field::EffectvUsage);
    assert_eq!(cols[1].1.width, -30);
}
