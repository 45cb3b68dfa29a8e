//! Golden outputs of each report from hand-built usage values (pure renderers, UTC).

use super::assoc::{self, Order};
use super::data::{AssocTres, ClusterTres, SizeRow, fed_label, merge_clusters};
use super::fields::{Chosen, Family, add_to_list, parse_format};
use super::render::Style;
use super::sizes::{self, SizesOpts};
use super::top::{self, Shape};
use super::tres::TresSel;
use super::units::TimeFormat;
use super::util;
use super::window::Window;
use crate::output::OutputMode;
use crate::timefmt::Zone;

/// 2024-01-01T00:00:00Z .. 2024-01-02T00:00:00Z.
const DAY: Window = Window {
    start: 1_704_067_200,
    end: 1_704_153_600,
};
const RULE: &str =
    "--------------------------------------------------------------------------------";

fn style(time: TimeFormat) -> Style {
    Style {
        time,
        zone: Zone::Utc,
        ..Style::default()
    }
}

fn fields(family: Family, list: &str, tree: bool, time: TimeFormat) -> Vec<Chosen> {
    let mut items = Vec::new();
    add_to_list(&mut items, list);
    let (chosen, errors) = parse_format(family, &items, tree, time);
    assert!(errors.is_empty(), "{errors:?}");
    chosen
}

/// A 100-CPU cluster over a day: 8,640,000 CPU-seconds of capacity.
fn c1() -> ClusterTres {
    ClusterTres {
        cluster: "c1".into(),
        tres: "cpu".into(),
        count: 100,
        alloc: 3_600_000,
        down: 360_000,
        pdown: 180_000,
        idle: 3_900_000,
        plan: 600_000,
        over: 0,
        total: 8_640_000,
    }
}

fn utilization(st: &Style, list: Option<&str>, rows: &[ClusterTres]) -> String {
    let list = list.unwrap_or_else(|| util::default_format(st));
    util::render(
        st,
        &DAY,
        &fields(Family::Cluster, list, false, st.time),
        rows,
    )
}

fn banner(title: &str, usage: &str) -> String {
    format!("{RULE}\n{title}\n{usage}\n{RULE}\n")
}

#[test]
fn utilization_in_minutes() {
    let out = utilization(&style(TimeFormat::Minutes), None, &[c1()]);
    assert_eq!(
        out,
        banner(
            "Cluster Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59",
            "Usage reported in CPU Minutes"
        ) + "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n\
               --------- -------- -------- -------- -------- -------- -------- \n\
               \x20      c1    60000     6000     3000    65000    10000   144000 \n"
    );
}

#[test]
fn utilization_in_every_time_format() {
    let row = |t: TimeFormat| {
        let out = utilization(&style(t), None, &[c1()]);
        let lines: Vec<&str> = out.lines().collect();
        (
            lines[2].to_string(),
            lines[5].to_string(),
            lines[6].to_string(),
        )
    };
    assert_eq!(
        row(TimeFormat::Seconds).2,
        "       c1  3600000   360000   180000  3900000   600000  8640000 "
    );
    assert_eq!(
        row(TimeFormat::Hours).2,
        "       c1     1000      100       50     1083      167     2400 "
    );
    assert_eq!(
        row(TimeFormat::Percent),
        (
            "Usage reported in Percentage of Total".to_string(),
            "--------- -------- -------- -------- -------- -------- -------- ".to_string(),
            "       c1   41.67%    4.17%    2.08%   45.14%    6.94%  100.00% ".to_string()
        )
    );
    let secper = utilization(&style(TimeFormat::SecPer), None, &[c1()]);
    assert_eq!(
        secper.lines().skip(2).collect::<Vec<_>>(),
        [
            "Usage reported in CPU Seconds/Percentage of Total",
            RULE,
            "  Cluster         Allocated              Down         PLND Down              Idle           Planned          Reported ",
            "--------- ----------------- ----------------- ----------------- ----------------- ----------------- ----------------- ",
            "       c1   3600000(41.67%)     360000(4.17%)     180000(2.08%)   3900000(45.14%)     600000(6.94%)  8640000(100.00%) ",
        ]
    );
    assert_eq!(
        row(TimeFormat::MinPer).2,
        "       c1     60000(41.67%)       6000(4.17%)       3000(2.08%)     65000(45.14%)      10000(6.94%)   144000(100.00%) "
    );
    assert_eq!(
        row(TimeFormat::HourPer).2,
        "       c1      1000(41.67%)        100(4.17%)         50(2.08%)      1083(45.14%)        167(6.94%)     2400(100.00%) "
    );
}

