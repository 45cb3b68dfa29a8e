//! The Standard Workload Format (v2.2) of the Parallel Workloads Archive, line by line.
//!
//! A trace is ASCII text: comment lines start with `;` (the header comments, `; Key: value`,
//! come first), every other non-blank line is one job of 18 whitespace-separated numeric
//! fields, with `-1` for "unknown". Time fields may be written with a fraction (the standard
//! allows it); they are rounded to whole seconds here.

/// The 18 fields of a job line, in order (used in error messages).
pub const FIELD_NAMES: [&str; FIELDS] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job",
    "think time",
];

/// Fields per job line.
pub const FIELDS: usize = 18;

/// A job's completion status (field 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// 0: the job failed.
    Failed,
    /// 1: the job completed.
    Completed,
    /// 2: a partial execution (checkpoint or swap-out) that will be continued.
    Partial,
    /// 3: the last partial execution of a job that completed.
    PartialCompleted,
    /// 4: the last partial execution of a job that failed.
    PartialFailed,
    /// 5: the job was cancelled.
    Cancelled,
    /// -1: not recorded (models carry no status).
    Unknown,
}

impl Status {
    /// The status a field value stands for; `None` outside the standard's values.
    pub fn from_field(v: i64) -> Option<Self> {
        Some(match v {
            -1 => Self::Unknown,
            0 => Self::Failed,
            1 => Self::Completed,
            2 => Self::Partial,
            3 => Self::PartialCompleted,
            4 => Self::PartialFailed,
            5 => Self::Cancelled,
            _ => return None,
        })
    }

    /// The field value written for this status.
    pub fn field(self) -> i64 {
        match self {
            Self::Unknown => -1,
            Self::Failed => 0,
            Self::Completed => 1,
            Self::Partial => 2,
            Self::PartialCompleted => 3,
            Self::PartialFailed => 4,
            Self::Cancelled => 5,
        }
    }

    /// Whether the line is one partial execution of a job whose summary line (status 0, 1
    /// or 5, same job number) carries the job as a whole.
    pub fn is_partial(self) -> bool {
        matches!(
            self,
            Self::Partial | Self::PartialCompleted | Self::PartialFailed
        )
    }
}

/// One job line; `None` is the format's `-1` (unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct SwfJob {
    /// Field 1: the job number (a counter from 1).
    pub job: u32,
    /// Field 2: seconds from the trace's start time.
    pub submit: i64,
    /// Field 3: seconds between submission and start.
    pub wait: Option<i64>,
    /// Field 4: wall-clock seconds the job ran.
    pub run: Option<i64>,
    /// Field 5: processors allocated.
    pub alloc_procs: Option<u32>,
    /// Field 6: average CPU seconds used per processor.
    pub avg_cpu: Option<f64>,
    /// Field 7: memory used per processor, in KB.
    pub used_mem_kb: Option<u64>,
    /// Field 8: processors requested.
    pub req_procs: Option<u32>,
    /// Field 9: requested (wall-clock limit) seconds.
    pub req_time: Option<i64>,
    /// Field 10: memory requested per processor, in KB.
    pub req_mem_kb: Option<u64>,
    /// Field 11.
    pub status: Status,
    /// Field 12: user number.
    pub user: Option<u32>,
    /// Field 13: group number.
    pub group: Option<u32>,
    /// Field 14: application (executable) number.
    pub executable: Option<u32>,
    /// Field 15: queue number.
    pub queue: Option<u32>,
    /// Field 16: partition number.
    pub partition: Option<u32>,
    /// Field 17: the job this one depends on.
    pub preceding: Option<u32>,
    /// Field 18: seconds after the preceding job ended before this one was submitted.
    pub think: Option<i64>,
}

/// What is wrong with a job line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// Not 18 fields.
    #[error("expected {FIELDS} fields, found {found}")]
    FieldCount { found: usize },
    /// A field that is not a number (or out of its range).
    #[error("bad {field}: '{text}'")]
    BadField { field: &'static str, text: String },
    /// A status outside the standard's -1, 0..5.
    #[error("unknown status {value} (the format defines -1 and 0 to 5)")]
    BadStatus { value: i64 },
    /// The line is not text.
    #[error("not UTF-8 text")]
    NotText,
    /// Times that cannot be placed: the job would end before it starts or out of range.
    #[error("{what}")]
    BadTimes { what: &'static str },
}

/// A malformed line: its number (from 1) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct LineError {
    /// Line number in the file, from 1.
    pub line: u64,
    /// What is wrong.
    pub problem: LineProblem,
}

