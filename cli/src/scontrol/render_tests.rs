//! Golden outputs of `scontrol show` over hand-built records. The renderers are given UTC, so
//! every timestamp in the expected text is exact.

use sluice_vocab::JobState;
use sluice_wire::proto::{ConfigReply, EnvVar, JobInfo, NodeInfo, PartitionInfo};

use super::show;
use crate::timefmt::Zone;

const NOW: i64 = 1_795_255_200;

fn running_job() -> JobInfo {
    JobInfo {
        job_id: 5,
        name: "x".into(),
        uid: 0,
        gid: 0,
        user: "alice".into(),
        partition: "debug".into(),
        state: JobState::Running.stored(),
        reason: "None".into(),
        time_limit_min: 60,
        submit: NOW - 60,
        eligible: NOW - 60,
        start: NOW - 5,
        end: NOW + 3595,
        node_list: "n1".into(),
        node_count: 1,
        cpus: 2,
        ntasks: 1,
        cpus_per_task: 2,
        mem_mb: 100,
        workdir: "/home/alice".into(),
        stdout: "/home/alice/slurm-5.out".into(),
        stderr: "/home/alice/slurm-5.out".into(),
        batch_host: "n1".into(),
        requeue: true,
        priority: 7,
        command: "/home/alice/job.sh".into(),
        now: NOW,
        batch: true,
        ..Default::default()
    }
}

#[test]
fn show_job_prints_slurms_record() {
    let root = crate::cmdutil::group_name(0);
    assert_eq!(
        show::job(&running_job(), false, Zone::Utc),
        format!(
            "JobId=5 JobName=x\n   \
UserId=alice(0) GroupId={root}(0) MCS_label=N/A\n   \
Priority=7 Nice=0 Account=(null) QOS=(null)\n   \
JobState=RUNNING Reason=None Dependency=(null)\n   \
Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n   \
RunTime=00:00:05 TimeLimit=01:00:00 TimeMin=N/A\n   \
SubmitTime=2026-11-21T09:59:00 EligibleTime=2026-11-21T09:59:00\n   \
AccrueTime=2026-11-21T09:59:00\n   \
StartTime=2026-11-21T09:59:55 EndTime=2026-11-21T10:59:55 Deadline=N/A\n   \
SuspendTime=None SecsPreSuspend=0\n   \
Partition=debug\n   \
ReqNodeList=(null) ExcNodeList=(null)\n   \
NodeList=n1\n   \
BatchHost=n1\n   \
NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2 ReqB:S:C:T=0:0:*:*\n   \
TRES=cpu=2,mem=100M,node=1,billing=2\n   \
Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n   \
MinCPUsNode=2 MinMemoryNode=100M MinTmpDiskNode=0\n   \
Features=(null) DelayBoot=00:00:00\n   \
OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n   \
Command=/home/alice/job.sh\n   \
WorkDir=/home/alice\n   \
StdErr=/home/alice/slurm-5.out\n   \
StdIn=/dev/null\n   \
StdOut=/home/alice/slurm-5.out\n   \
Power=\n\n"
        )
    );
}

#[test]
fn one_liner_joins_with_spaces_and_pending_times_are_unknown() {
    let job = JobInfo {
        state: JobState::Pending.stored(),
        reason: "Resources".into(),
        start: 0,
        end: 0,
        node_list: String::new(),
        batch_host: String::new(),
        time_limit_min: -1,
        array_job_id: 4,
        array_task_id: Some(1),
        ..running_job()
    };
    let line = show::job(&job, true, Zone::Utc);
    assert!(
        line.starts_with("JobId=5 ArrayJobId=4 ArrayTaskId=1 JobName=x UserId=alice(0) "),
        "{line}"
    );
    assert!(
        line.ends_with("StdOut=/home/alice/slurm-5.out Power=\n"),
        "{line}"
    );
    assert!(!line.contains("\n   "));
    for part in [
        "JobState=PENDING Reason=Resources",
        "RunTime=00:00:00 TimeLimit=UNLIMITED",
        "StartTime=Unknown EndTime=Unknown",
        "NodeList=(null) NumNodes=1",
    ] {
        assert!(line.contains(part), "{part} in {line}");
    }
}

#[test]
fn show_node_flags_and_reason() {
    let n = NodeInfo {
        name: "n1".into(),
        addr: "127.0.0.1".into(),
        port: 7001,
        state: "IDLE".into(),
        drain: true,
        reason: "disk bad".into(),
        reason_uid: 0,
        reason_time: NOW,
        cpus: 4,
        real_memory_mb: 1000,
        weight: 1,
        features: vec!["fast".into()],
        partitions: vec!["debug".into()],
        boot_time: NOW - 100,
        ..Default::default()
    };
    let root = crate::cmdutil::user_name(0);
    assert_eq!(
        show::node(&n, false, Zone::Utc),
        format!(
            "NodeName=n1 CoresPerSocket=1\n   \
CPUAlloc=0 CPUEfctv=4 CPUTot=4 CPULoad=N/A\n   \
AvailableFeatures=fast\n   \
ActiveFeatures=fast\n   \
Gres=(null)\n   \
NodeAddr=127.0.0.1 NodeHostName=n1 Port=7001\n   \
RealMemory=1000 AllocMem=0 FreeMem=N/A Sockets=4 Boards=1\n   \
State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   \
Partitions=debug\n   \
BootTime=2026-11-21T09:58:20 SlurmdStartTime=2026-11-21T09:58:20\n   \
LastBusyTime=None ResumeAfterTime=None\n   \
CfgTRES=cpu=4,mem=1000M,billing=4\n   \
AllocTRES=\n   \
Reason=disk bad [{root}@2026-11-21T10:00:00]\n\n"
        )
    );
}