#[test]
fn utilization_columns_widen_for_large_clusters() {
    let month = Window {
        start: DAY.start,
        end: DAY.start + 30 * 86_400,
    };
    let big = ClusterTres {
        cluster: "big".into(),
        tres: "cpu".into(),
        count: 10_000,
        alloc: 12_960_000_000,
        idle: 12_960_000_000,
        total: 25_920_000_000,
        ..Default::default()
    };
    let st = style(TimeFormat::Minutes);
    let f = fields(Family::Cluster, util::default_format(&st), false, st.time);
    let out = util::render(&st, &month, &f, &[big]);
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        [
            "Cluster Utilization 2024-01-01T00:00:00 - 2024-01-30T23:59:59",
            "Usage reported in CPU Minutes",
            RULE,
            "  Cluster   Allocated     Down PLND Dow        Idle  Planned    Reported ",
            "--------- ----------- -------- -------- ----------- -------- ----------- ",
            "      big   216000000        0        0   216000000        0   432000000 ",
        ]
    );
}

#[test]
fn utilization_per_tres_and_federation() {
    let mut st = style(TimeFormat::Minutes);
    st.tres = TresSel::parse(Some("mem,cpu")).unwrap();
    let mem = ClusterTres {
        tres: "mem".into(),
        count: 1000,
        alloc: 36_000_000,
        down: 0,
        pdown: 0,
        idle: 50_400_000,
        plan: 0,
        total: 86_400_000,
        ..c1()
    };
    let out = utilization(&st, None, &[mem, c1()]);
    assert_eq!(
        out.lines().skip(2).collect::<Vec<_>>(),
        [
            "Usage reported in TRES Minutes",
            RULE,
            "  Cluster      TRES Name Allocate     Down PLND Dow     Idle  Planned Reported ",
            "--------- -------------- -------- -------- -------- -------- -------- -------- ",
            "       c1            cpu    60000     6000     3000    65000    10000   144000 ",
            "       c1            mem   600000        0        0   840000        0  1440000 ",
        ]
    );

    let c2 = ClusterTres {
        cluster: "c2".into(),
        count: 50,
        alloc: 1_800_000,
        down: 0,
        pdown: 0,
        idle: 2_520_000,
        plan: 0,
        total: 4_320_000,
        ..c1()
    };
    let merged = merge_clusters(vec![c1(), c2], &fed_label("f"));
    let st = style(TimeFormat::Minutes);
    let out = utilization(&st, Some("Cl,count,al,d,PLNDDown,i,res,rep"), &merged);
    assert_eq!(
        out.lines().last(),
        Some("    FED:f         75    90000     6000     3000   107000    10000   216000 ")
    );
}

#[test]
fn utilization_parsable_and_without_headers() {
    let mut st = style(TimeFormat::Minutes);
    st.mode = OutputMode::Parsable;
    assert_eq!(
        utilization(&st, None, &[c1()]),
        banner(
            "Cluster Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59",
            "Usage reported in CPU Minutes"
        ) + "Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported|\n\
             c1|60000|6000|3000|65000|10000|144000|\n"
    );
    st.mode = OutputMode::Parsable2;
    st.header = false;
    assert_eq!(
        utilization(&st, None, &[c1()]),
        "c1|60000|6000|3000|65000|10000|144000\n"
    );
    assert_eq!(utilization(&st, None, &[]), "", "no usage, no lines");
}

