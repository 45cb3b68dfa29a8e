//! The automatic handling against a scripted controller, in simulated time: the guide's three
//! outputs line for line, and the other ways a combination of instructions ends.

use std::path::PathBuf;
use std::time::Duration;

use ::smd::{Allocation, ErrorCode, Node, NodeState, SmdError};

use super::handle::{Effects, Handler, NonstopOps, Outcome};
use super::policy::{FAILED_VAR, FAILING_VAR, Policy};

/// A job's allocation and the spares that appear after `busy_rounds` refused replacements.
struct Script {
    alloc: Allocation,
    spares: Vec<String>,
    busy_rounds: usize,
    calls: Vec<String>,
}

impl Script {
    fn new(job: u32, nodes: &[(&str, NodeState)], spares: &[&str]) -> Self {
        let mut s = Self {
            alloc: Allocation {
                job_id: job,
                time_limit_minutes: 60,
                nodes: nodes
                    .iter()
                    .map(|(n, st)| Node {
                        name: n.to_string(),
                        cpus: 1,
                        state: *st,
                    })
                    .collect(),
                ..Allocation::default()
            },
            spares: spares.iter().map(|s| s.to_string()).collect(),
            busy_rounds: 0,
            calls: Vec::new(),
        };
        s.relist();
        s
    }

    fn relist(&mut self) {
        let names: Vec<&str> = self.alloc.nodes.iter().map(|n| n.name.as_str()).collect();
        self.alloc.node_list = names.join(",");
        self.alloc.cpus_per_node = format!("1(x{})", names.len());
    }
}

fn refused() -> SmdError {
    SmdError::Rpc {
        code: ErrorCode::Refused,
        message: "Failed to replace the node".to_string(),
    }
}

impl NonstopOps for Script {
    fn job_nodes(&mut self, _: u32) -> Result<Allocation, SmdError> {
        self.calls.push("job_nodes".into());
        Ok(self.alloc.clone())
    }
    fn replace_node(&mut self, _: u32, node: &str) -> Result<Allocation, SmdError> {
        self.calls.push(format!("replace {node}"));
        if self.busy_rounds > 0 || self.spares.is_empty() {
            self.busy_rounds = self.busy_rounds.saturating_sub(1);
            return Err(refused());
        }
        let spare = self.spares.remove(0);
        let n = self
            .alloc
            .nodes
            .iter_mut()
            .find(|n| n.name == node)
            .unwrap();
        n.name = spare;
        n.state = NodeState::Ok;
        self.relist();
        Ok(self.alloc.clone())
    }
    fn drop_node(&mut self, _: u32, node: &str) -> Result<Allocation, SmdError> {
        self.calls.push(format!("drop {node}"));
        self.alloc.nodes.retain(|n| n.name != node);
        self.relist();
        Ok(self.alloc.clone())
    }
    fn extend_time(&mut self, _: u32, minutes: u32) -> Result<Allocation, SmdError> {
        self.calls.push(format!("extend {minutes}"));
        self.alloc.time_limit_minutes += minutes;
        Ok(self.alloc.clone())
    }
}

#[derive(Default)]
struct Recorded {
    sleeps: Vec<Duration>,
    files: Vec<(u32, String)>,
}

impl Effects for Recorded {
    fn sleep(&mut self, d: Duration) {
        self.sleeps.push(d);
    }
    fn write_node_file(&mut self, job: u32, text: &str) -> std::io::Result<PathBuf> {
        self.files.push((job, text.to_string()));
        Ok(super::nodefile::path(job))
    }
}

fn handle(
    script: &mut Script,
    failed: Option<&str>,
    failing: Option<&str>,
) -> (Outcome, String, Recorded) {
    let failed = failed.map(|v| Policy::parse(FAILED_VAR, v).unwrap());
    let failing = failing.map(|v| Policy::parse(FAILING_VAR, v).unwrap());
    let mut effects = Recorded::default();
    let mut out = Vec::new();
    let job = script.alloc.job_id;
    let outcome = Handler {
        ops: script,
        effects: &mut effects,
        out: &mut out,
        job,
        interval: Duration::from_secs(20),
    }
    .run(failed.as_ref(), failing.as_ref())
    .unwrap();
    (outcome, String::from_utf8(out).unwrap(), effects)
}

