//! The real `smd` binary (and `nonstop.sh`) against a fake controller's Nonstop service:
//! queries, operations, the automatic handling of the guide, events as they arrive.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::{Command, Stdio};

use crate::smd_support::{FakeNonstop, SMD, node, smd, unique_job};
use sluice_wire::proto::{NonstopAllocation, NonstopEvent, NonstopEventKind, NonstopNodeState};

use NonstopNodeState::{Failed, Failing, Ok as Up};

fn alloc(job: u32, nodes: &[(&str, NonstopNodeState)]) -> NonstopAllocation {
    NonstopAllocation {
        job_id: job,
        nodes: nodes.iter().map(|(n, s)| node(n, *s)).collect(),
        time_limit_minutes: 60,
        extend_available_minutes: 30,
        spares_free: 1,
        ..Default::default()
    }
}

#[test]
fn query_shows_the_nodes_for_people_and_for_scripts() {
    let f = FakeNonstop::start(
        alloc(
            58,
            &[("dario", Up), ("ercole", Failed), ("spartaco", Failing)],
        ),
        &[],
    );
    let out = smd(&f.conf, &["-j", "58"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "JobId=58 NodeList=dario,ercole,spartaco NumNodes=3 CPUsPerNode=2(x3) TimeLimit=01:00:00 \
         ExtendAvailable=30 SparesUsed=0 SparesFree=1\n\
         \x20  JobID NodeName         CPUs State    \n\
         -------- --------------- ----- -------- \n\
         \x20     58 dario               2 OK       \n\
         \x20     58 ercole              2 FAILED   \n\
         \x20     58 spartaco            2 FAILING  \n"
    );
    let out = smd(&f.conf, &["-p", "--failed"], &[("SLURM_JOB_ID", "58")]);
    assert_eq!(
        out.stdout,
        "JobID|NodeName|CPUs|State|\n58|ercole|2|FAILED|\n"
    );
    let out = smd(&f.conf, &["-pF", "-j58"], &[]);
    assert_eq!(
        out.stdout,
        "JobID|NodeName|CPUs|State|\n58|spartaco|2|FAILING|\n"
    );
}

#[test]
fn operations_print_the_change_and_refusals_are_errors() {
    let f = FakeNonstop::start(
        alloc(59, &[("dario", Up), ("ercole", Failed)]),
        &["prometeo"],
    );
    let out = smd(&f.conf, &["-j", "59", "-r", "ercole"], &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            0,
            "Job 59: node ercole replaced by prometeo (nodes dario,prometeo)\n"
        ),
        "{}",
        out.stderr
    );
    let out = smd(&f.conf, &["-j", "59", "-r", "dario"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "smd: error: replace dario of job 59: Failed to replace the node\n"
        )
    );
    let out = smd(
        &f.conf,
        &["-j", "59", "-p", "-D", "dario", "-R", "ecc errors"],
        &[],
    );
    assert_eq!(
        out.stdout,
        "JobID|NodeName|State|Reason|\n59|dario|FAILING|ecc errors|\n"
    );
    let out = smd(&f.conf, &["-j", "59", "-p", "--drop", "dario"], &[]);
    assert_eq!(out.stdout, "JobID|NodeName|NodeList|\n59|dario|prometeo|\n");
    let out = smd(&f.conf, &["-j", "59", "-e", "20"], &[]);
    assert_eq!(
        out.stdout,
        "Job 59: time limit extended by 20 minutes to 01:20:00 (10 more minutes available)\n"
    );
    let out = smd(&f.conf, &["-j", "59", "-e", "20"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "smd: error: extend the time limit of job 59: Job 59 may extend its time limit by 10 minutes at most\n"
        )
    );
    let out = smd(&f.conf, &["-j", "60", "-q"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (1, "smd: error: query job 60: Access/permission denied\n")
    );
    assert_eq!(
        f.calls(),
        [
            "nodes 59",
            "replace 59 ercole",
            "nodes 59",
            "replace 59 dario",
            "drain 59 dario ecc errors",
            "drop 59 dario",
            "extend 59 20",
            "extend 59 20",
            "nodes 60"
        ]
    );
}

#[test]
fn the_automatic_handling_replaces_and_writes_the_users_node_file() {
    let job = unique_job(1);
    let f = FakeNonstop::start(
        alloc(job, &[("dario", Up), ("ercole", Failed)]),
        &["prometeo"],
    );
    let file = format!("/tmp/smd_job_{job}_nodes.sh");
    let _ = std::fs::remove_file(&file);
    let out = smd(
        &f.conf,
        &[],
        &[
            ("SLURM_JOB_ID", &job.to_string()),
            ("SMD_NONSTOP_FAILED", "REPLACE"),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "is_failed: job {job} searching for FAILED hosts\n\
             is_failed: job {job} has 1 FAILED nodes\n\
             is_failed: job {job} FAILED node ercole cpu_count 2\n\
             _handle_fault: job {job} handle failed_hosts\n\
             _try_replace: job {job} trying to replace 1 nodes\n\
             _try_replace: job {job} node ercole replaced by prometeo\n\
             _generate_node_file: job {job} all nodes replaced\n\
             source the {file} hostfile to get the new job environment\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "export SLURM_NODELIST=dario,prometeo\nexport SLURM_JOB_NODELIST=dario,prometeo\n\
         export SLURM_NNODES=2\nexport SLURM_JOB_NUM_NODES=2\n\
         export SLURM_JOB_CPUS_PER_NODE=2\\(x2\\)\nunset SLURM_TASKS_PER_NODE\n"
    );
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), nix::unistd::getuid().as_raw());
    // Sourced by a shell, it gives the new environment.
    let env = Command::new("sh")
        .arg("-c")
        .arg(format!(". {file}; echo \"$SLURM_JOB_NODELIST $SLURM_JOB_CPUS_PER_NODE ${{SLURM_TASKS_PER_NODE-unset}}\""))
        .env("SLURM_TASKS_PER_NODE", "1")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&env.stdout),
        "dario,prometeo 2(x2) unset\n"
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn no_spare_waits_the_delay_then_drops_the_node_and_extends_the_limit() {
    let job = unique_job(2);
    let f = FakeNonstop::start(alloc(job, &[("dario", Up), ("spartaco", Failed)]), &[]);
    let file = format!("/tmp/smd_job_{job}_nodes.sh");
    let out = smd(
        &f.conf,
        &[],
        &[
            ("SLURM_JOB_ID", &job.to_string()),
            (
                "SMD_NONSTOP_FAILED",
                "REPLACE:TIME_LIMIT_DELAY=1:DROP:TIME_LIMIT_DROP=20",
            ),
            ("SMD_RETRY_INTERVAL", "30"),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let err = format!(
        "_try_replace: smd_replace_node() error job_id {job}: Failed to replace the node\n"
    );
    assert!(
        out.stdout.ends_with(&format!(
            "_handle_fault: job {job} handle failed_hosts\n\
             _try_replace: job {job} trying to replace 1 nodes\n{err}\
             _time_limit_extend: job {job} extending job time limit by 1 minutes\n\
             _increase_job_runtime: job {job} run time limit extended by 1min successfully\n\
             _try_replace: job {job} waited for 0 sec cnt 0 trying every 30 sec...\n\
             _try_replace: job {job} trying to replace 1 nodes\n{err}\
             _try_replace: job {job} waited for 30 sec cnt 1 trying every 30 sec...\n\
             _try_replace: job {job} failed to replace down or failing nodes:\n   spartaco\n\
             _drop_nodes: job {job} node spartaco dropped all right\n\
             _generate_node_file: job {job} all nodes replaced\n\
             source the {file} hostfile to get the new job environment\n\
             _time_limit_extend: job {job} extending job time limit by 20 minutes\n\
             _increase_job_runtime: job {job} run time limit extended by 20min successfully\n"
        )),
        "{}",
        out.stdout
    );
    let s = f.state.lock().unwrap();
    assert_eq!(
        (s.alloc.time_limit_minutes, s.alloc.node_list.as_str()),
        (81, "dario")
    );
    drop(s);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("export SLURM_NNODES=1\n")
    );
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn exit_job_and_unfixable_nodes_exit_non_zero_also_through_nonstop_sh() {
    let job = unique_job(3);
    let f = FakeNonstop::start(alloc(job, &[("dario", Up), ("ercole", Failed)]), &[]);
    let id = job.to_string();
    for value in ["EXIT_JOB", "REPLACE", "REPLACE:EXIT_JOB"] {
        let out = smd(
            &f.conf,
            &[],
            &[("SLURM_JOB_ID", &id), ("SMD_NONSTOP_FAILED", value)],
        );
        assert_eq!(out.code, 1, "{value}: {}", out.stdout);
        assert!(out.stdout.ends_with(&format!(
            "_handle_fault: job {job} has 1 FAILED nodes left, the job should exit\n"
        )));
    }
    // Only failing nodes named: the failed one is not this variable's business.
    let out = smd(
        &f.conf,
        &[],
        &[("SLURM_JOB_ID", &id), ("SMD_NONSTOP_FAILING", "EXIT_JOB")],
    );
    assert_eq!(out.code, 0, "{}", out.stdout);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/nonstop.sh");
    let dir = std::path::Path::new(SMD).parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |value: &str| {
        Command::new("sh")
            .arg(script)
            .env("PATH", &path)
            .env("SLURM_CONF", &f.conf)
            .env("SLURM_JOB_ID", &id)
            .env("SMD_NONSTOP_FAILED", value)
            .output()
            .unwrap()
    };
    let out = run("EXIT_JOB");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains(&format!("is_failed: job {job} has 1 FAILED nodes\n"))
    );
    f.state.lock().unwrap().alloc.nodes[1].state = Up as i32;
    let out = run("EXIT_JOB");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "is_failed: job {job} searching for FAILED hosts\nis_failed: job {job} has no FAILED nodes\n"
        )
    );
}

