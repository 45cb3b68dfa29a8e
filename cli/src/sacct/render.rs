//! Which lines a job prints and how a line becomes text: Slurm's fixed columns through
//! [`Printer`], or the parsable layouts with `--delimiter`.

use std::io::{self, Write};

use sluice_wire::proto::JobRow;

use super::args::SacctOpts;
use super::fields::Cx;
use super::format::Chosen;
use super::values::Line;
use crate::output::{OutputMode, Printer, push_fixed};

/// Jobs of other clusters with a local (non-federated) id are not shown in a federation view
/// (Slurm's `_test_local_job`): ids at or below this are local.
pub const MAX_LOCAL_JOB_ID: u32 = 0x03FF_FFFF;

/// The lines one job prints: the job, then its steps (unless `-X`); a `-j N.step` selection
/// prints only the steps it names. `local_cluster` is set in a federation view.
pub fn job_lines<'a>(row: &'a JobRow, o: &SacctOpts, local_cluster: Option<&str>) -> Vec<Line<'a>> {
    if let Some(local) = local_cluster
        && row.job_id <= MAX_LOCAL_JOB_ID
        && row.cluster != local
    {
        return Vec::new();
    }
    let sel: Vec<_> = o.jobs.iter().flatten().filter(|s| s.matches(row)).collect();
    if o.jobs.is_some() && sel.is_empty() {
        // An array's other tasks, when only some were asked for.
        return Vec::new();
    }
    let whole = sel.is_empty() || sel.iter().any(|s| s.step.is_none());
    let mut lines = Vec::new();
    if whole {
        lines.push(Line::Job(row));
    }
    if !o.no_steps {
        let mut steps: Vec<_> = row.steps.iter().collect();
        steps.sort_by_key(|s| (s.step_id >= 0, s.step_id.unsigned_abs()));
        for s in steps {
            if whole || sel.iter().any(|x| x.step == Some(s.step_id)) {
                lines.push(Line::Step(row, s));
            }
        }
    }
    lines
}

/// Writes lines as text, through one line buffer reused for every line.
pub struct TextOut {
    printer: Printer,
    mode: OutputMode,
    delimiter: String,
    fields: Vec<&'static super::fields::Field>,
    widths: Vec<i32>,
    line: String,
}

impl TextOut {
    /// Text output of `cols` laid out as `o` asks.
    pub fn new(o: &SacctOpts, cols: &[Chosen]) -> Self {
        let printer = Printer::new(o.mode, cols.iter().map(|(_, c)| c.clone()).collect());
        Self {
            widths: printer.columns().iter().map(|c| c.width).collect(),
            printer,
            mode: o.mode,
            delimiter: o.delimiter.clone(),
            fields: cols.iter().map(|(f, _)| *f).collect(),
            line: String::new(),
        }
    }

    /// The header (and dashes in the fixed layout).
    pub fn header(&self, w: &mut dyn Write) -> io::Result<()> {
        if self.mode == OutputMode::Fixed {
            return self.printer.print_header(w);
        }
        let mut line = String::new();
        for (i, f) in self.fields.iter().enumerate() {
            self.push_parsable(&mut line, f.name, i + 1 == self.fields.len());
        }
        line.push('\n');
        w.write_all(line.as_bytes())
    }

    /// A parsable value and the delimiter after it (`-p`: after every value; `-P`: between).
    fn push_parsable(&self, line: &mut String, value: &str, last: bool) {
        line.push_str(value);
        if !last || self.mode == OutputMode::Parsable {
            line.push_str(&self.delimiter);
        }
    }

    /// One line per entry of `lines`.
    pub fn lines(&mut self, w: &mut dyn Write, lines: &[Line], cx: &Cx) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        for l in lines {
            line.clear();
            for (i, f) in self.fields.iter().enumerate() {
                let value = (f.value)(l, cx);
                if self.mode == OutputMode::Fixed {
                    push_fixed(&mut line, &value, self.widths[i]);
                    line.push(' ');
                } else {
                    self.push_parsable(&mut line, &value, i + 1 == self.fields.len());
                }
            }
            line.push('\n');
            if let Err(e) = w.write_all(line.as_bytes()) {
                self.line = line;
                return Err(e);
            }
        }
        self.line = line;
        Ok(())
    }
}
