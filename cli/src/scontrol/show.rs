//! `scontrol show job|node|partition|config`: Slurm's `Key=Value` records, one record per
//! block (lines after the first indented by three spaces, a blank line after each), or one
//! line per record with `-o`.

use sluice_vocab::JobState;
use sluice_wire::proto::{ConfigReply, JobInfo, NodeInfo, PartitionInfo};

use crate::cmdutil::{group_name, user_name};
use crate::timefmt::{self, Zone};

/// Joins a record's lines in the multi-line or the one-line layout, with its ending.
fn record(lines: Vec<String>, one_liner: bool) -> String {
    if one_liner {
        format!("{}\n", lines.join(" "))
    } else {
        format!("{}\n\n", lines.join("\n   "))
    }
}

fn or_null(s: &str) -> &str {
    if s.is_empty() { "(null)" } else { s }
}

fn or_na(s: &str) -> &str {
    if s.is_empty() { "N/A" } else { s }
}

/// One job as `scontrol show job` prints it.
pub fn job(j: &JobInfo, one_liner: bool, zone: Zone) -> String {
    let state = JobState::from_stored(j.state).unwrap_or(JobState::Pending);
    let user = if j.user.is_empty() {
        user_name(j.uid)
    } else {
        j.user.clone()
    };
    let mut first = format!("JobId={}", j.job_id);
    if j.array_job_id != 0 {
        first.push_str(&format!(" ArrayJobId={}", j.array_job_id));
        if let Some(t) = j.array_task_id {
            first.push_str(&format!(" ArrayTaskId={t}"));
        }
        if j.array_throttle > 0 {
            first.push_str(&format!(" ArrayTaskThrottle={}", j.array_throttle));
        }
    }
    if j.het_job_id != 0 {
        first.push_str(&format!(
            " HetJobId={} HetJobOffset={}",
            j.het_job_id, j.het_job_offset
        ));
    }
    first.push_str(&format!(" JobName={}", j.name));
    let used = if j.start > 0 && state != JobState::Pending {
        let end = if state.is_finished() && j.end > 0 {
            j.end
        } else {
            j.now
        };
        (end - j.start - j.suspended_secs).max(0)
    } else {
        0
    };
    let ts = |t: i64| timefmt::timestamp_or(t, zone, "Unknown");
    let mut lines = vec![first];
    if j.het_job_id != 0 {
        lines.push(format!("HetJobIdSet={}", j.het_job_id_set));
    }
    lines.extend([
        format!(
            "UserId={user}({}) GroupId={}({}) MCS_label=N/A",
            j.uid,
            group_name(j.gid),
            j.gid
        ),
        {
            // Slurm adds the WCKey when wckeys are tracked; here, when the job has one.
            let mut l = format!(
                "Priority={} Nice={} Account={} QOS={}",
                j.priority,
                j.nice,
                or_null(&j.account),
                or_null(&j.qos)
            );
            if !j.wckey.is_empty() {
                l.push_str(&format!(" WCKey={}", j.wckey));
            }
            l
        },
        format!(
            "JobState={} Reason={} Dependency={}",
            state.long_name(),
            or_null(&j.reason),
            or_null(&j.dependency)
        ),
        format!(
            "Requeue={} Restarts={} BatchFlag={} Reboot={} ExitCode={}:{}",
            u8::from(j.requeue),
            j.restarts,
            u8::from(j.batch),
            u8::from(j.reboot),
            j.exit_code,
            j.signal
        ),
        format!(
            "RunTime={} TimeLimit={} TimeMin={}",
            timefmt::clock(used),
            timefmt::limit_clock(j.time_limit_min),
            if j.time_min_min > 0 {
                timefmt::limit_clock(j.time_min_min)
            } else {
                "N/A".to_string()
            }
        ),
        format!(
            "SubmitTime={} EligibleTime={}",
            ts(j.submit),
            ts(j.eligible)
        ),
        format!("AccrueTime={}", ts(j.eligible)),
        format!(
            "StartTime={} EndTime={} Deadline=N/A",
            ts(j.start),
            ts(j.end)
        ),
        format!("SuspendTime=None SecsPreSuspend={}", j.suspended_secs),
        format!("Partition={}", j.partition),
        format!(
            "ReqNodeList={} ExcNodeList={}",
            or_null(&j.req_nodes),
            or_null(&j.exc_nodes)
        ),
        format!("NodeList={}", or_null(&j.node_list)),
    ]);
    if !j.batch_host.is_empty() {
        lines.push(format!("BatchHost={}", j.batch_host));
    }
    let federated = j.fed_viable_raw != 0
        || j.fed_active_raw != 0
        || !j.fed_viable.is_empty()
        || !j.fed_active.is_empty();
    if federated {
        lines.push(format!(
            "FedOrigin={} FedViableSiblings={} FedActiveSiblings={}",
            or_null(&j.fed_origin),
            or_null(&j.fed_viable.join(",")),
            or_null(&j.fed_active.join(","))
        ));
    }
    lines.extend([
        format!(
            "NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:{}:{}:{}",
            j.node_count,
            j.cpus,
            j.ntasks,
            j.cpus_per_task,
            // Slurm shows 0 sockets and `*` for cores and threads not asked.
            j.sockets_per_node,
            or_star(j.cores_per_socket),
            or_star(j.threads_per_core)
        ),
        format!(
            "TRES=cpu={},mem={}M,node={},billing={}",
            j.cpus,
            // --mem-per-cpu: the job's memory is that on each of its CPUs.
            if j.mem_per_cpu_mb > 0 {
                j.mem_per_cpu_mb.saturating_mul(u64::from(j.cpus))
            } else {
                j.mem_mb
            },
            j.node_count,
            j.cpus
        ),
        format!(
            "Socks/Node={} NtasksPerN:B:S:C={}:0:{}:{} CoreSpec=*",
            or_star(j.sockets_per_node),
            j.ntasks_per_node,
            or_star(j.ntasks_per_socket),
            or_star(j.ntasks_per_core)
        ),
        format!(
            "MinCPUsNode={} {} MinTmpDiskNode={}",
            j.min_cpus_node.max(j.cpus_per_task),
            if j.mem_per_cpu_mb > 0 {
                format!("MinMemoryCPU={}", size_mb(j.mem_per_cpu_mb))
            } else {
                format!("MinMemoryNode={}M", j.mem_mb)
            },
            size_mb(j.tmp_mb)
        ),
        format!("Features={} DelayBoot=00:00:00", or_null(&j.constraint)),
    ]);
    if !j.cluster_features.is_empty() {
        lines.push(format!("ClusterFeatures={}", j.cluster_features));
    }
    lines.extend([
        format!(
            "OverSubscribe={} Contiguous={} Licenses=(null) Network=(null)",
            // A controller that does not say: the partition decides.
            if j.oversubscribe.is_empty() {
                "OK"
            } else {
                &j.oversubscribe
            },
            u8::from(j.contiguous)
        ),
        format!("Command={}", or_null(&j.command)),
        format!("WorkDir={}", j.workdir),
    ]);
    if !j.comment.is_empty() {
        // Slurm ends this field with a space (two before the next one on one line).
        lines.push(format!("Comment={} ", j.comment));
    }
    if j.batch {
        let stdout = output_file(j, &user, &j.stdout);
        let stderr = if j.stderr.is_empty() {
            stdout.clone()
        } else {
            output_file(j, &user, &j.stderr)
        };
        lines.push(format!("StdErr={stderr}"));
        let stdin = if j.stdin.is_empty() {
            "/dev/null".to_string()
        } else {
            output_file(j, &user, &j.stdin)
        };
        lines.push(format!("StdIn={stdin}"));
        lines.push(format!("StdOut={stdout}"));
    }
    if !j.burst_buffer.is_empty() {
        lines.push(format!("BurstBuffer={}", j.burst_buffer));
    }
    lines.push("Power=".to_string());
    if !j.container.is_empty() {
        lines.push(format!("Container={}", j.container));
    }
    record(lines, one_liner)
}

