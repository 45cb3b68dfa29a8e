//! `sacctmgr` account and user commands against a real `sluice-dbd` (with QOS lists and
//! their deltas, mixed with limits in one modify).

use crate::common;

use common::{CmdOutput, Dbd};

fn ok(out: &CmdOutput) -> &str {
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    &out.stdout
}

#[test]
fn accounts_are_added_shown_modified_and_deleted() {
    let dbd = Dbd::start();
    let none = dbd.sacctmgr(&["-i", "add", "account", "a1"]);
    assert_eq!(
        (none.code, none.stderr.as_str()),
        (
            1,
            "  Can't add accounts, no cluster defined yet.\n Please contact your administrator.\n"
        )
    );
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1", "c2"]));
    let add = dbd.sacctmgr(&[
        "-i",
        "add",
        "account",
        "a1",
        "Description=Account one",
        "Org=physics",
    ]);
    assert_eq!(
        ok(&add),
        " Adding Account(s)\n  a1\n Settings\n  Description     = Account one\n  Organization    = physics\n \
         Associations\n  A = a1         C = c1        \n  A = a1         C = c2        \n Settings\n  Parent        = root\n"
    );
    let child = dbd.sacctmgr(&["-i", "add", "account", "a2", "parent=a1", "cluster=c1"]);
    assert_eq!(
        ok(&child),
        " Adding Account(s)\n  a2\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n \
         Associations\n  A = a2         C = c1        \n Settings\n  Parent        = a1\n"
    );
    let again = dbd.sacctmgr(&["-i", "add", "account", "a2", "cluster=c1"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (1, " Nothing new added.\n")
    );
    let show = dbd.sacctmgr(&["show", "account", "a1"]);
    assert_eq!(
        ok(&show),
        "   Account                Descr                  Org \n\
         ---------- -------------------- -------------------- \n\
         \x20       a1          Account one              physics \n"
    );
    let m = dbd.sacctmgr(&["-i", "modify", "account", "a1", "set", "description=first"]);
    assert_eq!(ok(&m), " Modified accounts...\n  a1\n");
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "account", "a1", "format=acc,descr,org"])
            .stdout,
        "a1|first|physics\n"
    );
    let root = dbd.sacctmgr(&["-i", "delete", "account", "root"]);
    assert_eq!(root.code, 1);
    assert_eq!(
        root.stderr,
        " You are not allowed to remove the root account.\n Use remove cluster instead.\n"
    );
    let del = dbd.sacctmgr(&["-i", "delete", "account", "a2"]);
    assert_eq!(ok(&del), " Deleting accounts...\n  a2\n");
    let gone = dbd.sacctmgr(&["-i", "delete", "account", "a2"]);
    assert_eq!(gone.code, 1, "{gone:?}");
}

#[test]
fn users_are_added_shown_modified_and_deleted() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1"]));
    ok(&dbd.sacctmgr(&["-i", "add", "account", "a1"]));
    let need = dbd.sacctmgr(&["-i", "add", "user", "bob"]);
    assert_eq!(
        (need.code, need.stderr.as_str()),
        (1, " Need name of account to add user to.\n")
    );
    let missing = dbd.sacctmgr(&["-i", "add", "user", "bob", "account=nope"]);
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (
            1,
            " This account 'nope' doesn't exist.\n        Contact your admin to add this account.\n"
        )
    );
    let add = dbd.sacctmgr(&["-i", "add", "user", "Bob", "account=a1", "adminlevel=oper"]);
    assert_eq!(
        ok(&add),
        " Adding User(s)\n  bob\n Settings =\n  Admin Level     = Operator\n Associations =\n  U = bob       A = a1         C = c1        \n"
    );
    let again = dbd.sacctmgr(&["-i", "add", "user", "bob", "account=a1"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (1, " Nothing new added.\n")
    );
    let show = dbd.sacctmgr(&["show", "user", "bob"]);
    assert_eq!(
        ok(&show),
        "      User   Def Acct     Admin \n---------- ---------- --------- \n       bob         a1  Operator \n"
    );
    let m = dbd.sacctmgr_stdin(&["modify", "user", "bob", "set", "adminlevel=Admin"], "y\n");
    assert!(
        ok(&m).starts_with(" Modified users...\n  bob\nWould you like to commit changes?"),
        "{}",
        m.stdout
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "user", "bob"]).stdout,
        "bob|a1|Administrator\n"
    );
    let cut = dbd.sacctmgr(&["-n", "show", "user", "bob", "format=user,admin"]);
    assert_eq!(ok(&cut), "       bob Administ+ \n");
    let del = dbd.sacctmgr(&["-i", "delete", "user", "bob"]);
    assert_eq!(ok(&del), " Deleting users...\n  bob\n");
    assert_eq!(dbd.sacctmgr(&["-nP", "show", "user", "bob"]).stdout, "");
}