#[test]
fn show_partition_and_config() {
    let p = PartitionInfo {
        name: "debug".into(),
        is_default: true,
        state: "UP".into(),
        max_time_min: 30,
        max_nodes: -1,
        node_list: "n[1-2]".into(),
        nodes: vec!["n1".into(), "n2".into()],
        total_cpus: 8,
        priority_job_factor: 3,
        priority_tier: 2,
        ..Default::default()
    };
    assert_eq!(
        show::partition(&p, true),
        "PartitionName=debug AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=YES QoS=N/A \
DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO \
MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=n[1-2] \
PriorityJobFactor=3 PriorityTier=2 RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF \
State=UP TotalCPUs=8 TotalNodes=2 SelectTypeParameters=NONE JobDefaults=(null) \
DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
    );
    let c = ConfigReply {
        entries: vec![
            EnvVar {
                name: "ClusterName".into(),
                value: "c1".into(),
            },
            EnvVar {
                name: "SlurmctldPort".into(),
                value: "6817".into(),
            },
        ],
        now: NOW,
    };
    assert_eq!(
        show::config(&c, Zone::Utc),
        "Configuration data as of 2026-11-21T10:00:00\n\
ClusterName             = c1\n\
SlurmctldPort           = 6817\n"
    );
}

#[test]
fn show_partition_prints_account_and_qos_lists_as_slurm() {
    let p = PartitionInfo {
        name: "p".into(),
        allow_groups: vec!["physics".into()],
        allow_accounts: vec!["a".into(), "b".into()],
        deny_accounts: vec!["ignored".into()],
        deny_qos: vec!["low".into()],
        ..Default::default()
    };
    let shown = show::partition(&p, false);
    assert!(
        shown.contains("\n   AllowGroups=physics AllowAccounts=a,b DenyQos=low\n"),
        "{shown}"
    );
    let p = PartitionInfo {
        allow_accounts: Vec::new(),
        deny_accounts: vec!["c".into()],
        ..p
    };
    assert!(
        show::partition(&p, true).contains(" DenyAccounts=c DenyQos=low "),
        "{p:?}"
    );
}

#[test]
fn show_job_prints_what_the_job_may_share() {
    for (given, shown) in [("YES", "YES"), ("NO", "NO"), ("", "OK")] {
        let job = JobInfo {
            oversubscribe: given.into(),
            ..running_job()
        };
        let text = show::job(&job, true, Zone::Utc);
        assert!(
            text.contains(&format!(" OverSubscribe={shown} Contiguous=0 ")),
            "{text}"
        );
    }
}

#[test]
fn output_file_patterns_are_expanded_as_slurm_does() {
    let std = |j: &JobInfo| -> (String, String) {
        let text = show::job(j, true, Zone::Utc);
        let field = |key: &str| {
            text.split(' ')
                .find_map(|w| w.trim_end().strip_prefix(key))
                .unwrap_or_else(|| panic!("{key} in {text}"))
                .to_string()
        };
        (field("StdOut="), field("StdErr="))
    };
    let job = JobInfo {
        name: "sim".into(),
        stdout: "out-%j-%u-%x-%N-%t-%5j.txt".into(),
        stderr: "/abs/%A_%a.err".into(),
        ..running_job()
    };
    assert_eq!(
        std(&job),
        (
            "/home/alice/out-5-alice-sim-%N-%t-%5j.txt".into(),
            "/abs/5_4294967294.err".into()
        )
    );
    // An array task: %A is the array's id; without -e, stderr goes with stdout.
    let task = JobInfo {
        array_job_id: 4,
        array_task_id: Some(1),
        stdout: "r%A_%a".into(),
        stderr: String::new(),
        ..running_job()
    };
    assert_eq!(
        std(&task),
        ("/home/alice/r4_1".into(), "/home/alice/r4_1".into())
    );
    // Neither -o nor -e: Slurm's default names under the working directory.
    let plain = JobInfo {
        stdout: String::new(),
        stderr: String::new(),
        ..running_job()
    };
    assert_eq!(
        std(&plain),
        (
            "/home/alice/slurm-5.out".into(),
            "/home/alice/slurm-5.out".into()
        )
    );
    let task = JobInfo {
        array_job_id: 4,
        array_task_id: Some(2),
        ..plain
    };
    assert_eq!(
        std(&task),
        (
            "/home/alice/slurm-4_2.out".into(),
            "/home/alice/slurm-4_2.out".into()
        )
    );
}
