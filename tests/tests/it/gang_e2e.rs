//! Gang scheduling on a real local cluster: two jobs forced onto the same node take turns, one
//! `SchedulerTimeSlice` at a time. squeue shows each of them both running and suspended, and
//! the CPU time their processes get (read from `/proc/<pid>/stat`) is shared about evenly,
//! never both at once (the node daemon really stops and continues them).

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::cluster::Cluster;

/// `SchedulerTimeSlice` of the test cluster, in seconds.
const SLICE_SECS: u64 = 5;
/// How many timeslices the CPU time is measured over.
const SLICES: u64 = 6;

/// A batch job that writes its shell's pid to `<name>.pid` and then burns CPU in that shell.
fn burner(name: &str) -> String {
    format!("echo $$ > {name}.pid.tmp && mv {name}.pid.tmp {name}.pid; while :; do :; done")
}

/// User plus system CPU ticks of process `pid`, from `/proc/<pid>/stat`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("reading /proc/{pid}/stat: {e}"));
    // Fields after the command name: state is the first, utime and stime the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| -> u64 {
        fields
            .get(i)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no field {i} in {stat}"))
    };
    field(11) + field(12)
}

/// Short states (`%t`) of `jobs` as squeue shows them now.
fn states(c: &Cluster, jobs: &[u32]) -> Vec<(u32, String)> {
    let list: Vec<String> = jobs.iter().map(u32::to_string).collect();
    let out = c.ok(
        "squeue",
        &["-h", "-t", "all", "-j", &list.join(","), "-o", "%i %t"],
    );
    out.lines()
        .filter_map(|l| {
            let (id, st) = l.split_once(' ')?;
            Some((id.trim().parse().ok()?, st.trim().to_string()))
        })
        .collect()
}

#[test]
fn two_jobs_on_one_node_alternate_and_share_the_cpu_about_evenly() {
    let slice = format!("SchedulerTimeSlice={SLICE_SECS}");
    let c = Cluster::start_with(
        1,
        &[
            "PreemptMode=GANG",
            &slice,
            "PartitionName=gang Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=FORCE:2",
        ],
    );
    let a = c.sbatch(&["-p", "gang", "-J", "burn_a", "--wrap", &burner("a")]);
    let b = c.sbatch(&["-p", "gang", "-J", "burn_b", "--wrap", &burner("b")]);
    // The second job starts suspended; it writes its pid once it got its first slice.
    let pid_of = |name: &str| -> u32 {
        c.wait_file(&format!("{name}.pid"), "\n")
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}.pid: {e}"))
    };
    let (pid_a, pid_b) = (pid_of("a"), pid_of("b"));

    let clk_tck = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let start = Instant::now();
    let (a0, b0) = (cpu_ticks(pid_a), cpu_ticks(pid_b));
    let mut seen: BTreeSet<(u32, String)> = BTreeSet::new();
    let window = Duration::from_secs(SLICE_SECS * SLICES);
    c.wait_within(
        window + Duration::from_secs(90),
        "both jobs to be seen running and suspended over the measuring window",
        || {
            for (id, st) in states(&c, &[a, b]) {
                assert!(st == "R" || st == "S", "job {id} is {st} (expected R or S)");
                seen.insert((id, st));
            }
            start.elapsed() >= window && seen.len() == 4
        },
    );
    let (a1, b1) = (cpu_ticks(pid_a), cpu_ticks(pid_b));
    let wall = start.elapsed().as_secs_f64() * clk_tck;
    let (da, db) = ((a1 - a0) as f64, (b1 - b0) as f64);
    let total = da + db;
    eprintln!("CPU ticks over {wall:.0} ticks of wall clock: a {da}, b {db}");
    assert!(
        total > 0.0,
        "the burners got no CPU time at all (a {da}, b {db} ticks)"
    );
    let share_a = da / total;
    assert!(
        (0.3..=0.7).contains(&share_a),
        "each job should get about half the CPU time: a {da} ticks, b {db} ticks"
    );
    // With 2 CPUs or more, both running at once would give about 2 × wall clock between them.
    assert!(
        total <= wall * 1.4,
        "the jobs ran at the same time: {total} ticks in {wall} ticks of wall clock"
    );
    c.ok("scancel", &[&a.to_string(), &b.to_string()]);
    c.wait_done(a);
    c.wait_done(b);
}