/// c1's account tree: root > {chem > dave, phys > {alice, bob, astro > carol}}.
fn assoc_rows() -> Vec<AssocTres> {
    let a = |acct: &str, user: &str, parent: &str, alloc| AssocTres {
        cluster: "c1".into(),
        account: acct.into(),
        user: user.into(),
        parent: parent.into(),
        tres: "cpu".into(),
        alloc,
    };
    vec![
        a("phys", "bob", "", 600_000),
        a("root", "", "", 3_600_000),
        a("phys", "", "root", 3_000_000),
        a("astro", "carol", "", 600_000),
        a("phys", "alice", "", 1_800_000),
        a("chem", "", "root", 600_000),
        a("astro", "", "phys", 600_000),
        a("chem", "dave", "", 600_000),
    ]
}

fn proper(login: &str) -> Option<String> {
    (login == "alice").then(|| "Alice Liddell".to_string())
}

fn assoc_report(order: Order, tree: bool, st: &Style) -> String {
    let f = fields(Family::Cluster, order.default_format(st), tree, st.time);
    assoc::render(order, tree, st, &DAY, &f, &assoc_rows(), &[c1()], &proper)
}

#[test]
fn account_utilization_by_user_walks_the_tree() {
    let out = assoc_report(Order::AccountByUser, false, &style(TimeFormat::Minutes));
    assert_eq!(
        out,
        banner(
            "Cluster/Account/User Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)",
            "Usage reported in CPU Minutes"
        ) + "  Cluster         Account     Login     Proper Name     Used   Energy \n\
             --------- --------------- --------- --------------- -------- -------- \n\
             \x20      c1            root                              60000        0 \n\
             \x20      c1            chem                              10000        0 \n\
             \x20      c1            chem      dave                    10000        0 \n\
             \x20      c1            phys                              50000        0 \n\
             \x20      c1            phys     alice   Alice Liddell    30000        0 \n\
             \x20      c1            phys       bob                    10000        0 \n\
             \x20      c1           astro                              10000        0 \n\
             \x20      c1           astro     carol                    10000        0 \n"
    );
}

#[test]
fn account_tree_and_percentages() {
    let out = assoc_report(Order::AccountByUser, true, &style(TimeFormat::Percent));
    assert_eq!(
        out.lines().skip(2).collect::<Vec<_>>(),
        [
            "Usage reported in Percentage of Total",
            RULE,
            "  Cluster Account                  Login     Proper Name     Used   Energy ",
            "--------- -------------------- --------- --------------- -------- -------- ",
            "       c1 root                                             41.67%    0.00% ",
            "       c1  chem                                             6.94%    0.00% ",
            "       c1   chem                    dave                    6.94%    0.00% ",
            "       c1  phys                                            34.72%    0.00% ",
            "       c1   phys                   alice   Alice Liddell   20.83%    0.00% ",
            "       c1   phys                     bob                    6.94%    0.00% ",
            "       c1   astro                                           6.94%    0.00% ",
            "       c1    astro                 carol                    6.94%    0.00% ",
        ]
    );
}

#[test]
fn user_utilization_by_account_largest_first() {
    let out = assoc_report(Order::UserByAccount, false, &style(TimeFormat::MinPer));
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        [
            "Cluster/User/Account Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)",
            "Usage reported in CPU Minutes/Percentage of Total",
            RULE,
            "  Cluster     Login     Proper Name         Account              Used            Energy ",
            "--------- --------- --------------- --------------- ----------------- ----------------- ",
            "       c1     alice   Alice Liddell            phys     30000(20.83%)          0(0.00%) ",
            "       c1       bob                            phys      10000(6.94%)          0(0.00%) ",
            "       c1     carol                           astro      10000(6.94%)          0(0.00%) ",
            "       c1      dave                            chem      10000(6.94%)          0(0.00%) ",
        ]
    );
}