/// A count shown as `*` when not asked (0).
fn or_star(n: u32) -> String {
    if n == 0 {
        "*".to_string()
    } else {
        n.to_string()
    }
}

/// A layout count a controller may leave out (0): 1 then.
fn or_one(n: u32) -> u32 {
    n.max(1)
}

/// A size in MB as Slurm's `scontrol` prints `MinTmpDiskNode=` (`0`, `500M`, `2G`).
fn size_mb(mb: u64) -> String {
    match mb {
        0 => "0".to_string(),
        mb if mb % (1024 * 1024) == 0 => format!("{}T", mb / (1024 * 1024)),
        mb if mb % 1024 == 0 => format!("{}G", mb / 1024),
        mb => format!("{mb}M"),
    }
}

/// Slurm's NO_VAL, which `%a` names for a job that is not an array task.
const NO_ARRAY_TASK: u32 = 0xffff_fffe;

/// A batch job's output file as scontrol names it (Slurm's `_fname_format`): `%A %a %j %u %x`
/// replaced (the rest, such as `%N` or `%t`, is only known on the node and stays as written),
/// a relative name under the working directory; without `-o`, Slurm's default
/// `slurm-%j.out` (`slurm-%A_%a.out` for an array task).
fn output_file(j: &JobInfo, user: &str, pattern: &str) -> String {
    let task = j.array_task_id.unwrap_or(NO_ARRAY_TASK);
    if pattern.is_empty() {
        return if j.array_job_id != 0 {
            format!("{}/slurm-{}_{task}.out", j.workdir, j.array_job_id)
        } else {
            format!("{}/slurm-{}.out", j.workdir, j.job_id)
        };
    }
    let array_job = if j.array_task_id.is_some() && j.array_job_id != 0 {
        j.array_job_id
    } else {
        j.job_id
    };
    let name = pattern
        .replace("%A", &array_job.to_string())
        .replace("%a", &task.to_string())
        .replace("%j", &j.job_id.to_string())
        .replace("%u", user)
        .replace("%x", &j.name);
    if name.starts_with('/') {
        name
    } else {
        format!("{}/{name}", j.workdir)
    }
}