#[test]
fn bad_instructions_are_refused_before_anything_is_asked() {
    let f = FakeNonstop::start(alloc(61, &[("dario", Failed)]), &["x"]);
    for (var, value, text) in [
        (
            "SMD_NONSTOP_FAILED",
            "REPLACE:TIME_LIMIT_DELAY=soon",
            "smd: error: invalid SMD_NONSTOP_FAILED=\"REPLACE:TIME_LIMIT_DELAY=soon\": TIME_LIMIT_DELAY needs a number of minutes",
        ),
        (
            "SMD_NONSTOP_FAILING",
            "RESTART",
            "smd: error: invalid SMD_NONSTOP_FAILING=\"RESTART\": unknown item \"RESTART\"",
        ),
        (
            "SMD_RETRY_INTERVAL",
            "0",
            "smd: error: invalid SMD_RETRY_INTERVAL=\"0\"",
        ),
    ] {
        let out = smd(&f.conf, &[], &[("SLURM_JOB_ID", "61"), (var, value)]);
        assert_eq!(out.code, 1);
        assert!(out.stderr.starts_with(text), "{}", out.stderr);
    }
    let out = smd(&f.conf, &["-j", "61", "--bogus"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "smd: unrecognized option '--bogus'\nTry \"smd --help\" for more information\n"
        )
    );
    assert!(f.calls().is_empty());
}