#[test]
fn associations_are_listed_in_hierarchical_order_and_as_a_tree() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1"]));
    ok(&dbd.sacctmgr(&["-i", "add", "account", "phys"]));
    ok(&dbd.sacctmgr(&["-i", "add", "account", "theory", "parent=phys"]));
    ok(&dbd.sacctmgr(&["-i", "add", "user", "alice", "account=phys"]));
    ok(&dbd.sacctmgr(&["-i", "add", "user", "bob", "account=theory"]));
    let show = dbd.sacctmgr(&["-P", "show", "assoc", "format=cluster,account,user,share"]);
    assert_eq!(
        ok(&show),
        "Cluster|Account|User|Share\n\
         c1|root||1\n\
         c1|root|root|1\n\
         c1|phys||1\n\
         c1|phys|alice|1\n\
         c1|theory||1\n\
         c1|theory|bob|1\n"
    );
    let tree = dbd.sacctmgr(&["-n", "-P", "show", "assoc", "tree", "format=account"]);
    assert_eq!(
        ok(&tree),
        "root\n root\n phys\n  phys\n  theory\n   theory\n"
    );
    let one = dbd.sacctmgr(&[
        "-n",
        "-P",
        "show",
        "assoc",
        "user=bob",
        "format=account,user",
    ]);
    assert_eq!(ok(&one), "theory|bob\n");
    let bad = dbd.sacctmgr(&["show", "assoc", "bogus=1"]);
    assert_eq!(bad.code, 1, "{}", bad.stdout);
}

#[test]
fn qos_deltas_follow_the_parents_list_and_mix_with_limits_in_one_modify() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1"]));
    ok(&dbd.sacctmgr(&["-i", "add", "account", "phys"]));
    ok(&dbd.sacctmgr(&["-i", "add", "account", "theory", "parent=phys"]));
    ok(&dbd.sacctmgr(&["-i", "add", "user", "bob", "account=theory"]));
    ok(&dbd.sacctmgr(&["-i", "add", "qos", "high,low"]));
    // QOS+= with a limit, in one modify: one change of bob's association.
    let m = dbd.sacctmgr(&[
        "-i",
        "modify",
        "user",
        "bob",
        "set",
        "QOS+=high",
        "MaxJobs=3",
    ]);
    assert_eq!(
        ok(&m),
        " Modified user associations...\n  C = c1         A = theory     U = bob      \n"
    );
    let bob = || {
        let out = dbd.sacctmgr(&[
            "-n",
            "-P",
            "show",
            "assoc",
            "user=bob",
            "format=account,user,qos,maxjobs",
        ]);
        ok(&out).to_string()
    };
    assert_eq!(bob(), "theory|bob|high,normal|3\n");
    // bob keeps a delta (+high) on the list it inherits: a later change above reaches it.
    ok(&dbd.sacctmgr(&["-i", "modify", "account", "phys", "set", "QOS=low,normal"]));
    assert_eq!(bob(), "theory|bob|high,low,normal|3\n");
    ok(&dbd.sacctmgr(&[
        "-i",
        "modify",
        "account",
        "theory",
        "set",
        "QOS-=normal",
        "Fairshare=5",
    ]));
    assert_eq!(bob(), "theory|bob|high,low|3\n");
    let theory = dbd.sacctmgr(&[
        "-n",
        "-P",
        "show",
        "assoc",
        "account=theory",
        "format=account,user,qos,share",
    ]);
    assert_eq!(ok(&theory), "theory||low|5\ntheory|bob|high,low|1\n");
}