/// A node's state as scontrol spells it: the base name plus `+DRAIN`, `+COMPLETING`, ...
pub fn node_state(n: &NodeInfo) -> String {
    let mut s = n.state.to_ascii_uppercase();
    for (on, flag) in [
        (n.cloud, "+CLOUD"),
        (n.completing, "+COMPLETING"),
        (n.drain, "+DRAIN"),
        (n.invalid, "+INVALID_REG"),
        (n.power_down_requested, "+POWER_DOWN"),
        (n.powered_down, "+POWERED_DOWN"),
        (n.not_responding, "+NOT_RESPONDING"),
        (n.powering_up, "+POWERING_UP"),
        (n.powering_down, "+POWERING_DOWN"),
    ] {
        if on {
            s.push_str(flag);
        }
    }
    s
}

/// One node as `scontrol show node` prints it.
pub fn node(n: &NodeInfo, one_liner: bool, zone: Zone) -> String {
    let features = if n.features.is_empty() {
        "(null)".to_string()
    } else {
        n.features.join(",")
    };
    let ts = |t: i64| timefmt::timestamp_or(t, zone, "None");
    let alloc_tres = if n.alloc_cpus > 0 || n.alloc_memory_mb > 0 {
        format!("cpu={},mem={}M", n.alloc_cpus, n.alloc_memory_mb)
    } else {
        String::new()
    };
    let mut lines = vec![
        format!(
            "NodeName={} CoresPerSocket={}",
            n.name,
            or_one(n.cores_per_socket)
        ),
        format!(
            "CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad=N/A",
            n.alloc_cpus, n.cpus, n.cpus
        ),
        format!("AvailableFeatures={features}"),
        format!("ActiveFeatures={features}"),
        "Gres=(null)".to_string(),
        format!(
            "NodeAddr={} NodeHostName={} Port={}",
            n.addr,
            if n.hostname.is_empty() {
                &n.name
            } else {
                &n.hostname
            },
            n.port
        ),
        format!(
            "RealMemory={} AllocMem={} FreeMem=N/A Sockets={} Boards=1",
            n.real_memory_mb,
            n.alloc_memory_mb,
            // A controller that does not say: one socket per CPU (Slurm's for CPUs alone).
            if n.sockets > 0 { n.sockets } else { n.cpus }
        ),
        format!(
            "State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner=N/A MCS_label=N/A",
            node_state(n),
            or_one(n.threads_per_core),
            n.tmp_disk_mb,
            n.weight
        ),
        format!("Partitions={}", n.partitions.join(",")),
        format!(
            "BootTime={} SlurmdStartTime={}",
            ts(n.boot_time),
            // Before controllers recorded registrations, the boot time stood for it.
            ts(if n.slurmd_start_time != 0 {
                n.slurmd_start_time
            } else {
                n.boot_time
            })
        ),
        format!("LastBusyTime={} ResumeAfterTime=None", ts(n.last_busy)),
        format!(
            "CfgTRES=cpu={},mem={}M,billing={}",
            n.cpus, n.real_memory_mb, n.cpus
        ),
        format!("AllocTRES={alloc_tres}"),
    ];
    if !n.reason.is_empty() {
        lines.push(format!(
            "Reason={} [{}@{}]",
            n.reason,
            user_name(n.reason_uid),
            ts(n.reason_time)
        ));
    }
    record(lines, one_liner)
}

