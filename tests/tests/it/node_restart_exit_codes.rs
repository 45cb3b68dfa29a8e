//! A node daemon restart costs no exit code. Each batch script runs under its supervisor
//! (`sluice-stepd`), which outlives the node daemon: a script that ends while its node daemon
//! is down, or after it came back, is recorded with its real exit code, and `afterok`
//! dependants start. Tried both ways an operator meets it: the node daemon killed with
//! `kill -9`, and the whole site stopped with `sluice down` and started with `sluice up`.

use crate::common;

use common::cluster::Cluster;

/// A script that waits for the file `<name>.go` in the work directory, then exits `code`.
fn gated(name: &str, code: i32) -> String {
    format!(
        "echo $SLURMD_NODENAME > {name}.node; while [ ! -e {name}.go ]; do sleep 0.1; done; exit {code}"
    )
}

/// `State|ExitCode` of `job` in sacct once it shows `state`.
fn wait_sacct(c: &Cluster, job: u32, want: &str) {
    c.wait_for(&format!("job {job} as {want} in sacct"), || {
        let out = c.cmd(
            "sacct",
            &[
                "-n",
                "-X",
                "-P",
                "-o",
                "State,ExitCode",
                "-j",
                &job.to_string(),
            ],
        );
        out.stdout.trim() == want
    });
}

/// Starts an `afterok` pair and a failing job (on two nodes), lets `during` restart the node
/// daemon side (given the nodes the jobs run on), with the failing job ending meanwhile, then
/// checks that every real exit code arrived.
fn exit_codes_survive(c: &Cluster, during: impl FnOnce(&Cluster, &[String])) {
    let ok = c.sbatch(&["--wrap", &gated("ok", 0)]);
    let failing = c.sbatch(&["--wrap", &gated("failing", 3)]);
    let after = c.sbatch(&[&format!("--dependency=afterok:{ok}"), "--wrap", "true"]);
    let mut nodes = Vec::new();
    for (job, name) in [(ok, "ok"), (failing, "failing")] {
        let node = c.wait_file(&format!("{name}.node"), "n").trim().to_string();
        // Once the node daemon has recorded the launch, it finds the script again.
        let record = c
            .dir()
            .join(format!("cluster/spool/{node}/launches/{job}_0"));
        c.wait_for("the launch record", || record.exists());
        nodes.push(node);
    }
    during(c, &nodes);
    std::fs::write(c.work.join("ok.go"), "").unwrap();
    assert_eq!(c.wait_done(ok), "COMPLETED");
    assert_eq!(c.wait_done(failing), "FAILED");
    wait_sacct(c, ok, "COMPLETED|0:0");
    wait_sacct(c, failing, "FAILED|3:0");
    assert_eq!(c.wait_done(after), "COMPLETED", "afterok ran");
}

#[test]
fn a_killed_node_daemon_loses_no_exit_code() {
    let c = Cluster::start(2);
    exit_codes_survive(&c, |c, nodes| {
        for node in nodes {
            c.kill9_noded(node);
        }
        // Ends while no node daemon runs: its supervisor keeps the status.
        std::fs::write(c.work.join("failing.go"), "").unwrap();
        let launches = c.dir().join(format!("cluster/spool/{}/launches", nodes[1]));
        c.wait_for("the failing script's status", || {
            std::fs::read_dir(&launches).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".status")))
            })
        });
        c.up();
    });
}

#[test]
fn sluice_down_and_up_lose_no_exit_code() {
    let c = Cluster::start(2);
    exit_codes_survive(&c, |c, _| {
        let out = c.sluice(&["down"]);
        assert_eq!(out.code, 0, "{out:?}");
        std::fs::write(c.work.join("failing.go"), "").unwrap();
        c.up();
    });
}

#[test]
fn sluice_up_reports_a_restarted_node_daemon_that_died_at_once() {
    let c = Cluster::start(1);
    let shown = c.ok("scontrol", &["show", "node", "clustern1"]);
    let field = |name: &str| {
        shown
            .split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {shown}"))
            .to_string()
    };
    let (addr, port) = (field("NodeAddr="), field("Port="));
    c.kill9_noded("clustern1");
    // The port is still taken (as by a killed daemon not quite gone): the new one cannot bind.
    // (Taken here once the killed daemon's socket is closed.)
    let mut taken = None;
    c.wait_for("the killed daemon's port to be free", || {
        taken = std::net::TcpListener::bind(format!("{addr}:{port}")).ok();
        taken.is_some()
    });
    let out = c.sluice(&["up", "--detach"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("sluice-noded exited while starting"),
        "{out:?}"
    );
    drop(taken);
    c.up();
    assert_eq!(c.wait_done(c.sbatch(&["--wrap", "true"])), "COMPLETED");
}
