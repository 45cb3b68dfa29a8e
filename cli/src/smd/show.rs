//! What smd prints for each operation: a line a person reads, or with `-p` a header and rows
//! of `|`-terminated fields.

use std::io::{self, Write};

use ::smd::{Allocation, Event, EventKind, NodeState};

use super::args::Filter;
use crate::output::{Column, OutputMode, Printer};
use crate::timefmt::{self, Zone};

fn mode(parsable: bool) -> OutputMode {
    if parsable {
        OutputMode::Parsable
    } else {
        OutputMode::Fixed
    }
}

/// The allocation's nodes (those `filter` keeps). Human output starts with a summary line.
pub fn nodes(w: &mut dyn Write, a: &Allocation, filter: Filter, parsable: bool) -> io::Result<()> {
    if !parsable {
        writeln!(
            w,
            "JobId={} NodeList={} NumNodes={} CPUsPerNode={} TimeLimit={} ExtendAvailable={} SparesUsed={} SparesFree={}",
            a.job_id,
            a.node_list,
            a.nodes.len(),
            a.cpus_per_node,
            limit(a.time_limit_minutes),
            a.extend_available_minutes,
            a.spares_used,
            a.spares_free
        )?;
    }
    let printer = Printer::new(
        mode(parsable),
        vec![
            Column::new("JobID", 8),
            Column::new("NodeName", -15),
            Column::new("CPUs", 5),
            Column::new("State", -8),
        ],
    );
    printer.print_header(w)?;
    let keep = |s: NodeState| match filter {
        Filter::All => true,
        Filter::Failed => s == NodeState::Failed,
        Filter::Failing => s == NodeState::Failing,
    };
    for n in a.nodes.iter().filter(|n| keep(n.state)) {
        printer.print_row(
            w,
            &[
                a.job_id.to_string(),
                n.name.clone(),
                n.cpus.to_string(),
                n.state.word().to_string(),
            ],
        )?;
    }
    Ok(())
}

/// A time limit in minutes as scontrol shows it; 0 is `UNLIMITED`.
pub fn limit(minutes: u32) -> String {
    match minutes {
        0 => "UNLIMITED".to_string(),
        m => timefmt::limit_clock(i64::from(m)),
    }
}

/// The node that is in `after` but was not in `before` (the replacement).
pub fn new_node(before: &Allocation, after: &Allocation) -> String {
    after
        .nodes
        .iter()
        .find(|n| !before.nodes.iter().any(|o| o.name == n.name))
        .map_or_else(String::new, |n| n.name.clone())
}

/// The result of a change: the line `human`, or with `-p` the `headers` and one row of
/// `values`.
pub fn change(
    w: &mut dyn Write,
    parsable: bool,
    headers: &[&str],
    values: Vec<String>,
    human: &str,
) -> io::Result<()> {
    if !parsable {
        return writeln!(w, "{human}");
    }
    let printer = Printer::new(
        OutputMode::Parsable,
        headers.iter().map(|h| Column::new(*h, 0)).collect(),
    );
    printer.print_header(w)?;
    printer.print_row(w, &values)
}

/// The header of `smd -w -p`.
pub fn event_header(w: &mut dyn Write, parsable: bool) -> io::Result<()> {
    if parsable {
        writeln!(
            w,
            "Time|Event|JobID|NodeName|Replacement|NodeList|TimeLimit|"
        )?;
    }
    Ok(())
}

/// One event, as it arrives.
pub fn event(w: &mut dyn Write, e: &Event, job: u32, parsable: bool, zone: Zone) -> io::Result<()> {
    let time = timefmt::timestamp(e.time, zone);
    let a = &e.allocation;
    let limit = limit(a.time_limit_minutes);
    if parsable {
        writeln!(
            w,
            "{time}|{}|{job}|{}|{}|{}|{limit}|",
            e.kind.word(),
            e.node,
            e.replacement,
            a.node_list
        )?;
    } else {
        let what = match e.kind {
            EventKind::Replaced => format!("node {} replaced by {}", e.node, e.replacement),
            EventKind::TimeExtended => format!("time limit now {limit}"),
            EventKind::JobEnded => "ended".to_string(),
            _ => format!("node {}", e.node),
        };
        writeln!(
            w,
            "{time} job {job} {} {what} (nodes {})",
            e.kind.word(),
            a.node_list
        )?;
    }
    w.flush()
}
