//! sstat's fields: Slurm 22.05's table (names, default widths, the order `-e` lists them and
//! prefixes are matched in). The usage values are sacct's ([`crate::acct::usage`]), shown for
//! a live step as for a recorded one; what sluice does not measure (CPU frequency, energy) is
//! shown as Slurm shows it unmeasured; the node and task of the smallest value are live-only
//! fields ([`LIVE_FIELDS`]).

use crate::acct::Cx;
use crate::acct::jobsel::BATCH_STEP;
use crate::acct::usage::{LIVE_FIELDS, USAGE_FIELDS};
use crate::acct::values::{Line, line_id};
use crate::output::{Column, width};

/// One printed row: a step line as sacct's fields read it, and the step's processes.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    /// The step.
    pub line: Line<'a>,
    /// `Pids`.
    pub pids: &'a str,
}

/// How a value is found.
type Value = fn(&Row, &Cx) -> String;

/// One field: Slurm's name, its default width and its value (`None`: sacct's field of the same
/// name).
#[derive(Debug)]
pub struct StatField {
    /// Slurm's name.
    pub name: &'static str,
    /// The default width (negative: left-justified).
    pub width: i32,
    value: Option<Value>,
}

const fn s(name: &'static str, width: i32) -> StatField {
    StatField {
        name,
        width,
        value: None,
    }
}

const fn own(name: &'static str, width: i32, value: Value) -> StatField {
    StatField {
        name,
        width,
        value: Some(value),
    }
}

fn zero(_: &Row, _: &Cx) -> String {
    "0".into()
}
/// A requested CPU frequency: srun steps ask none (`Unknown`), the batch step shows 0.
fn req_freq(r: &Row, _: &Cx) -> String {
    let batch = r.line.step().is_some_and(|s| s.step_id == BATCH_STEP);
    if batch { "0" } else { "Unknown" }.into()
}

/// The fields, in Slurm's order.
pub const FIELDS: &[StatField] = &[
    s("AveCPU", 10),
    own("AveCPUFreq", 10, zero),
    s("AveDiskRead", 12),
    s("AveDiskWrite", 12),
    s("AvePages", 10),
    s("AveRSS", 10),
    s("AveVMSize", 10),
    own("ConsumedEnergy", 14, zero),
    own("ConsumedEnergyRaw", 14, zero),
    own("JobID", -12, |r, _| line_id(&r.line, false)),
    s("MaxDiskRead", 12),
    s("MaxDiskReadNode", 15),
    s("MaxDiskReadTask", 15),
    s("MaxDiskWrite", 12),
    s("MaxDiskWriteNode", 16),
    s("MaxDiskWriteTask", 16),
    s("MaxPages", 8),
    s("MaxPagesNode", 12),
    s("MaxPagesTask", 14),
    s("MaxRSS", 10),
    s("MaxRSSNode", 10),
    s("MaxRSSTask", 10),
    s("MaxVMSize", 10),
    s("MaxVMSizeNode", 14),
    s("MaxVMSizeTask", 14),
    s("MinCPU", 10),
    s("MinCPUNode", 10),
    s("MinCPUTask", 10),
    own("Nodelist", 20, |r, _| {
        r.line
            .step()
            .map(|s| s.node_list.clone())
            .unwrap_or_default()
    }),
    own("NTasks", 8, |r, _| {
        r.line
            .step()
            .map(|s| s.ntasks.to_string())
            .unwrap_or_default()
    }),
    own("Pids", 20, |r, _| r.pids.to_string()),
    own("ReqCPUFreq", 13, req_freq),
    own("ReqCPUFreqMin", 13, req_freq),
    own("ReqCPUFreqMax", 13, req_freq),
    own("ReqCPUFreqGov", 13, req_freq),
    s("TRESUsageInAve", 14),
    s("TRESUsageInMax", 14),
    s("TRESUsageInMaxNode", 18),
    s("TRESUsageInMaxTask", 18),
    s("TRESUsageInMin", 14),
    s("TRESUsageInMinNode", 18),
    s("TRESUsageInMinTask", 18),
    s("TRESUsageInTot", 14),
    s("TRESUsageOutAve", 15),
    s("TRESUsageOutMax", 15),
    s("TRESUsageOutMaxNode", 19),
    s("TRESUsageOutMaxTask", 19),
    s("TRESUsageOutMin", 15),
    s("TRESUsageOutMinNode", 19),
    s("TRESUsageOutMinTask", 19),
    s("TRESUsageOutTot", 15),
];

impl StatField {
    /// The field's value on `line`.
    pub fn value(&self, row: &Row, cx: &Cx) -> String {
        match self.value {
            Some(v) => v(row, cx),
            None => USAGE_FIELDS
                .iter()
                .chain(LIVE_FIELDS)
                .find(|f| f.name == self.name)
                .map(|f| (f.value)(&row.line, cx))
                .unwrap_or_default(),
        }
    }
}

/// A chosen field and its column.
pub type Chosen = (&'static StatField, Column);

/// Parses `-o`: `name[%width]` items, each the first field whose name starts with it.
pub fn parse_format(spec: &str) -> Result<Vec<Chosen>, String> {
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n, Some(width::parse_signed(w))),
            None => (item, None),
        };
        let field = FIELDS.iter().find(|f| {
            !name.is_empty()
                && f.name
                    .get(..name.len())
                    .is_some_and(|p| p.eq_ignore_ascii_case(name))
        });
        let Some(f) = field else {
            return Err(format!("sstat: error: Invalid field requested: \"{name}\""));
        };
        out.push((f, Column::new(f.name, width.unwrap_or(f.width))));
    }
    Ok(out)
}

/// `-e`: the field names, four to a line.
pub fn help_format() -> String {
    let mut text = String::new();
    for row in FIELDS.chunks(4) {
        let cells: Vec<String> = row.iter().map(|f| format!("{:<19}", f.name)).collect();
        text.push_str(&cells.join(" "));
        text.push('\n');
    }
    text
}

#[cfg(test)]
#[path = "fields_tests.rs"]
mod tests;
