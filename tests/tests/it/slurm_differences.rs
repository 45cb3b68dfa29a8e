//! Behaviours where Sluice used to differ from Slurm 22.05 (issue 10), through the real
//! binaries: memory sizes with a byte suffix, scancel of unknown or finished jobs, the output
//! file names `scontrol show job` prints, and `sacctmgr list user` with associations.

use crate::common;

use common::Dbd;
use common::cluster::Cluster;

/// The value of `Key=` in an `scontrol -o show job` line.
fn field(line: &str, key: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .unwrap_or_else(|| panic!("{key} in {line}"))
        .to_string()
}

#[test]
fn memory_sizes_unknown_jobs_and_output_names_behave_as_slurm() {
    let c = Cluster::start(1);

    // --mem takes an optional B after the unit.
    let id = c.sbatch(&[
        "--mem=2MB",
        "-J",
        "named",
        "-o",
        "out-%j-%x.txt",
        "--wrap",
        "echo hi",
    ]);
    let show = c.ok("scontrol", &["-o", "show", "job", &id.to_string()]);
    assert_eq!(field(&show, "MinMemoryNode="), "2M", "{show}");

    // StdOut/StdErr: the patterns expanded, under the working directory; the node daemon
    // writes the very same file.
    let workdir = field(&show, "WorkDir=");
    let expected = format!("{workdir}/out-{id}-named.txt");
    assert_eq!(field(&show, "StdOut="), expected, "{show}");
    assert_eq!(field(&show, "StdErr="), expected, "{show}");
    assert_eq!(c.wait_done(id), "COMPLETED");
    c.wait_file(&format!("out-{id}-named.txt"), "hi");

    // A job id that never existed: nothing printed, exit 0; the error only with -v.
    let quiet = c.cmd("scancel", &["99999999"]);
    assert_eq!((quiet.code, quiet.stderr.as_str()), (0, ""), "{quiet:?}");
    let verbose = c.cmd("scancel", &["-v", "99999999"]);
    assert_eq!(verbose.code, 0, "{verbose:?}");
    assert!(
        verbose.stderr.contains(
            "scancel: error: Kill job error on job id 99999999: Invalid job id specified\n"
        ),
        "{verbose:?}"
    );
    // A finished job: the same.
    let done = c.cmd("scancel", &[&id.to_string()]);
    assert_eq!((done.code, done.stderr.as_str()), (0, ""), "{done:?}");
}

#[test]
fn sacctmgr_lists_a_users_associations_with_s() {
    let dbd = Dbd::start();
    for args in [
        &["-i", "add", "cluster", "c1"][..],
        &["-i", "add", "account", "a1"],
        &["-i", "add", "account", "a2"],
        &["-i", "add", "user", "u1", "account=a1,a2"],
    ] {
        let out = dbd.sacctmgr(args);
        assert_eq!(out.code, 0, "{args:?}: {out:?}");
    }
    let out = dbd.sacctmgr(&["-n", "-s", "list", "user", "u1", "format=account%256"]);
    assert_eq!(out.code, 0, "{out:?}");
    let accounts: Vec<&str> = out.stdout.lines().map(str::trim).collect();
    assert_eq!(accounts, ["a1", "a2"], "{out:?}");
    let out = dbd.sacctmgr(&[
        "-n",
        "-P",
        "list",
        "user",
        "u1",
        "withassoc",
        "format=user,cluster,account",
    ]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "u1|c1|a1\nu1|c1|a2\n"),
        "{out:?}"
    );
    // Without associations: the user's own row, as before.
    let out = dbd.sacctmgr(&["-n", "-P", "list", "user", "u1", "format=user,account"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "u1|\n"), "{out:?}");
}
