//! Golden outputs of sshare: the tree, the default and long columns, `-P`, and what `-a`,
//! `-u`, `-A` and `-U` keep.

use super::args::SshareOpts;
use super::fields::{self, Field};
use super::{lines, select};
use crate::output::{OutputMode, Printer};
use sluice_wire::proto::Association;

fn assoc(account: &str, user: &str, parent: &str, shares: i64, usage: f64) -> Association {
    Association {
        cluster: "c1".into(),
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        shares,
        raw_usage: usage,
        run_cpu_mins: if user.is_empty() { 0 } else { 30 },
        ..Default::default()
    }
}

fn tree() -> Vec<Association> {
    vec![
        assoc("root", "", "", 1, 0.0),
        assoc("root", "root", "", 1, 0.0),
        assoc("phys", "", "root", 3, 0.0),
        assoc("phys", "alice", "", 1, 3000.0),
        assoc("phys", "bob", "", -1, 1000.0),
        assoc("chem", "", "root", 1, 0.0),
        assoc("chem", "carol", "", 2, 0.0),
    ]
}

fn show(opts: &SshareOpts, names: &[&str], me: &str) -> String {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let cols = fields::parse(&names).unwrap();
    let printer = Printer::new(opts.mode, cols.iter().map(|(_, c)| c.clone()).collect());
    let mut out = Vec::new();
    printer.print_header(&mut out).unwrap();
    let fs: Vec<Field> = cols.iter().map(|(f, _)| *f).collect();
    for l in select(lines("c1", &tree()), opts, me) {
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
