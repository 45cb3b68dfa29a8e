//! `sacctmgr` cluster commands against a real `sluice-dbd`: messages, tables, output modes,
//! keyword prefixes, and the commit prompt.

use crate::common;

use common::{CmdOutput, Dbd};

const HEADER: &str = "   Cluster     ControlHost  ControlPort   RPC     Share GrpJobs       GrpTRES GrpSubmit MaxJobs       MaxTRES MaxSubmit     MaxWall                  QOS   Def QOS ";

fn ok(out: &CmdOutput) -> &str {
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    &out.stdout
}

#[test]
fn add_and_show_clusters() {
    let dbd = Dbd::start();
    let out = dbd.sacctmgr(&["-i", "add", "cluster", "c1", "c2"]);
    assert_eq!(
        ok(&out),
        " Adding Cluster(s)\n  Name           = c1\n  Name           = c2\n"
    );
    assert_eq!(out.stderr, "");

    let again = dbd.sacctmgr(&["-i", "add", "cluster", "c1"]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (1, " This cluster c1 already exists.  Not adding.\n")
    );

    let show = dbd.sacctmgr(&["show", "cluster"]);
    let lines: Vec<&str> = ok(&show).lines().collect();
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines[1].len(), HEADER.len());
    assert!(
        lines[1].chars().all(|c| c == '-' || c == ' '),
        "{}",
        lines[1]
    );
    assert_eq!(lines.len(), 4, "{show:?}");
    // Host blank, port and RPC 0 until a controller registers, Share is Slurm's 1, limits blank.
    assert!(
        lines[2].starts_with("        c1                            0     0         1 "),
        "{}",
        lines[2]
    );
    assert_eq!(lines[2].len(), HEADER.len());
    assert_eq!(
        lines[2].trim_end(),
        "        c1                            0     0         1"
    );

    let wo = dbd.sacctmgr(&["show", "cluster", "WOLimits", "c2"]);
    assert_eq!(
        ok(&wo),
        "   Cluster     ControlHost  ControlPort   RPC \n---------- --------------- ------------ ----- \n        c2                            0     0 \n"
    );
}

#[test]
fn output_modes_formats_and_prefixes() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1", "averylongclustername"]));
    let p2 = dbd.sacctmgr(&["-n", "-P", "show", "cluster", "format=cluster,fedstate,id"]);
    assert_eq!(ok(&p2), "averylongclustername|NA|0\nc1|NA|0\n");
    let p = dbd.sacctmgr(&["-p", "show", "cluster", "format=cluster,fedstate"]);
    assert_eq!(
        ok(&p),
        "Cluster|FedState|\naverylongclustername|NA|\nc1|NA|\n"
    );
    let widths = dbd.sacctmgr(&[
        "--noheader",
        "show",
        "cluster",
        "format=cluster%8,fedstate%-6,ID%2",
    ]);
    assert_eq!(ok(&widths), "averylo+ NA      0 \n      c1 NA      0 \n");
    // Case-insensitive prefixes of verbs, entities and keywords; repeated format= accumulate.
    let prefixed = dbd.sacctmgr(&[
        "-nP",
        "LIS",
        "CLU",
        "WHERE",
        "NAMES=c1",
        "FORMAT=cl",
        "fo=Feds",
    ]);
    assert_eq!(ok(&prefixed), "c1|NA\n");
    let bad = dbd.sacctmgr(&["show", "cluster", "format=cluster,xyz"]);
    assert_eq!(
        (bad.code, bad.stderr.as_str(), bad.stdout.as_str()),
        (1, "Unknown field 'xyz'\n", "")
    );
}

#[test]
fn the_commit_prompt_commits_only_on_yes() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1"]));
    let features = || {
        dbd.sacctmgr(&["-nP", "show", "cluster", "c1", "format=features"])
            .stdout
    };
    let question = "Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): \n";

    let no = dbd.sacctmgr_stdin(&["modify", "cluster", "c1", "set", "features=a"], "n\n");
    assert_eq!(
        ok(&no),
        format!(
            " Setting\n  Feature       = a\n Modified cluster...\n  c1\n{question} Changes Discarded\n"
        )
    );
    assert_eq!(features(), "\n");

    let eof = dbd.sacctmgr(&["modify", "cluster", "c1", "set", "features=a"]);
    assert!(ok(&eof).ends_with(" Changes Discarded\n"), "{}", eof.stdout);
    assert_eq!(features(), "\n");

    let yes = dbd.sacctmgr_stdin(&["modify", "cluster", "c1", "set", "features=a,b"], "y\n");
    assert_eq!(
        ok(&yes),
        format!(
            " Setting\n  Feature       = a\n  Feature       = b\n Modified cluster...\n  c1\n{question}"
        )
    );
    assert_eq!(features(), "a,b\n");

    let edit = dbd.sacctmgr(&[
        "-i",
        "modify",
        "cluster",
        "c1",
        "set",
        "features-=a",
        "features+=gpu",
    ]);
    assert_eq!(
        ok(&edit),
        " Setting\n  Feature     -= a\n  Feature     += gpu\n Modified cluster...\n  c1\n"
    );
    assert_eq!(features(), "b,gpu\n");

    // A new cluster without -i: the dry run changes nothing until the answer.
    let add_no = dbd.sacctmgr_stdin(&["add", "cluster", "c2"], "x\n");
    assert_eq!(
        ok(&add_no),
        format!(" Adding Cluster(s)\n  Name           = c2\n{question} Changes Discarded\n")
    );
    let add_yes = dbd.sacctmgr_stdin(&["add", "cluster", "c2"], "Y\n");
    assert_eq!(
        ok(&add_yes),
        format!(" Adding Cluster(s)\n  Name           = c2\n{question}")
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "format=cl"])
            .stdout,
        "c1\nc2\n"
    );
}

