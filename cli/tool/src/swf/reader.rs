//! Streaming a trace: header comments are gathered as they pass, job lines come out one at a
//! time with their line numbers, and malformed lines come out as errors to report and skip.
//! Memory stays constant however long the trace is.

use std::io::BufRead;

use super::format::{Line, LineError, LineProblem, SwfJob, parse_line};

/// The header comments a trace's reader understands (`; Key: value`); the others are kept
/// only in `pairs`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// `Version` (the format's, e.g. `2.2`).
    pub version: Option<String>,
    /// `UnixStartTime`: the absolute time of submit time 0.
    pub unix_start_time: Option<i64>,
    /// `TimeZoneString` (e.g. `US/Pacific`).
    pub time_zone: Option<String>,
    /// `MaxProcs`: processors of the machine.
    pub max_procs: Option<u64>,
    /// `MaxNodes`: nodes of the machine (processors in traces older than 2.1).
    pub max_nodes: Option<u64>,
    /// `MaxJobs`: job lines announced.
    pub max_jobs: Option<u64>,
    /// Numeric header values that did not read as numbers: "line N: Key: value".
    pub problems: Vec<String>,
    /// Every `Key: value` comment, in order.
    pub pairs: Vec<(String, String)>,
}

impl Header {
    /// Takes in one `Key: value` comment found on line `line`.
    pub fn absorb(&mut self, line: u64, key: &str, value: &str) {
        self.pairs.push((key.to_string(), value.to_string()));
        let mut number = |slot: &mut Option<u64>| match leading_number(value) {
            Some(n) => *slot = Some(n),
            None => self
                .problems
                .push(format!("line {line}: {key}: '{value}' is not a number")),
        };
        match key.to_ascii_lowercase().as_str() {
            "version" => self.version = Some(value.to_string()),
            "timezonestring" => self.time_zone = Some(value.to_string()),
            "maxprocs" => number(&mut self.max_procs),
            "maxnodes" => number(&mut self.max_nodes),
            "maxjobs" => number(&mut self.max_jobs),
            "unixstarttime" => {
                let mut start = None;
                number(&mut start);
                self.unix_start_time = start.and_then(|s| i64::try_from(s).ok());
            }
            _ => {}
        }
    }

    /// CPUs of the machine: `MaxProcs`, or `MaxNodes` in traces without it (before version
    /// 2.1, `MaxNodes` counted processors).
    pub fn cpus(&self) -> Option<u64> {
        self.max_procs.or(self.max_nodes).filter(|&n| n > 0)
    }

    /// Nodes of the machine: `MaxNodes`, or the CPU count when only that is known.
    pub fn nodes(&self) -> Option<u64> {
        self.max_nodes.or(self.max_procs).filter(|&n| n > 0)
    }
}

/// The number a header value starts with (`1024`, `1024 (64 nodes x 16)`).
fn leading_number(value: &str) -> Option<u64> {
    let digits: String = value
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// What the reader found next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A job line, parsed.
    Job { line: u64, job: Box<SwfJob> },
    /// A line that is not a valid job line: skipped.
    Malformed(LineError),
}

/// Reads a trace from `input`, yielding its job lines and malformed lines.
#[derive(Debug)]
pub struct Reader<R> {
    input: R,
    line: u64,
    buf: Vec<u8>,
    header: Header,
}

impl<R: BufRead> Reader<R> {
    /// A reader at the start of `input`.
    pub fn new(input: R) -> Self {
        Self {
            input,
            line: 0,
            buf: Vec::with_capacity(256),
            header: Header::default(),
        }
    }

    /// The header comments read so far (all of them once the first job line came out, when
    /// the trace follows the format and puts them first).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// The next job or malformed line; `None` at the end of the input.
    pub fn next_event(&mut self) -> Option<std::io::Result<Event>> {
        loop {
            self.buf.clear();
            match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e)),
            }
            self.line += 1;
            let line = self.line;
            let text = match std::str::from_utf8(&self.buf) {
                Ok(text) => text,
                Err(_) => return Some(Ok(malformed(line, LineProblem::NotText))),
            };
            match parse_line(text) {
                Ok(Line::Blank) | Ok(Line::Comment(None)) => {}
                Ok(Line::Comment(Some((key, value)))) => self.header.absorb(line, &key, &value),
                Ok(Line::Job(job)) => return Some(Ok(Event::Job { line, job })),
                Err(problem) => return Some(Ok(malformed(line, problem))),
            }
        }
    }
}

fn malformed(line: u64, problem: LineProblem) -> Event {
    Event::Malformed(LineError { line, problem })
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = std::io::Result<Event>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event()
    }
}
