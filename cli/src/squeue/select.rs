//! Which jobs squeue shows and in what order: the filters of `-j -u -t -p -n -A -w`, pending
//! array tasks folded into `123_[4-10%2]`, and the `-S` sort (default `P,t,-p`).

use std::cmp::Ordering;

use sluice_vocab::JobState;
use sluice_vocab::hostlist::Hostlist;
use sluice_wire::proto::JobInfo;

use super::args::{SqueueOpts, View};
use super::fields::JobLine;

/// Whether the controller must send finished jobs too. A plain listing never shows one, and a
/// controller keeps finished jobs for `MinJobAge` (hundreds after a burst of short jobs), so
/// they are left on the controller; `-t` may ask for them, `-j` needs them to tell a finished
/// job from an unknown id, and the federated merge weighs every copy of a job.
pub fn needs_finished(opts: &SqueueOpts) -> bool {
    opts.states.is_some() || opts.jobs.is_some() || opts.view != View::Local
}

/// Whether `opts` selects `job`.
pub fn selected(job: &JobInfo, opts: &SqueueOpts) -> bool {
    let job_ok = opts.jobs.as_ref().is_none_or(|jobs| {
        jobs.iter().any(|sel| match sel.task {
            None => {
                sel.id == job.job_id
                    || (job.array_job_id != 0 && sel.id == job.array_job_id)
                    || (job.het_job_id != 0 && sel.id == job.het_job_id)
            }
            Some(task) => sel.id == job.array_job_id && job.array_task_id == Some(task),
        })
    });
    let part_ok = opts.partitions.as_ref().is_none_or(|parts| {
        job.partition
            .split(',')
            .any(|p| parts.iter().any(|q| q == p))
    });
    let account_ok = opts
        .accounts
        .as_ref()
        .is_none_or(|accts| accts.iter().any(|a| a.eq_ignore_ascii_case(&job.account)));
    let state = JobState::from_stored(job.state).unwrap_or(JobState::Pending);
    let state_ok = match &opts.states {
        Some(states) => states.is_empty() || states.contains(&state),
        None => !state.is_finished(),
    };
    let node_ok = opts.nodes.as_ref().is_none_or(|nodes| {
        Hostlist::parse(&job.node_list).is_ok_and(|hl| hl.iter().any(|h| nodes.contains(&h)))
    });
    let user_ok = opts.users.as_ref().is_none_or(|u| u.contains(&job.uid));
    let name_ok = opts
        .names
        .as_ref()
        .is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(&job.name)));
    job_ok && part_ok && account_ok && state_ok && node_ok && user_ok && name_ok
}

/// Folds pending tasks of one array (same name and partition) into the line of the first,
/// merging their reasons, as squeue does unless `-r`.
pub fn fold_arrays<'a>(jobs: &[&'a JobInfo], fold: bool) -> Vec<JobLine<'a>> {
    let mut lines: Vec<(JobLine<'a>, Vec<u32>)> = Vec::new();
    for &job in jobs {
        let pending = job.state == JobState::Pending.stored();
        if fold
            && pending
            && let Some(task) = job.array_task_id
        {
            let host = lines.iter_mut().find(|(l, tasks)| {
                !tasks.is_empty()
                    && l.job.array_job_id == job.array_job_id
                    && l.job.name == job.name
                    && l.job.partition == job.partition
            });
            if let Some((line, tasks)) = host {
                tasks.push(task);
                if !line.reason.split(',').any(|r| r == job.reason) {
                    line.reason = format!("{},{}", line.reason, job.reason);
                }
                continue;
            }
            lines.push((JobLine::single(job), vec![task]));
            continue;
        }
        lines.push((JobLine::single(job), Vec::new()));
    }
    lines
        .into_iter()
        .map(|(mut line, mut tasks)| {
            if tasks.len() > 1 {
                tasks.sort_unstable();
                let mut spec = ranges(&tasks);
                if line.job.array_throttle > 0 {
                    spec.push_str(&format!("%{}", line.job.array_throttle));
                }
                line.tasks = Some(spec);
            }
            line
        })
        .collect()
}

/// `1,3,5-7` for sorted task ids (Slurm's `bit_fmt`).
pub fn ranges(ids: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Checks a `-S` specification; the error is Slurm's text.
pub fn check_sort(spec: &str) -> Result<(), String> {
    for c in spec.chars().filter(|c| !matches!(c, ',' | '+' | '-')) {
        if !"CDeijlMNPpQStTuUV".contains(c) {
            return Err(format!("squeue: error: Invalid sort specification: {c}"));
        }
    }
    Ok(())
}

/// Sorts lines by `spec` (first key most significant; `-` reverses a key). Lines start in
/// job id order, then by start time latest first, as squeue pre-sorts them.
pub fn sort_lines(lines: &mut [JobLine], spec: &str) {
    lines.sort_by_key(|l| (l.job.array_job_id.max(l.job.job_id), l.job.array_task_id));
    lines.sort_by_key(|l| std::cmp::Reverse(start_key(l)));
    let keys: Vec<(char, bool)> = {
        let mut keys = Vec::new();
        let mut reverse = false;
        for c in spec.chars() {
            match c {
                '-' => reverse = true,
                '+' | ',' => {}
                c => {
                    keys.push((c, reverse));
                    reverse = false;
                }
            }
        }
        keys
    };
    lines.sort_by(|a, b| {
        keys.iter()
            .map(|&(k, rev)| {
                let o = compare(a, b, k);
                if rev { o.reverse() } else { o }
            })
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
}

fn start_key(l: &JobLine) -> i64 {
    if l.job.start == 0 {
        l.job.now + 100
    } else if l.state() == JobState::Pending && l.job.start < l.job.now {
        l.job.now
    } else {
        l.job.start
    }
}

fn compare(a: &JobLine, b: &JobLine, key: char) -> Ordering {
    let (x, y) = (a.job, b.job);
    match key {
        'C' => x.cpus.cmp(&y.cpus),
        'D' => x.node_count.cmp(&y.node_count),
        'e' => x.end.cmp(&y.end),
        'i' => (x.array_job_id.max(x.job_id), x.array_task_id)
            .cmp(&(y.array_job_id.max(y.job_id), y.array_task_id)),
        'j' => x.name.cmp(&y.name),
        'l' => x.time_limit_min.cmp(&y.time_limit_min),
        'M' => a.time_used().cmp(&b.time_used()),
        'N' => x.node_list.cmp(&y.node_list),
        'P' => x.partition.cmp(&y.partition),
        'p' | 'Q' => x.priority.cmp(&y.priority),
        'S' => start_key(a).cmp(&start_key(b)),
        't' => a.state().short_name().cmp(b.state().short_name()),
        'T' => a.state().long_name().cmp(b.state().long_name()),
        'u' => a.user().cmp(&b.user()),
        'U' => x.uid.cmp(&y.uid),
        'V' => x.submit.cmp(&y.submit),
        _ => Ordering::Equal,
    }
}
