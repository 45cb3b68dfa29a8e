//! `squeue --json`: an object with a `jobs` array whose entries use the field names of Slurm's
//! data parser (numbers as `{set, infinite, number}` objects), for the fields Sluice has.

use serde_json::{Value, json};

use super::fields::JobLine;
use crate::cmdutil::group_name;
use crate::timefmt::Zone;

/// Slurm's optional number: `set` false when absent, `infinite` for no limit.
fn num(value: Option<i64>) -> Value {
    match value {
        Some(n) if n < 0 => json!({"set": true, "infinite": true, "number": 0}),
        Some(n) => json!({"set": true, "infinite": false, "number": n}),
        None => json!({"set": false, "infinite": false, "number": 0}),
    }
}

fn exit_code(line: &JobLine) -> Value {
    let j = line.job;
    let status = if line.state() == sluice_vocab::JobState::Pending {
        "PENDING"
    } else if j.signal != 0 {
        "SIGNALED"
    } else if j.exit_code != 0 {
        "ERROR"
    } else {
        "SUCCESS"
    };
    json!({
        "status": [status],
        "return_code": num(Some(i64::from(j.exit_code))),
        "signal": {"id": num(Some(i64::from(j.signal))), "name": ""},
    })
}

/// One job as the data parser names its fields.
pub fn job(line: &JobLine) -> Value {
    let j = line.job;
    let (array_job, array_task) = if j.array_job_id != 0 {
        (
            num(Some(i64::from(j.array_job_id))),
            num(j
                .array_task_id
                .filter(|_| line.tasks.is_none())
                .map(i64::from)),
        )
    } else {
        (num(Some(0)), num(None))
    };
    json!({
        "account": j.account,
        "array_job_id": array_job,
        "array_task_id": array_task,
        "array_task_string": line.tasks.clone().unwrap_or_default(),
        "array_max_tasks": num(Some(i64::from(j.array_throttle))),
        "batch_flag": j.batch,
        "batch_host": j.batch_host,
        "cluster": j.cluster,
        "command": j.command,
        "cpus": num(Some(i64::from(j.cpus))),
        "cpus_per_task": num(Some(i64::from(j.cpus_per_task))),
        "current_working_directory": j.workdir,
        "dependency": j.dependency,
        "eligible_time": num(Some(j.eligible)),
        "end_time": num(Some(j.end)),
        "exit_code": exit_code(line),
        "features": j.constraint,
        "group_id": j.gid,
        "group_name": group_name(j.gid),
        "job_id": j.job_id,
        "job_state": [line.state().long_name()],
        "memory_per_node": num(Some(i64::try_from(j.mem_mb).unwrap_or(i64::MAX))),
        "name": j.name,
        "node_count": num(Some(i64::from(j.node_count))),
        "nodes": j.node_list,
        "partition": j.partition,
        "priority": num(Some(i64::try_from(j.priority).unwrap_or(i64::MAX))),
        "requeue": j.requeue,
        "restart_cnt": j.restarts,
        "standard_error": j.stderr,
        "standard_output": j.stdout,
        "start_time": num(Some(j.start)),
        "state_reason": line.reason,
        "submit_time": num(Some(j.submit)),
        "suspend_time": num(Some(j.suspended_secs)),
        "tasks": num(Some(i64::from(j.ntasks))),
        "time_limit": num(Some(j.time_limit_min)),
        "user_id": j.uid,
        "user_name": line.user(),
    })
}

/// The whole document, pretty-printed as Slurm prints it, with a trailing newline.
pub fn render(lines: &[JobLine], _zone: Zone) -> String {
    let now = lines.first().map_or(0, |l| l.job.now);
    let doc = json!({
        "jobs": lines.iter().map(job).collect::<Vec<_>>(),
        "last_backfill": num(None),
        "last_update": num(Some(now)),
        "meta": {
            "plugin": {"type": "", "name": "", "data_parser": "data_parser/v0.0.42", "accounting_storage": ""},
            "client": {"source": "", "user": "", "group": ""},
            "command": ["squeue"],
            "slurm": {"version": {"major": "", "micro": "", "minor": ""}, "release": env!("CARGO_PKG_VERSION"), "cluster": lines.first().map(|l| l.job.cluster.clone()).unwrap_or_default()},
        },
        "errors": [],
        "warnings": [],
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}
