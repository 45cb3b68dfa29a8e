//! `sacct --json`: `{"jobs": [...], "warnings": [], "errors": []}` with Slurm's field names
//! (data_parser v0.0.4x) for what sluice accounts. Jobs are written as they stream in, so the
//! memory stays flat however many there are.

use std::io::{self, Write};

use serde_json::{Value, json};
use sluice_vocab::JobState;
use sluice_wire::proto::{JobRow, StepRecord};

use super::fields::Cx;
use super::values::{self as v, Line};
use crate::cmdutil::user_name;

/// Slurm's "number" object: `{"set": true, "infinite": false, "number": n}`.
fn number(n: i64) -> Value {
    json!({"set": true, "infinite": false, "number": n})
}

fn exit(code: i32, signal: i32) -> Value {
    let status = if signal != 0 {
        "SIGNALED"
    } else if code != 0 {
        "ERROR"
    } else {
        "SUCCESS"
    };
    json!({
        "status": [status],
        "return_code": number(i64::from(code)),
        "signal": {"id": number(i64::from(signal)), "name": ""},
    })
}

fn state_name(state: u32) -> &'static str {
    JobState::from_stored(state).map_or("UNKNOWN", JobState::long_name)
}

fn tres(kind: &str, id: i64, count: u64) -> Value {
    json!({"type": kind, "name": "", "id": id, "count": count})
}

fn step(j: &JobRow, s: &StepRecord, cx: &Cx) -> Value {
    let line = Line::Step(j, s);
    let nodes = sluice_vocab::hostlist::expand(&s.node_list).unwrap_or_default();
    json!({
        "step": {"id": v::line_id(&line, false), "name": s.name},
        "state": [state_name(s.state)],
        "exit_code": exit(s.exit_code, s.signal),
        "nodes": {"count": s.node_count, "range": s.node_list, "list": nodes},
        "tasks": {"count": s.ntasks},
        "time": {
            "elapsed": v::elapsed(&line, cx.now),
            "start": number(s.start),
            "end": number(v::step_end(j, s)),
        },
        "tres": {"allocated": [tres("cpu", 1, u64::from(s.cpus)), tres("node", 4, u64::from(s.node_count))]},
    })
}

/// One job (with its steps unless `steps` is false) as Slurm's JSON object.
pub fn job(j: &JobRow, steps: bool, cx: &Cx) -> Value {
    let line = Line::Job(j);
    let user = if j.user.is_empty() {
        user_name(j.uid)
    } else {
        j.user.clone()
    };
    let mut allocated = Vec::new();
    if j.cpus > 0 {
        allocated.push(tres("cpu", 1, u64::from(j.cpus)));
        if j.mem_mb > 0 {
            allocated.push(tres("mem", 2, j.mem_mb));
        }
        allocated.push(tres("node", 4, u64::from(j.node_count)));
        allocated.push(tres("billing", 5, u64::from(j.cpus)));
    }
    let derived = v::derived_exit_pair(j);
    let limit = if j.time_limit_min < 0 {
        json!({"set": true, "infinite": true, "number": 0})
    } else {
        number(j.time_limit_min)
    };
    let steps: Vec<Value> = if steps {
        j.steps.iter().map(|s| step(j, s, cx)).collect()
    } else {
        Vec::new()
    };
    json!({
        "account": j.account,
        "allocation_nodes": j.node_count,
        "array": {
            "job_id": j.array_job_id,
            "task_id": match j.array_task_id {
                Some(t) => number(i64::from(t)),
                None => json!({"set": false, "infinite": false, "number": 0}),
            },
        },
        "association": {"account": j.account, "cluster": j.cluster, "partition": j.partition, "user": user},
        "cluster": j.cluster,
        "comment": {"job": j.comment},
        "derived_exit_code": exit(derived.0, derived.1),
        "exit_code": exit(j.exit_code, j.signal),
        "group": v::group_name(j.gid),
        "job_id": j.job_id,
        "kill_request_user": j.requester_uid.map(user_name).unwrap_or_default(),
        "name": j.name,
        "nodes": if j.node_list.is_empty() { "None assigned" } else { j.node_list.as_str() },
        "partition": j.partition,
        "required": {"CPUs": j.req_cpus, "memory_per_node": number(i64::try_from(j.req_mem_mb).unwrap_or(i64::MAX))},
        "state": {
            "current": [state_name(j.state)],
            "reason": if j.reason.is_empty() { "None" } else { j.reason.as_str() },
        },
        "steps": steps,
        "time": {
            "elapsed": v::elapsed(&line, cx.now),
            "eligible": j.eligible,
            "end": j.end,
            "limit": limit,
            "planned": number(v::planned(&line, cx.now).unwrap_or(0)),
            "start": j.start,
            "submission": j.submit,
            "suspended": j.suspended_secs,
        },
        "tres": {
            "allocated": allocated,
            "requested": [tres("cpu", 1, u64::from(j.req_cpus)), tres("mem", 2, j.req_mem_mb)],
        },
        "user": user,
        "wckey": {"wckey": j.wckey, "flags": []},
        "working_directory": j.workdir,
    })
}

/// Writes the JSON document job by job: [`JsonOut::job`] for each, then [`JsonOut::finish`].
#[derive(Debug, Default)]
pub struct JsonOut {
    count: usize,
}

impl JsonOut {
    /// Writes one job object.
    pub fn job(&mut self, w: &mut dyn Write, value: &Value) -> io::Result<()> {
        let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        let indented = text.replace('\n', "\n    ");
        let lead = if self.count == 0 {
            "{\n  \"jobs\": [\n    "
        } else {
            ",\n    "
        };
        self.count += 1;
        write!(w, "{lead}{indented}")
    }

    /// Closes the document (an empty `jobs` array when no job came).
    pub fn finish(&self, w: &mut dyn Write) -> io::Result<()> {
        if self.count == 0 {
            writeln!(
                w,
                "{{\n  \"jobs\": [],\n  \"warnings\": [],\n  \"errors\": []\n}}"
            )
        } else {
            writeln!(w, "\n  ],\n  \"warnings\": [],\n  \"errors\": []\n}}")
        }
    }
}