use NodeState::{Failed, Failing, Ok as Up};

#[test]
fn no_failure_is_the_guides_first_output() {
    let mut s = Script::new(58, &[("dario", Up), ("prometeo", Up)], &[]);
    let (outcome, out, fx) = handle(&mut s, Some("REPLACE"), None);
    assert_eq!(outcome, Outcome::Continue);
    assert_eq!(
        out,
        "is_failed: job 58 searching for FAILED hosts\nis_failed: job 58 has no FAILED nodes\n"
    );
    assert!(fx.files.is_empty() && fx.sleeps.is_empty());
}

#[test]
fn a_replaced_node_is_the_guides_second_output_and_writes_the_node_file() {
    let mut s = Script::new(59, &[("dario", Up), ("ercole", Failed)], &["prometeo"]);
    let (outcome, out, fx) = handle(&mut s, Some("REPLACE"), None);
    assert_eq!(outcome, Outcome::Continue);
    assert_eq!(
        out,
        "is_failed: job 59 searching for FAILED hosts\n\
         is_failed: job 59 has 1 FAILED nodes\n\
         is_failed: job 59 FAILED node ercole cpu_count 1\n\
         _handle_fault: job 59 handle failed_hosts\n\
         _try_replace: job 59 trying to replace 1 nodes\n\
         _try_replace: job 59 node ercole replaced by prometeo\n\
         _generate_node_file: job 59 all nodes replaced\n\
         source the /tmp/smd_job_59_nodes.sh hostfile to get the new job environment\n"
    );
    assert_eq!(fx.files.len(), 1);
    assert!(
        fx.files[0]
            .1
            .starts_with("export SLURM_NODELIST=dario,prometeo\n")
    );
    assert!(
        fx.files[0]
            .1
            .contains("export SLURM_JOB_CPUS_PER_NODE=1\\(x2\\)\n")
    );
}

#[test]
fn no_spare_waits_the_delay_then_drops_and_extends_as_the_guides_third_output() {
    let mut s = Script::new(151, &[("dario", Up), ("spartaco", Failed)], &[]);
    let (outcome, out, fx) = handle(
        &mut s,
        Some("REPLACE:TIME_LIMIT_DELAY=1:DROP:TIME_LIMIT_DROP=30"),
        None,
    );
    assert_eq!(outcome, Outcome::Continue);
    let err = "_try_replace: smd_replace_node() error job_id 151: Failed to replace the node\n";
    let trying = "_try_replace: job 151 trying to replace 1 nodes\n";
    let expected = format!(
        "is_failed: job 151 searching for FAILED hosts\n\
         is_failed: job 151 has 1 FAILED nodes\n\
         is_failed: job 151 FAILED node spartaco cpu_count 1\n\
         _handle_fault: job 151 handle failed_hosts\n\
         {trying}{err}\
         _time_limit_extend: job 151 extending job time limit by 1 minutes\n\
         _increase_job_runtime: job 151 run time limit extended by 1min successfully\n\
         _try_replace: job 151 waited for 0 sec cnt 0 trying every 20 sec...\n\
         {trying}{err}\
         _try_replace: job 151 waited for 20 sec cnt 1 trying every 20 sec...\n\
         {trying}{err}\
         _try_replace: job 151 waited for 40 sec cnt 2 trying every 20 sec...\n\
         _try_replace: job 151 failed to replace down or failing nodes:\n   spartaco\n\
         _drop_nodes: job 151 node spartaco dropped all right\n\
         _generate_node_file: job 151 all nodes replaced\n\
         source the /tmp/smd_job_151_nodes.sh hostfile to get the new job environment\n\
         _time_limit_extend: job 151 extending job time limit by 30 minutes\n\
         _increase_job_runtime: job 151 run time limit extended by 30min successfully\n"
    );
    assert_eq!(out, expected);
    assert_eq!(fx.sleeps, vec![Duration::from_secs(20); 3]);
    assert_eq!(s.alloc.time_limit_minutes, 91);
    assert_eq!(s.alloc.node_list, "dario");
    assert!(fx.files[0].1.contains("export SLURM_NNODES=1\n"));
}