#[test]
fn wait_prints_each_event_as_it_arrives_until_the_job_ends() {
    let f = FakeNonstop::start(alloc(62, &[("dario", Up), ("ercole", Failed)]), &[]);
    let after = |kind: NonstopEventKind, node: &str, repl: &str, list: &str| NonstopEvent {
        kind: kind as i32,
        node: node.into(),
        replacement: repl.into(),
        time: 1_795_255_200,
        allocation: Some(NonstopAllocation {
            job_id: 62,
            node_list: list.into(),
            time_limit_minutes: 60,
            ..Default::default()
        }),
    };
    f.state.lock().unwrap().events = vec![after(
        NonstopEventKind::Failed,
        "ercole",
        "",
        "dario,ercole",
    )];
    let mut child = Command::new(SMD)
        .args(["-j", "62", "-w", "-p"])
        .env("SLURM_CONF", &f.conf)
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(
        lines.next().unwrap().unwrap(),
        "Time|Event|JobID|NodeName|Replacement|NodeList|TimeLimit|"
    );
    assert_eq!(
        lines.next().unwrap().unwrap(),
        "2026-11-21T10:00:00|FAILED|62|ercole||dario,ercole|01:00:00|"
    );
    // smd is still running, waiting: the next event is sent only now.
    f.events
        .send(after(
            NonstopEventKind::Replaced,
            "ercole",
            "prometeo",
            "dario,prometeo",
        ))
        .unwrap();
    assert_eq!(
        lines.next().unwrap().unwrap(),
        "2026-11-21T10:00:00|REPLACED|62|ercole|prometeo|dario,prometeo|01:00:00|"
    );
    f.events
        .send(after(NonstopEventKind::JobEnded, "", "", "dario,prometeo"))
        .unwrap();
    assert_eq!(
        lines.next().unwrap().unwrap(),
        "2026-11-21T10:00:00|JOB_ENDED|62|||dario,prometeo|01:00:00|"
    );
    assert!(lines.next().is_none());
    assert!(child.wait().unwrap().success());
}

#[test]
fn nonstop_conf_sends_requests_to_its_port_falling_back_to_the_backup_address() {
    let f = FakeNonstop::start(alloc(63, &[("dario", Up)]), &[]);
    // slurm.conf's controller port is dead: only nonstop.conf's Port reaches the fake.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    crate::smd_support::write_conf(f.dir.path(), dead);
    let out = smd(&f.conf, &["-j", "63", "-p"], &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("Unable to contact slurm controller"),
        "{}",
        out.stderr
    );
    let nonstop = f.dir.path().join("nonstop.conf");
    std::fs::write(
        &nonstop,
        format!(
            "ControlAddr=127.0.0.2\nBackupAddr=127.0.0.1\nPort={}\nHotSpareCount=batch:8\n",
            f.port
        ),
    )
    .unwrap();
    let out = smd(&f.conf, &["-j", "63", "-p"], &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "JobID|NodeName|CPUs|State|\n63|dario|2|OK|\n"),
        "{}",
        out.stderr
    );
    std::fs::write(&nonstop, "Port=none\n").unwrap();
    let out = smd(&f.conf, &["-j", "63"], &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("nonstop.conf:1: invalid value for Port"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_controller_without_the_plugin_says_so() {
    struct Bare;
    impl sluice_testkit::fake::nonstop_server::Nonstop for Bare {}
    let port = crate::smd_support::serve(|| {
        tonic::transport::Server::builder().add_service(
            sluice_testkit::fake::nonstop_server::NonstopServer::new(Bare),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let conf = crate::smd_support::write_conf(dir.path(), port);
    let out = smd(&conf, &["-j", "5"], &[]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "smd: error: query job 5: Failure management is not enabled on this cluster\n"
        )
    );
}
