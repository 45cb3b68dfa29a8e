//! The real `smd` binary against a fake controller's Nonstop service: queries, operations,
//! errors, events as they arrive, the addresses of nonstop.conf. The automatic handling is in
//! `smd_auto`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::smd_support::{FakeNonstop, SMD, alloc, smd};
use sluice_wire::proto::{NonstopAllocation, NonstopEvent, NonstopEventKind};

use sluice_wire::proto::NonstopNodeState::{Failed, Failing, Ok as Up};

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
fn a_quiet_job_is_watched_past_message_timeout() {
    let f = FakeNonstop::start(alloc(64, &[("dario", Up), ("ercole", Up)]), &[]);
    let text = std::fs::read_to_string(&f.conf).unwrap();
    std::fs::write(
        &f.conf,
        text.replace("MessageTimeout=5", "MessageTimeout=1"),
    )
    .unwrap();
    let child = Command::new(SMD)
        .args(["-j", "64", "--wait"])
        .env("SLURM_CONF", &f.conf)
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nothing happens for longer than MessageTimeout: a watch is not a request waiting for its
    // reply, and must not give up (this pause is the scenario, not a wait for a state).
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let event = |kind: NonstopEventKind, node: &str, limit: u32| NonstopEvent {
        kind: kind as i32,
        node: node.into(),
        time: 1_795_255_200,
        allocation: Some(NonstopAllocation {
            job_id: 64,
            node_list: "dario,ercole".into(),
            time_limit_minutes: limit,
            ..Default::default()
        }),
        ..Default::default()
    };
    for e in [
        event(NonstopEventKind::Failing, "ercole", 60),
        event(NonstopEventKind::TimeExtended, "", 90),
        event(NonstopEventKind::JobEnded, "", 0),
    ] {
        f.events.send(e).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "2026-11-21T10:00:00 job 64 FAILING node ercole (nodes dario,ercole)\n\
         2026-11-21T10:00:00 job 64 TIME_EXTENDED time limit now 01:30:00 (nodes dario,ercole)\n\
         2026-11-21T10:00:00 job 64 JOB_ENDED ended (nodes dario,ercole)\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
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
