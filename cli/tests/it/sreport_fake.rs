//! The real `sreport` binary against a fake accounting daemon (its `Reports` service, and the
//! federation list of `Accounting`): exact output of each report, the queries it sends
//! (clusters, rounded window, TRES), federation merging, interactive mode, and Slurm's errors.

use crate::sreport_support;

use sluice_wire::proto::*;
use sreport_support::fake::{FakeDbd, FakeState};
use sreport_support::{banner, run_bin, write_conf};

/// 2024-01-01T00:00:00Z.
const JAN1: i64 = 1_704_067_200;

fn usage(
    cluster: &str,
    count: u64,
    alloc: u64,
    down: u64,
    pdown: u64,
    plan: u64,
    total: u64,
) -> ClusterUsage {
    ClusterUsage {
        cluster: cluster.into(),
        tres: "cpu".into(),
        count,
        alloc_secs: alloc,
        down_secs: down,
        pdown_secs: pdown,
        plan_secs: plan,
        idle_secs: total - alloc - down - pdown - plan,
        over_secs: 0,
        total_secs: total,
    }
}

fn assoc(cluster: &str, account: &str, user: &str, parent: &str, alloc: u64) -> AssocUsage {
    AssocUsage {
        cluster: cluster.into(),
        account: account.into(),
        user: user.into(),
        parent_account: parent.into(),
        tres: "cpu".into(),
        alloc_secs: alloc,
    }
}

fn size_row(account: &str, parent: &str, secs: [u64; 5], jobs: [u64; 5]) -> JobSizesRow {
    JobSizesRow {
        cluster: "c1".into(),
        account: account.into(),
        parent_account: parent.into(),
        bucket_secs: secs.to_vec(),
        bucket_jobs: jobs.to_vec(),
    }
}

/// Two clusters (c1: 100 CPUs, c2: 50 CPUs) over 2024-01-01, in federation `fed`.
fn two_clusters() -> FakeState {
    let member = |name: &str| Cluster {
        name: name.into(),
        federation: "fed".into(),
        ..Default::default()
    };
    FakeState {
        clusters: vec![
            usage("c1", 100, 3_600_000, 360_000, 180_000, 600_000, 8_640_000),
            usage("c2", 50, 1_800_000, 0, 0, 0, 4_320_000),
        ],
        assocs: vec![
            assoc("c1", "root", "", "", 3_600_000),
            assoc("c1", "phys", "", "root", 3_600_000),
            assoc("c1", "phys", "alice", "", 2_400_000),
            assoc("c1", "phys", "bob", "", 1_200_000),
            assoc("c2", "root", "", "", 1_800_000),
            assoc("c2", "phys", "", "root", 1_800_000),
            assoc("c2", "phys", "bob", "", 1_800_000),
        ],
        // astro ran jobs; its ancestors come along empty, as the dbd sends them.
        sizes: vec![
            size_row("astro", "phys", [3_600_000, 0, 0, 0, 0], [3, 0, 0, 0, 0]),
            size_row("phys", "root", [0; 5], [0; 5]),
            size_row("root", "", [0; 5], [0; 5]),
        ],
        federations: vec![Federation {
            name: "fed".into(),
            clusters: vec![member("c1"), member("c2")],
            ..Default::default()
        }],
        ..Default::default()
    }
}

const DAY_ARGS: [&str; 2] = ["start=2024-01-01T00:00:00", "end=2024-01-02T00:00:00"];

#[test]
fn cluster_utilization_of_the_local_cluster() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&["cluster", "utilization", DAY_ARGS[0], DAY_ARGS[1]]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(
        out.stdout,
        banner(
            "Cluster Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59",
            "Usage reported in CPU Minutes"
        ) + "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n\
             --------- -------- -------- -------- -------- -------- -------- \n\
             \x20      c1    60000     6000     3000    65000    10000   144000 \n"
    );
    let q = &dbd.queries()[0];
    assert_eq!(q.clusters, ["c1"]);
    assert_eq!((q.start, q.end), (JAN1, JAN1 + 86_400));
    assert_eq!(q.tres, ["cpu"]);
}