/// `AllowX=list`, else `DenyX=list`, else `AllowX=ALL`, as Slurm shows a partition's lists.
fn allow_deny(what: &str, allow: &[String], deny: &[String]) -> String {
    if !allow.is_empty() {
        format!("Allow{what}={}", allow.join(","))
    } else if !deny.is_empty() {
        format!("Deny{what}={}", deny.join(","))
    } else {
        format!("Allow{what}=ALL")
    }
}

/// One partition as `scontrol show partition` prints it.
pub fn partition(p: &PartitionInfo, one_liner: bool) -> String {
    let groups = if p.allow_groups.is_empty() {
        "ALL".to_string()
    } else {
        p.allow_groups.join(",")
    };
    let max_nodes = if p.max_nodes < 0 {
        "UNLIMITED".to_string()
    } else {
        p.max_nodes.to_string()
    };
    let over = if p.over_subscribe.is_empty() {
        "NO".to_string()
    } else {
        p.over_subscribe.to_ascii_uppercase()
    };
    let lines = vec![
        format!("PartitionName={}", p.name),
        format!(
            "AllowGroups={groups} {} {}",
            allow_deny("Accounts", &p.allow_accounts, &p.deny_accounts),
            allow_deny("Qos", &p.allow_qos, &p.deny_qos)
        ),
        format!(
            "AllocNodes=ALL Default={} QoS={}",
            if p.is_default { "YES" } else { "NO" },
            or_na(&p.qos)
        ),
        "DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO".to_string(),
        format!(
            "MaxNodes={max_nodes} MaxTime={} MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED",
            timefmt::limit_clock(p.max_time_min)
        ),
        format!("Nodes={}", or_null(&p.node_list)),
        format!(
            "PriorityJobFactor={} PriorityTier={} RootOnly={} ReqResv=NO OverSubscribe={over}",
            p.priority_job_factor,
            p.priority_tier,
            if p.root_only { "YES" } else { "NO" }
        ),
        "OverTimeLimit=NONE PreemptMode=OFF".to_string(),
        format!(
            "State={} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE",
            p.state.to_ascii_uppercase(),
            p.total_cpus,
            p.nodes.len()
        ),
        "JobDefaults=(null)".to_string(),
        "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED".to_string(),
    ];
    record(lines, one_liner)
}

/// `scontrol show config`: the date line, then `Key = Value` with keys padded to 23.
pub fn config(c: &ConfigReply, zone: Zone) -> String {
    let mut s = format!(
        "Configuration data as of {}\n",
        timefmt::timestamp(c.now, zone)
    );
    for e in &c.entries {
        s.push_str(&format!("{:<23} = {}\n", e.name, e.value));
    }
    s
}