fn top_rows() -> Vec<AssocTres> {
    let a = |acct: &str, user: &str, alloc| AssocTres {
        cluster: "c1".into(),
        account: acct.into(),
        user: user.into(),
        tres: "cpu".into(),
        alloc,
        ..Default::default()
    };
    vec![
        a("phys", "", 2_400_000),
        a("phys", "alice", 1_800_000),
        a("chem", "alice", 300_000),
        a("phys", "bob", 600_000),
        a("astro", "carol", 600_000),
        a("chem", "dave", 900_000),
    ]
}

fn top_report(st: &Style, shape: Shape) -> String {
    let f = fields(Family::User, top::default_format(st), false, st.time);
    top::render(st, &DAY, &f, &top_rows(), &[c1()], shape, &proper)
}

#[test]
fn top_usage_per_account_and_grouped() {
    let out = top_report(
        &style(TimeFormat::Minutes),
        Shape {
            top: 3,
            group: false,
        },
    );
    assert_eq!(
        out,
        banner(
            "Top 3 Users 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)",
            "Usage reported in CPU Minutes"
        ) + "  Cluster     Login     Proper Name         Account     Used   Energy \n\
             --------- --------- --------------- --------------- -------- -------- \n\
             \x20      c1     alice   Alice Liddell            phys    30000        0 \n\
             \x20      c1      dave                            chem    15000        0 \n\
             \x20      c1       bob                            phys    10000        0 \n"
    );
    let grouped = top_report(
        &style(TimeFormat::Minutes),
        Shape {
            top: 10,
            group: true,
        },
    );
    assert_eq!(
        grouped.lines().skip(5).collect::<Vec<_>>(),
        [
            "--------- --------- --------------- --------------- -------- -------- ",
            "       c1     alice   Alice Liddell      chem, phys    35000        0 ",
            "       c1      dave                            chem    15000        0 ",
            "       c1       bob                            phys    10000        0 ",
            "       c1     carol                           astro    10000        0 ",
        ]
    );
    let mut by_name = style(TimeFormat::Seconds);
    by_name.sort_by_name = true;
    let names: Vec<String> = top_report(
        &by_name,
        Shape {
            top: 2,
            group: true,
        },
    )
    .lines()
    .skip(6)
    .map(|l| l.split_whitespace().nth(1).unwrap_or_default().to_string())
    .collect();
    assert_eq!(names, ["alice", "bob"]);
}

/// Jobs of c1: phys (2 small, 1 mid), astro under phys (1 of 250-499), chem (1 small).
fn size_rows() -> Vec<SizeRow> {
    let r = |acct: &str, parent: &str, secs: [u64; 5], jobs: [u64; 5]| SizeRow {
        cluster: "c1".into(),
        account: acct.into(),
        parent: parent.into(),
        secs: secs.to_vec(),
        jobs: jobs.to_vec(),
    };
    vec![
        r("phys", "root", [3600, 72_000, 0, 0, 0], [2, 1, 0, 0, 0]),
        r("astro", "phys", [0, 0, 360_000, 0, 0], [0, 0, 1, 0, 0]),
        r("chem", "root", [7200, 0, 0, 0, 0], [1, 0, 0, 0, 0]),
        r("root", "", [0; 5], [0; 5]),
    ]
}

fn sizes_report(st: &Style, opts: SizesOpts) -> String {
    let rows = size_rows();
    let f = fields(Family::Job, sizes::DEFAULT_FORMAT, false, st.time);
    let mut opts = opts;
    if opts.grouping.is_empty() {
        add_to_list(&mut opts.grouping, sizes::DEFAULT_GROUPING);
    }
    sizes::render(st, &DAY, &f, &opts, &rows)
}

#[test]
fn job_sizes_by_top_account() {
    let out = sizes_report(&style(TimeFormat::Minutes), SizesOpts::default());
    assert_eq!(
        out,
        format!(
            "{RULE}\nJob Sizes 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)\n\
             Time reported in Minutes\n{RULE}\n"
        ) + "  Cluster   Account     0-49 CPUs   50-249 CPUs  250-499 CPUs  500-999 CPUs  >= 1000 CPUs   Total Count % of cluster \n\
             --------- --------- ------------- ------------- ------------- ------------- ------------- ------------- ------------ \n\
             \x20      c1      chem           120             0             0             0             0             1        1.63% \n\
             \x20      c1      phys            60          1200          6000             0             0             4       98.37% \n"
    );
}

