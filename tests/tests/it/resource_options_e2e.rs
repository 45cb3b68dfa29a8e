//! Resource options of issue 10 through the real binaries on a local cluster: `--mem-per-cpu`
//! (memory held per CPU, its output variable and `scontrol show job`), `--tmp` (only nodes
//! with that much `TmpDisk`), `--contiguous`, and `sbatch --test-only` / `--hold`.

use crate::common;

use common::cluster::Cluster;
use common::users::TestUser;

/// The value of `key` (`MinMemoryCPU=`) in `scontrol show` text.
fn field(text: &str, key: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .unwrap_or_else(|| panic!("{key} in {text}"))
        .to_string()
}

fn show_job(c: &Cluster, job: u32) -> String {
    c.ok("scontrol", &["show", "job", &job.to_string()])
}

#[test]
fn memory_per_cpu_is_held_per_cpu_and_reaches_the_job() {
    let c = Cluster::start_with(
        1,
        &[
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
        ],
    );
    let job = c.sbatch(&[
        "-n2",
        "--mem-per-cpu=10",
        "--wrap",
        "echo per_cpu=$SLURM_MEM_PER_CPU per_node=${SLURM_MEM_PER_NODE-unset}; sleep 300",
    ]);
    c.wait_state(job, "RUNNING");
    let show = show_job(&c, job);
    assert_eq!(field(&show, "MinMemoryCPU="), "10M", "{show}");
    assert!(!show.contains("MinMemoryNode="), "{show}");
    assert!(show.contains("TRES=cpu=2,mem=20M,"), "{show}");
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert_eq!(field(&node, "AllocMem="), "20", "{node}");
    assert_eq!(
        c.wait_file(&format!("slurm-{job}.out"), "\n"),
        "per_cpu=10 per_node=unset\n"
    );
    c.ok("scancel", &[&job.to_string()]);

    // Both sizes on the command line: Slurm's fatal error, nothing queued.
    let out = c.cmd(
        "sbatch",
        &["--mem=10", "--mem-per-cpu=10", "--wrap", "true"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"
    );
    // The command line's size beats the directive's.
    std::fs::write(
        c.work.join("mem.sh"),
        "#!/bin/sh\n#SBATCH --mem=30\necho ${SLURM_MEM_PER_NODE-unset} $SLURM_MEM_PER_CPU\n",
    )
    .unwrap();
    let out = c.cmd("sbatch", &["--parsable", "--mem-per-cpu=5", "mem.sh"]);
    let id: u32 = out.stdout.trim().parse().expect("job id");
    assert_eq!(c.wait_done(id), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{id}.out")), "unset 5\n");
    // srun and salloc take it too (salloc's shell sees its variable).
    let out = c.cmd("srun", &["--mem-per-cpu=7", "sh", "-c", "echo ok"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "ok\n"), "{out:?}");
    let out = c.cmd(
        "salloc",
        &["--mem-per-cpu=7", "sh", "-c", "echo $SLURM_MEM_PER_CPU"],
    );
    assert_eq!(out.stdout, "7\n", "{out:?}");
}

/// Stops the controller and `node`'s daemon, gives `node` `TmpDisk=mb` in the cluster's
/// `slurm.conf`, and starts them again.
fn set_tmp_disk(c: &Cluster, node: &str, mb: u64) {
    c.kill9_ctld();
    c.kill9_noded(node);
    let conf = c.conf();
    let text = std::fs::read_to_string(&conf).unwrap();
    let prefix = format!("NodeName={node} ");
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(&prefix) {
                format!("{l} TmpDisk={mb}")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&conf, edited.join("\n") + "\n").unwrap();
    c.up();
}

#[test]
fn tmp_runs_a_job_only_where_the_temporary_disk_is() {
    let c = Cluster::start(2);
    set_tmp_disk(&c, "clustern2", 500);
    let node = c.ok("scontrol", &["show", "node", "clustern2"]);
    assert_eq!(field(&node, "TmpDisk="), "500", "{node}");
    let job = c.sbatch(&["--tmp=400", "--wrap", "true"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    let nodes = c.ok(
        "squeue",
        &["-h", "-t", "all", "-o", "%N", "-j", &job.to_string()],
    );
    assert_eq!(nodes.trim(), "clustern2");
    assert_eq!(field(&show_job(&c, job), "MinTmpDiskNode="), "400M");
    // More than any node has: refused whatever EnforcePartLimits, in Slurm's two lines; so is
    // memory beyond every node (each command's own words).
    let out = c.cmd("sbatch", &["--tmp=1G", "--wrap", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "sbatch: error: Temporary disk specification can not be satisfied\n\
             sbatch: error: Batch job submission failed: Requested node configuration is not available\n"
        )
    );
    let out = c.cmd("srun", &["--mem=99999999", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "srun: error: Memory specification can not be satisfied\n\
             srun: error: Unable to allocate resources: Requested node configuration is not available\n"
        )
    );
    let out = c.cmd("salloc", &["--mem-per-cpu=99999999", "true"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            1,
            "salloc: error: Memory specification can not be satisfied\n\
             salloc: error: Job submit/allocate failed: Requested node configuration is not available\n"
        )
    );
    // A will-run test answers without that line, as Slurm's.
    let out = c.cmd("sbatch", &["--test-only", "--tmp=1G", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "allocation failure: Requested node configuration is not available\n"
    );
    // A job that fits its memory and disk but not a node's CPUs is still queued (as Slurm).
    let never = c.sbatch(&["--tmp=400", "-c", "999", "--wrap", "true"]);
    let reason = c.ok("squeue", &["-h", "-o", "%r", "-j", &never.to_string()]);
    assert_eq!(reason.trim(), "PartitionConfig");
    assert_eq!(field(&show_job(&c, never), "MinTmpDiskNode="), "400M");
    let out = c.cmd("sbatch", &["--tmp=lots", "--wrap", "true"]);
    assert_eq!(out.stderr, "sbatch: error: Invalid --tmp specification\n");
    c.ok("scancel", &[&never.to_string()]);
}

#[test]
fn contiguous_waits_for_consecutive_nodes() {
    let c = Cluster::start(3);
    let blocker = c.sbatch(&["-w", "clustern2", "--wrap", "sleep 300"]);
    c.wait_state(blocker, "RUNNING");
    // clustern1 and clustern3 are free, but not next to each other.
    let job = c.sbatch(&["-N2", "--contiguous", "--wrap", "true"]);
    let show = show_job(&c, job);
    assert_eq!(field(&show, "Contiguous="), "1", "{show}");
    let reason = c.ok("squeue", &["-h", "-o", "%r", "-j", &job.to_string()]);
    assert_eq!(reason.trim(), "Resources");
    c.ok("scancel", &[&blocker.to_string()]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    let nodes = c.ok(
        "squeue",
        &["-h", "-t", "all", "-o", "%N", "-j", &job.to_string()],
    );
    assert_eq!(nodes.trim(), "clustern[1-2]");
    let plain = c.sbatch(&["--wrap", "true"]);
    assert_eq!(field(&show_job(&c, plain), "Contiguous="), "0");
}

#[test]
fn test_only_creates_no_job_and_hold_waits_for_release() {
    let c = Cluster::start(2);
    let out = c.cmd("sbatch", &["--test-only", "-N2", "--wrap", "true"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    let line = out.stderr.trim_end();
    let rest = line.strip_prefix("sbatch: Job ").expect(line);
    let (_, rest) = rest.split_once(" to start at ").expect(line);
    let (when, rest) = rest.split_once(' ').expect(line);
    assert_eq!(when.len(), "2026-11-27T01:00:00".len(), "{line}");
    assert_eq!(
        rest,
        "using 4 processors on nodes clustern[1-2] in partition debug"
            .replace('4', &(2 * host_cpus()).to_string()),
        "{line}"
    );
    assert_eq!(
        c.ok("squeue", &["-h", "-t", "all"]),
        "",
        "no job was created"
    );
    // A request no node could meet: refused as a submission would be, in Slurm's words (its
    // `slurm_perror`: no `sbatch: error:` prefix).
    let out = c.cmd("sbatch", &["--test-only", "--tmp=1T", "--wrap", "true"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr, "allocation failure: Requested node configuration is not available\n",
        "{out:?}"
    );

    let held = c.sbatch(&["--hold", "--wrap", "true"]);
    let reason = c.ok("squeue", &["-h", "-o", "%r", "-j", &held.to_string()]);
    assert_eq!(reason.trim(), "JobHeldUser");
    assert_eq!(c.state(&held.to_string()), "PENDING");
    c.ok("scontrol", &["release", &held.to_string()]);
    assert_eq!(c.wait_done(held), "COMPLETED");
}

#[test]
fn socket_core_and_thread_options_reach_selection_and_the_job() {
    // Nodes configured with CPUs alone: one socket of one single-thread core per CPU.
    let c = Cluster::start(1);
    let cpus = host_cpus();
    let node = c.ok("scontrol", &["show", "node", "clustern1"]);
    assert_eq!(field(&node, "Sockets="), cpus.to_string(), "{node}");
    assert_eq!(field(&node, "CoresPerSocket="), "1", "{node}");
    assert_eq!(field(&node, "ThreadsPerCore="), "1", "{node}");
    let job = c.sbatch(&[
        "-B",
        &format!("{cpus}:1"),
        "--ntasks-per-core=1",
        "--wrap",
        "echo $SLURM_NTASKS_PER_CORE ${SLURM_THREADS_PER_CORE-unset}",
    ]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{job}.out")), "1 unset\n");
    let show = show_job(&c, job);
    assert_eq!(
        field(&show, "ReqB:S:C:T="),
        format!("0:{cpus}:1:*"),
        "{show}"
    );
    assert_eq!(field(&show, "NtasksPerN:B:S:C="), "0:0:*:1", "{show}");
    // More sockets or threads than any node has: the partition can never run it.
    for args in [
        vec!["--sockets-per-node", "64"],
        vec!["--threads-per-core=2"],
        vec!["-B", "*:*:2"],
    ] {
        let mut all = args.clone();
        all.extend(["--wrap", "true"]);
        let never = c.sbatch(&all);
        let reason = c.ok("squeue", &["-h", "-o", "%r", "-j", &never.to_string()]);
        assert_eq!(reason.trim(), "PartitionConfig", "{args:?}");
        c.ok("scancel", &[&never.to_string()]);
    }
    let out = c.cmd("sbatch", &["-B", "1:x", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: Invalid --extra-node-info specification\n"
    );
}

#[test]
fn resource_limits_travel_with_the_job_as_slurm_propagates_them() {
    let c = Cluster::start(1);
    // By default (PropagateResourceLimits=ALL) every soft limit goes along; the variables
    // carrying them are not left in the job's environment.
    let out = c.shell(
        "ulimit -S -n 321 && exec sbatch --parsable --wrap 'ulimit -n; env | grep -c SLURM_RLIMIT || true'",
    );
    let job: u32 = out
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{job}.out")), "321\n0\n");
    // --propagate=NONE: the node's own limit.
    let out =
        c.shell("ulimit -S -n 321 && exec sbatch --parsable --propagate=NONE --wrap 'ulimit -n'");
    let job: u32 = out
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_ne!(c.read(&format!("slurm-{job}.out")), "321\n");
    // srun's tasks, only the limit named.
    let out = c.shell(
        "ulimit -S -n 300 && ulimit -S -c 0 && exec srun --propagate=NOFILE sh -c 'ulimit -n'",
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, "300\n"), "{out:?}");
    let out = c.cmd("sbatch", &["--propagate=NOFILE,BOGUS", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: --propagate=NOFILE,BOGUS is not valid.\n"
    );
}

fn as_user(c: &Cluster, user: &TestUser, program: &str, args: &[&str]) -> common::CmdOutput {
    let mut cmd = c.command(program, args);
    common::run(user.apply(&mut cmd), None)
}

#[test]
#[cfg_attr(not(test_as_root), ignore = "needs root to create users")]
fn uid_submits_for_a_user_who_then_owns_and_runs_the_job() {
    use std::os::unix::fs::PermissionsExt;
    let user = TestUser::create("ui");
    let c = Cluster::start(1);
    // The user reaches the site and writes the job's output in the work directory.
    std::fs::set_permissions(c.dir().parent().unwrap(), PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&c.work, PermissionsExt::from_mode(0o1777)).unwrap();
    let job = c.sbatch(&["--uid", &user.name, "--wrap", "id -u; id -g"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(
        c.read(&format!("slurm-{job}.out")),
        format!("{}\n{}\n", user.uid, user.gid)
    );
    let owner = c.ok(
        "squeue",
        &["-h", "-t", "all", "-o", "%u", "-j", &job.to_string()],
    );
    assert_eq!(owner.trim(), user.name);
    // By number, with root's group.
    let job = c.sbatch(&["--uid", &user.uid.to_string(), "--gid=0", "--wrap", "id -g"]);
    assert_eq!(c.wait_done(job), "COMPLETED");
    assert_eq!(c.read(&format!("slurm-{job}.out")), "0\n");
    // Only root may, and only for a user that exists.
    let out = as_user(&c, &user, "sbatch", &["--uid=root", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: --uid only permitted by root user\n"
    );
    let out = as_user(&c, &user, "sbatch", &["--gid=0", "--wrap", "true"]);
    assert_eq!(
        out.stderr,
        "sbatch: error: --gid only permitted by root user\n"
    );
    let out = c.cmd("sbatch", &["--uid=nosuchuser", "--wrap", "true"]);
    assert_eq!(out.stderr, "sbatch: error: Invalid --uid specification\n");
}

/// The CPUs each node of a `sluice up` cluster has: those of this host.
fn host_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