#[test]
fn window_rounding_and_the_default_window_reach_the_query() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&[
        "-n",
        "-P",
        "cluster",
        "ut",
        "start=2024-01-01T10:59:59",
        "end=2024-01-01T12:00:01",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = dbd.run(&["-n", "cluster", "utilization"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let q = dbd.queries();
    assert_eq!((q[0].start, q[0].end), (JAN1 + 10 * 3600, JAN1 + 13 * 3600));
    assert_eq!(q[1].end - q[1].start, 86_400, "yesterday");
    assert_eq!(q[1].end % 86_400, 0, "ends at today's midnight (UTC)");
}

#[test]
fn clusters_all_percent_and_parsable() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&[
        "-a",
        "-t",
        "percent",
        "-p",
        "-n",
        "cluster",
        "utilization",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert_eq!(
        out.stdout,
        "c1|41.67%|4.17%|2.08%|45.14%|6.94%|100.00%|\nc2|41.67%|0.00%|0.00%|58.33%|0.00%|100.00%|\n"
    );
    let out = dbd.run(&[
        "-M",
        "c2",
        "-T",
        "cpu",
        "-P",
        "cluster",
        "utilization",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert!(
        out.stdout.ends_with("Cluster|TRES Name|Allocated|Down|PLND Down|Idle|Planned|Reported\nc2|cpu|30000|0|0|42000|0|72000\n"),
        "{}",
        out.stdout
    );
    let q = dbd.queries();
    assert!(q[0].clusters.is_empty(), "-a asks for every cluster");
    assert_eq!(q[1].clusters, ["c2"]);
}

#[test]
fn federation_rows_are_merged() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&[
        "--federation",
        "-n",
        "cluster",
        "utilization",
        DAY_ARGS[0],
        DAY_ARGS[1],
        "format=Cl,count,al,rep",
    ]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(out.stdout, "  FED:fed         75    90000   216000 \n");
    assert_eq!(dbd.queries()[0].clusters, ["c1", "c2"]);
    let top = dbd.run(&[
        "--federation",
        "-n",
        "-P",
        "user",
        "top",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert_eq!(
        top.stdout,
        "FED:fed|bob||phys|50000|0\nFED:fed|alice||phys|40000|0\n"
    );
}

#[test]
fn association_reports_and_top_usage() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&[
        "-n",
        "cluster",
        "AccountUtilizationByUser",
        "tree",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert_eq!(
        out.stdout,
        "       c1 root                                              60000        0 \n\
         \x20      c1  phys                                             60000        0 \n\
         \x20      c1   phys                   alice                    40000        0 \n\
         \x20      c1   phys                     bob                    20000        0 \n"
    );
    let out = dbd.run(&["-P", "cluster", "UA", "users=bob", DAY_ARGS[0], DAY_ARGS[1]]);
    assert!(
        out.stdout
            .ends_with("Cluster|Login|Proper Name|Account|Used|Energy\nc1|bob||phys|20000|0\n"),
        "{}",
        out.stdout
    );
    assert_eq!(dbd.queries()[1].users, ["bob"]);
    let out = dbd.run(&["user", "topusage", "topcount=1", DAY_ARGS[0], DAY_ARGS[1]]);
    assert_eq!(
        out.stdout,
        banner(
            "Top 1 Users 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)",
            "Usage reported in CPU Minutes"
        ) + "  Cluster     Login     Proper Name         Account     Used   Energy \n\
             --------- --------- --------------- --------------- -------- -------- \n\
             \x20      c1     alice                            phys    40000        0 \n"
    );
}

#[test]
fn job_sizes_roll_up_to_the_accounts_under_root() {
    let dbd = FakeDbd::start(two_clusters());
    let out = dbd.run(&[
        "-n",
        "-P",
        "job",
        "sizes",
        "grouping=10,20,30,40",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    assert_eq!(out.stdout, "c1|phys|60000|0|0|0|0|3|100.00%\n");
    let s = dbd.state.lock().unwrap();
    assert_eq!(s.size_queries[0].grouping, [10, 20, 30, 40]);
    assert_eq!(s.size_queries[0].tres, "cpu");
}

#[test]
fn interactive_commands_from_stdin() {
    let dbd = FakeDbd::start(two_clusters());
    let script = format!(
        "# a comment\ntime hours\nparsable2\ncluster utilization {} {} format=Cl,al\n!!\nbogus\nquit\ncluster utilization\n",
        DAY_ARGS[0], DAY_ARGS[1]
    );
    let out = run_bin(&dbd.conf, &["-n"], Some(&script));
    assert_eq!(out.stdout, "c1|1000\nc1|1000\n");
    assert_eq!(out.stderr, "invalid keyword: bogus\n");
    assert_eq!(out.code, 1, "an error anywhere makes the exit code 1");
}

#[test]
fn errors_use_slurms_text() {
    let dbd = FakeDbd::start(two_clusters());
    let err = |args: &[&str]| {
        let o = dbd.run(args);
        (o.code, o.stderr)
    };
    assert_eq!(
        err(&["-t", "fortnight", "cluster", "utilization"]),
        (1, "unknown time format fortnight\n".to_string())
    );
    assert_eq!(
        err(&["-a", "--local", "cluster", "utilization"]),
        (
            1,
            "Only one cluster option can be used (--all_clusters OR --cluster OR --local)\n"
                .to_string()
        )
    );
    assert_eq!(
        err(&["cluster"]),
        (1, "too few arguments for keyword:cluster\n".to_string())
    );
    assert_eq!(
        err(&["cluster", "bogus"]),
        (
            1,
            "Not valid report bogus\nValid cluster reports are, \"AccountUtilizationByUser\", \
             \"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and \
             \"WCKeyUtilizationByUser\"\n"
                .to_string()
        )
    );
    assert_eq!(
        err(&["user", "bottom"]),
        (
            1,
            "Not valid report bottom\nValid user reports are, \"Top\"\n".to_string()
        )
    );
    let o = dbd.run(&[
        "-n",
        "cluster",
        "utilization",
        "format=Cl,bogus",
        "colour=red",
        DAY_ARGS[0],
        DAY_ARGS[1],
    ]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        " Unknown condition: colour=red\nUse keyword set to modify value\n Unknown field 'bogus'\n"
    );
    assert_eq!(o.stdout, "       c1 \n", "the report still runs");
    let o = dbd.run(&["cluster", "utilization", "start=someday"]);
    assert_eq!(
        (o.code, o.stderr.as_str()),
        (
            1,
            "sreport: error: Invalid time specification (pos=0): someday\n"
        )
    );
    assert_eq!(
        err(&["-T", "cpu,mem", "job", "sizes"]),
        (
            1,
            " Job report only support a single --tres type.\n Generate a separate report for each TRES type.\n"
                .to_string()
        )
    );
}

#[test]
fn unreachable_dbd() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let conf = write_conf(dir.path(), port);
    let out = run_bin(&conf, &["cluster", "utilization"], None);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "sreport: error: Problem talking to the database: Connection refused\n"
    );
}