#[test]
fn a_spare_freed_while_waiting_is_taken_and_each_replacement_extends() {
    let mut s = Script::new(7, &[("a", Failed), ("b", Failed), ("c", Up)], &["s1", "s2"]);
    s.busy_rounds = 2;
    let (outcome, out, fx) = handle(
        &mut s,
        Some("REPLACE:TIME_LIMIT_DELAY=4:TIME_LIMIT_EXTEND=2:EXIT_JOB"),
        None,
    );
    assert_eq!(outcome, Outcome::Continue, "{out}");
    assert_eq!(fx.sleeps.len(), 2);
    assert!(out.contains("_try_replace: job 7 node a replaced by s1\n"));
    assert!(out.contains("_try_replace: job 7 node b replaced by s2\n"));
    // The delay is granted once, then 2 minutes per replaced node.
    assert_eq!(
        s.calls
            .iter()
            .filter(|c| c.starts_with("extend"))
            .collect::<Vec<_>>(),
        ["extend 4", "extend 4"]
    );
    assert_eq!(s.alloc.node_list, "s1,s2,c");
}

#[test]
fn nodes_no_instruction_could_fix_make_the_job_exit() {
    let mut s = Script::new(8, &[("a", Failed)], &[]);
    let (outcome, out, fx) = handle(&mut s, Some("REPLACE"), None);
    assert_eq!(outcome, Outcome::ExitJob);
    assert!(fx.sleeps.is_empty() && fx.files.is_empty());
    assert!(out.ends_with(
        "_try_replace: job 8 failed to replace down or failing nodes:\n   a\n\
         _handle_fault: job 8 has 1 FAILED nodes left, the job should exit\n"
    ));
    let mut s = Script::new(8, &[("a", Failed)], &["spare"]);
    let (outcome, _, _) = handle(&mut s, Some("EXIT_JOB"), None);
    assert_eq!(outcome, Outcome::ExitJob);
    assert_eq!(s.calls, ["job_nodes"]);
}

#[test]
fn without_instructions_both_classes_are_only_reported() {
    let mut s = Script::new(9, &[("a", Failed), ("b", Failing), ("c", Up)], &["spare"]);
    let (outcome, out, _) = handle(&mut s, None, None);
    assert_eq!(outcome, Outcome::Continue);
    assert_eq!(
        out,
        "is_failed: job 9 searching for FAILED hosts\n\
         is_failed: job 9 has 1 FAILED nodes\n\
         is_failed: job 9 FAILED node a cpu_count 1\n\
         is_failing: job 9 searching for FAILING hosts\n\
         is_failing: job 9 has 1 FAILING nodes\n\
         is_failing: job 9 FAILING node b cpu_count 1\n"
    );
    assert_eq!(s.calls, ["job_nodes"]);
}

#[test]
fn failing_nodes_follow_their_own_variable() {
    let mut s = Script::new(10, &[("a", Failed), ("b", Failing), ("c", Failing)], &[]);
    let (outcome, out, fx) = handle(&mut s, None, Some("DROP:TIME_LIMIT_DROP=5"));
    assert_eq!(outcome, Outcome::Continue, "{out}");
    assert!(!out.contains("is_failed"));
    assert!(out.contains("_handle_fault: job 10 handle failing_hosts\n"));
    assert_eq!(s.calls, ["job_nodes", "drop b", "drop c", "extend 10"]);
    assert_eq!(fx.files.len(), 1);
}

#[test]
fn an_unreachable_controller_is_an_error_not_a_verdict() {
    struct Down;
    impl NonstopOps for Down {
        fn job_nodes(&mut self, _: u32) -> Result<Allocation, SmdError> {
            Err(SmdError::Rpc {
                code: ErrorCode::Timeout,
                message: "Socket timed out on send/recv operation".into(),
            })
        }
        fn replace_node(&mut self, _: u32, _: &str) -> Result<Allocation, SmdError> {
            unreachable!()
        }
        fn drop_node(&mut self, _: u32, _: &str) -> Result<Allocation, SmdError> {
            unreachable!()
        }
        fn extend_time(&mut self, _: u32, _: u32) -> Result<Allocation, SmdError> {
            unreachable!()
        }
    }
    let mut effects = Recorded::default();
    let mut out = Vec::new();
    let r = Handler {
        ops: &mut Down,
        effects: &mut effects,
        out: &mut out,
        job: 1,
        interval: Duration::from_secs(20),
    }
    .run(None, None);
    assert!(r.is_err());
}