#[test]
fn job_sizes_counts_flat_view_and_percent() {
    let counts = sizes_report(
        &style(TimeFormat::Minutes),
        SizesOpts {
            print_job_count: true,
            ..SizesOpts::default()
        },
    );
    assert_eq!(
        counts.lines().skip(2).collect::<Vec<_>>(),
        [
            "Units are in number of jobs ran",
            RULE,
            "  Cluster   Account     0-49 CPUs   50-249 CPUs  250-499 CPUs  500-999 CPUs  >= 1000 CPUs   Total Count % of cluster ",
            "--------- --------- ------------- ------------- ------------- ------------- ------------- ------------- ------------ ",
            "       c1      chem             1             0             0             0             0             1       20.00% ",
            "       c1      phys             2             1             1             0             0             4       80.00% ",
        ]
    );
    let mut st = style(TimeFormat::Percent);
    st.mode = OutputMode::Parsable2;
    st.header = false;
    let flat = sizes_report(
        &st,
        SizesOpts {
            flat_view: true,
            grouping: vec!["50".into(), "300".into()],
            ..SizesOpts::default()
        },
    );
    assert_eq!(
        flat,
        "c1|astro|0.00%|0.00%|100.00%|1|81.30%\n\
         c1|chem|100.00%|0.00%|0.00%|1|1.63%\n\
         c1|phys|4.76%|95.24%|0.00%|3|17.07%\n"
    );
}

#[test]
fn job_sizes_individual_has_a_column_per_size() {
    let r = |acct: &str, parent: &str, secs: [u64; 3], jobs: [u64; 3]| SizeRow {
        cluster: "c1".into(),
        account: acct.into(),
        parent: parent.into(),
        secs: secs.to_vec(),
        jobs: jobs.to_vec(),
    };
    let rows = vec![
        r("phys", "root", [3600, 72_000, 0], [2, 1, 0]),
        r("astro", "phys", [0, 0, 360_000], [0, 0, 1]),
        r("chem", "root", [7200, 0, 0], [1, 0, 0]),
        r("root", "", [0; 3], [0; 3]),
    ];
    let opts = SizesOpts {
        individual: true,
        sizes: vec![1, 4, 64],
        ..SizesOpts::default()
    };
    let st = style(TimeFormat::Minutes);
    let f = fields(Family::Job, sizes::DEFAULT_FORMAT, false, st.time);
    let out = sizes::render(&st, &DAY, &f, &opts, &rows);
    assert_eq!(
        out.lines().skip(4).collect::<Vec<_>>(),
        [
            "  Cluster   Account        1 CPUs        4 CPUs       64 CPUs   Total Count % of cluster ",
            "--------- --------- ------------- ------------- ------------- ------------- ------------ ",
            "       c1      chem           120             0             0             1        1.63% ",
            "       c1      phys            60          1200          6000             4       98.37% ",
        ]
    );
    let mut st = style(TimeFormat::MinPer);
    st.mode = OutputMode::Parsable2;
    let counts = SizesOpts {
        print_job_count: true,
        flat_view: true,
        ..opts
    };
    let f = fields(Family::Job, sizes::DEFAULT_FORMAT, false, st.time);
    let out = sizes::render(&st, &DAY, &f, &counts, &rows);
    assert_eq!(
        out.lines().skip(4).collect::<Vec<_>>(),
        [
            "Cluster|Account|1 CPUs|4 CPUs|64 CPUs|Total Count|% of cluster",
            "c1|astro|0|0|1|1|20.00%",
            "c1|chem|1|0|0|1|20.00%",
            "c1|phys|2|1|0|3|60.00%",
        ]
    );
}