/// One classified line of a trace.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// Empty or whitespace only.
    Blank,
    /// A `;` comment; `Some((key, value))` when it reads `; Key: value`.
    Comment(Option<(String, String)>),
    /// A job line.
    Job(Box<SwfJob>),
}

/// Classifies and parses one line (without its line terminator).
pub fn parse_line(text: &str) -> Result<Line, LineProblem> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Line::Blank);
    }
    if let Some(comment) = trimmed.strip_prefix(';') {
        return Ok(Line::Comment(header_pair(comment)));
    }
    parse_job(trimmed).map(|j| Line::Job(Box::new(j)))
}

/// `Key: value` in a comment's text, if it has that shape (a single word before the colon).
fn header_pair(comment: &str) -> Option<(String, String)> {
    let (key, value) = comment.split_once(':')?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    Some((key.to_string(), value.trim().to_string()))
}

fn parse_job(text: &str) -> Result<SwfJob, LineProblem> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != FIELDS {
        return Err(LineProblem::FieldCount {
            found: fields.len(),
        });
    }
    let mut values = [0f64; FIELDS];
    for (i, f) in fields.iter().enumerate() {
        values[i] = number(f).ok_or_else(|| bad(i, f))?;
    }
    let status_value = whole(values[10]).ok_or_else(|| bad(10, fields[10]))?;
    let status = Status::from_field(status_value).ok_or(LineProblem::BadStatus {
        value: status_value,
    })?;
    let job = id(values[0])
        .flatten()
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(0, fields[0]))?;
    let submit = secs(values[1]).flatten().ok_or_else(|| bad(1, fields[1]))?;
    let count = |i: usize| id(values[i]).ok_or_else(|| bad(i, fields[i]));
    let time = |i: usize| secs(values[i]).ok_or_else(|| bad(i, fields[i]));
    let kb = |i: usize| kilobytes(values[i]).ok_or_else(|| bad(i, fields[i]));
    Ok(SwfJob {
        job,
        submit,
        wait: time(2)?,
        run: time(3)?,
        alloc_procs: count(4)?,
        avg_cpu: if values[5] < 0.0 {
            None
        } else {
            Some(values[5])
        },
        used_mem_kb: kb(6)?,
        req_procs: count(7)?,
        req_time: time(8)?,
        req_mem_kb: kb(9)?,
        status,
        user: count(11)?,
        group: count(12)?,
        executable: count(13)?,
        queue: count(14)?,
        partition: count(15)?,
        preceding: count(16)?,
        think: time(17)?,
    })
}

fn bad(i: usize, text: &str) -> LineProblem {
    LineProblem::BadField {
        field: FIELD_NAMES[i],
        text: text.to_string(),
    }
}

/// A finite decimal number (`12`, `-1`, `3.5`, `1e3`).
fn number(text: &str) -> Option<f64> {
    let v: f64 = text.parse().ok()?;
    v.is_finite().then_some(v)
}

/// A whole number, if `v` is one.
fn whole(v: f64) -> Option<i64> {
    (v.fract() == 0.0 && v.abs() < 9.0e15).then_some(v as i64)
}

/// Unknown (-1) or a count/identifier: `Some(None)`, `Some(Some(n))`; `None` when invalid.
fn id(v: f64) -> Option<Option<u32>> {
    let n = whole(v)?;
    if n == -1 {
        return Some(None);
    }
    u32::try_from(n).ok().map(Some)
}

/// Unknown (-1) or seconds, rounded to whole seconds; `None` when negative or beyond a
/// thousand years.
fn secs(v: f64) -> Option<Option<i64>> {
    if v == -1.0 {
        return Some(None);
    }
    let rounded = v.round();
    ((0.0..=3.2e10).contains(&rounded)).then_some(Some(rounded as i64))
}

/// Unknown (-1) or kilobytes (fractions rounded).
fn kilobytes(v: f64) -> Option<Option<u64>> {
    if v == -1.0 {
        return Some(None);
    }
    let rounded = v.round();
    ((0.0..=1.0e15).contains(&rounded)).then_some(Some(rounded as u64))
}
