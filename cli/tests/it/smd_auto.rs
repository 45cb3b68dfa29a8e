//! The real `smd` binary's automatic handling (and `nonstop.sh`) against a fake controller's
//! Nonstop service: the guide's outputs, the node file, the exit status, bad instructions.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;

use crate::smd_support::{FakeNonstop, SMD, alloc, smd, unique_job};
use sluice_wire::proto::NonstopNodeState::{Failed, Ok as Up};

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
