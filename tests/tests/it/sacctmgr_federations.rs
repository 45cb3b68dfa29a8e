//! `sacctmgr` federation commands against a real `sluice-dbd`: membership rules checked
//! client-side (missing, already assigned, moving between federations), `tree`, `withfed`,
//! and the 63-cluster limit.

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

fn fails(out: &CmdOutput, stdout: &str, stderr: &str) {
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (1, stdout, stderr)
    );
}

/// fed1 = {c1, c2}; c3 free.
fn setup() -> Dbd {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1", "c2", "c3"]));
    let out = dbd.sacctmgr(&["-i", "add", "federation", "fed1", "clusters=c1,c2"]);
    assert_eq!(
        ok(&out),
        " Adding Federation(s)\n  fed1\n Settings\n  Cluster       = c1\n  Cluster       = c2\n"
    );
    dbd
}

#[test]
fn show_federation_plain_tree_and_withfed() {
    let dbd = setup();
    let show = dbd.sacctmgr(&["show", "federation"]);
    assert_eq!(
        ok(&show),
        "Federation    Cluster ID             Features     FedState \n\
         ---------- ---------- -- -------------------- ------------ \n\
         \x20     fed1         c1  1                            ACTIVE \n\
         \x20     fed1         c2  2                            ACTIVE \n"
    );
    let tree = dbd.sacctmgr(&["show", "federation", "tree"]);
    let lines: Vec<&str> = ok(&tree).lines().collect();
    assert_eq!(lines.len(), 5, "{}", tree.stdout);
    assert_eq!(lines[2].trim_end(), "      fed1");
    assert!(
        lines[3].starts_with("                   c1  1 "),
        "{}",
        lines[3]
    );
    let tree_p = dbd.sacctmgr(&["-P", "show", "fed", "fed1", "Tree"]);
    assert_eq!(
        ok(&tree_p),
        "Federation|Cluster|ID|Features|FedState\nfed1||||\n|c1|1||ACTIVE\n|c2|2||ACTIVE\n"
    );
    let fed_only = dbd.sacctmgr(&["-nP", "show", "federation", "format=federation,flags"]);
    assert_eq!(ok(&fed_only), "fed1|\n");
    let withfed = dbd.sacctmgr(&["-nP", "show", "cluster", "withfed", "wolimits"]);
    assert_eq!(
        ok(&withfed),
        "c1||0|0|fed1|1||ACTIVE\nc2||0|0|fed1|2||ACTIVE\nc3||0|0||0||NA\n"
    );
    let by_fed = dbd.sacctmgr(&["-nP", "show", "cluster", "where", "fed=fed1", "format=cl"]);
    assert_eq!(ok(&by_fed), "c1\nc2\n");
}

#[test]
fn membership_rules_are_checked_before_changing() {
    let dbd = setup();
    ok(&dbd.sacctmgr(&["-i", "add", "federation", "fed2"]));
    fails(
        &dbd.sacctmgr(&[
            "-i",
            "modify",
            "federation",
            "fed1",
            "set",
            "clusters+=nope,c3",
        ]),
        "",
        " The cluster nope doesn't exist. Please add first.\n",
    );
    fails(
        &dbd.sacctmgr(&["-i", "modify", "cluster", "c3", "set", "federation=nofed"]),
        "",
        " The federation nofed doesn't exist.\n",
    );
    fails(
        &dbd.sacctmgr(&["-i", "modify", "cluster", "c2", "set", "federation=fed1"]),
        "  Nothing to change\n",
        " The cluster c2 is already assigned to federation fed1\n",
    );
    fails(
        &dbd.sacctmgr(&["-i", "modify", "federation", "fed2", "set", "clusters-=c1"]),
        "Nothing to change\n",
        " The cluster c1 isn't assigned to federation fed2\n",
    );
    fails(
        &dbd.sacctmgr(&["-i", "add", "federation", "f3,f4", "clusters=c3"]),
        "",
        " Can't assign clusters to multiple federations.\n",
    );
    fails(
        &dbd.sacctmgr(&["-i", "add", "federation", "fed1"]),
        " This federation fed1 already exists.  Not adding.\n",
        "",
    );
    fails(
        &dbd.sacctmgr(&["-i", "modify", "federation", "fed1", "set", "clusters-="]),
        "",
        " You didn't specify any clusters to remove\n",
    );

    // Moving a cluster to another federation asks first; "n" keeps it where it is.
    let moving = " The cluster c1 is assigned to federation fed1\n";
    let no = dbd.sacctmgr_stdin(
        &["modify", "cluster", "c1", "set", "federation=fed2"],
        "n\n",
    );
    fails(
        &no,
        "\nAre you sure you want to continue? (You have 30 seconds to decide)\n(N/y): \n",
        moving,
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "c1", "format=fed"])
            .stdout,
        "fed1\n"
    );
    let yes = dbd.sacctmgr(&["-i", "modify", "cluster", "c1", "set", "federation=fed2"]);
    assert_eq!(
        ok(&yes),
        " Setting\n  Federation     = fed2\n Modified cluster...\n  c1\n"
    );
    assert_eq!(yes.stderr, moving);
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "c1", "format=fed,id,fedstate"])
            .stdout,
        "fed2|1|ACTIVE\n"
    );
}

#[test]
fn setting_clearing_and_deleting_federations() {
    let dbd = setup();
    let set = dbd.sacctmgr(&["-i", "modify", "federation", "fed1", "set", "clusters=c3"]);
    assert_eq!(
        ok(&set),
        " Setting\n  Cluster      += c3\n  Cluster      -= c1\n  Cluster      -= c2\n Modified federation...\n  fed1\n"
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "federation", "format=fed,cl"])
            .stdout,
        "fed1|c3\n"
    );
    let keep = dbd.sacctmgr_stdin(&["delete", "federation", "fed1"], "n\n");
    assert!(
        ok(&keep).starts_with(" Deleting federations...\n  fed1\n"),
        "{}",
        keep.stdout
    );
    assert!(keep.stdout.ends_with(" Changes Discarded\n"));
    let gone = dbd.sacctmgr(&["-i", "delete", "federations", "fed1"]);
    assert_eq!(ok(&gone), " Deleting federations...\n  fed1\n");
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "c3", "format=cl,fed,fedstate,id"])
            .stdout,
        "c3||NA|0\n"
    );
    fails(
        &dbd.sacctmgr(&["-i", "delete", "federation", "fed1"]),
        " Nothing deleted\n",
        "",
    );
}

#[test]
fn a_federation_holds_63_clusters() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "federation", "big"]));
    let names: Vec<String> = (1..=63).map(|i| format!("c{i:02}")).collect();
    let list = names.join(",");
    let add = dbd.sacctmgr(&["-i", "add", "cluster", &list, "federation=big"]);
    ok(&add);
    let ids = dbd
        .sacctmgr(&["-nP", "show", "cluster", "format=id"])
        .stdout;
    let mut ids: Vec<u32> = ids.lines().map(|l| l.parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=63).collect::<Vec<u32>>());
    let full = dbd.sacctmgr(&["-i", "add", "cluster", "c64", "federation=big"]);
    assert_eq!(full.code, 1, "{full:?}");
    assert_eq!(
        full.stdout,
        " Adding Cluster(s)\n  Name           = c64\n Setting\n  Federation     = big\n"
    );
    assert_eq!(
        full.stderr,
        " Problem adding clusters: Too many clusters in federation\n"
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "c64"]).stdout,
        "",
        "nothing was added"
    );
    let tree = dbd.sacctmgr(&["-nP", "show", "federation", "tree"]).stdout;
    assert_eq!(tree.lines().count(), 64);
}