#[test]
fn delete_clusters_and_report_nothing_deleted() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1", "c2"]));
    let keep = dbd.sacctmgr(&["delete", "cluster", "c1"]);
    assert!(
        ok(&keep).starts_with(" Deleting clusters...\n  c1\nWould you like to commit changes?"),
        "{}",
        keep.stdout
    );
    assert!(keep.stdout.ends_with(" Changes Discarded\n"));
    let gone = dbd.sacctmgr_stdin(&["remove", "cluster", "where", "name=c1"], "y\n");
    assert!(
        ok(&gone).starts_with(" Deleting clusters...\n  c1\n"),
        "{}",
        gone.stdout
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "format=cl"])
            .stdout,
        "c2\n"
    );
    let none = dbd.sacctmgr(&["-i", "delete", "cluster", "c1"]);
    assert_eq!((none.code, none.stdout.as_str()), (1, " Nothing deleted\n"));
    let nocond = dbd.sacctmgr(&["-i", "delete", "cluster"]);
    assert_eq!(
        (nocond.code, nocond.stderr.as_str()),
        (1, " No conditions given to remove, not executing.\n")
    );
}

#[test]
fn fedstate_and_modify_errors() {
    let dbd = Dbd::start();
    ok(&dbd.sacctmgr(&["-i", "add", "federation", "fed1"]));
    ok(&dbd.sacctmgr(&["-i", "add", "cluster", "c1", "federation=fed1"]));
    let set = dbd.sacctmgr(&["-i", "Mod", "CLUSTER", "c1", "SeT", "fedstate=dr"]);
    assert_eq!(
        ok(&set),
        " Setting\n  FedState       = DRAIN\n Modified cluster...\n  c1\n"
    );
    let raw = dbd.sacctmgr(&[
        "-nP",
        "show",
        "cluster",
        "format=cl,fedstate,fedstateraw,fed,id",
    ]);
    assert_eq!(ok(&raw), "c1|DRAIN|17|fed1|1\n");
    let bad = dbd.sacctmgr(&["-i", "modify", "cluster", "c1", "set", "fedstate=sideways"]);
    assert_eq!(
        (bad.code, bad.stderr.as_str()),
        (1, "Invalid FedState sideways.\n")
    );
    let nothing = dbd.sacctmgr(&["-i", "modify", "cluster", "c1"]);
    assert_eq!(
        (nothing.code, nothing.stderr.as_str()),
        (1, " You didn't give me anything to set\n")
    );
    let mixed = dbd.sacctmgr(&[
        "-i",
        "modify",
        "cluster",
        "c1",
        "set",
        "features=a",
        "features+=b",
    ]);
    assert_eq!(
        (mixed.code, mixed.stderr.as_str()),
        (
            1,
            "sacctmgr: error: You can't use '=' and '+' or '-' in the same line\n"
        )
    );
    let empty = dbd.sacctmgr(&["-i", "modify", "cluster", "c1", "set", "features+="]);
    assert_eq!(
        (empty.code, empty.stderr.as_str()),
        (1, " You didn't specify any features to add\n")
    );
}

#[test]
fn refused_requests_and_interactive_sessions() {
    let dbd = Dbd::start();
    let denied = dbd.sacctmgr_as(65534, &["-i", "add", "cluster", "zz"]);
    assert_eq!(denied.code, 1, "{denied:?}");
    assert_eq!(
        denied.stderr,
        " Problem adding clusters: Access/permission denied\n"
    );
    assert_eq!(
        dbd.sacctmgr(&["-nP", "show", "cluster", "format=cl"])
            .stdout,
        "",
        "nothing was added"
    );

    // Commands and the answer to the prompt come from stdin, in order.
    let session = dbd.sacctmgr_stdin(
        &["-nP"],
        "add cluster c9\ny\nlist cluster format=cl\nbogus\nquit\nlist cluster\n",
    );
    assert_eq!(
        session.stdout,
        " Adding Cluster(s)\n  Name           = c9\nWould you like to commit changes? (You have 30 seconds to decide)\n(N/y): \nc9\n"
    );
    assert_eq!(session.stderr, "invalid keyword: bogus\n");
    assert_eq!(session.code, 1);
}
