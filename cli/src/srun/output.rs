//! Tasks' output as srun shows it: line by line per task and stream (as Slurm's srun, so two
//! tasks' lines never mix), with `-l` each line prefixed by the task's rank (right-aligned to
//! the widest rank: ` 3: `); with `-u` (and no `-l`) every chunk as it arrives, a partial line
//! included. Either way nothing waits on a timer: a complete line shows the moment it arrives.

use std::collections::HashMap;
use std::io::{self, Write};

/// Longest unfinished line held back; beyond it the bytes are shown as they are.
const MAX_PARTIAL: usize = 64 * 1024;

/// Writes task output to srun's stdout and stderr.
pub struct TaskOutput<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// `Some(width)` when labelling.
    label_width: Option<usize>,
    /// `-u` without `-l`: chunks pass straight through.
    raw: bool,
    /// Unfinished lines per (task, stderr) while labelling.
    partial: HashMap<(u32, bool), Vec<u8>>,
}

impl<'a> TaskOutput<'a> {
    /// Output for `ntasks` tasks, labelled when `label`, unbuffered when `unbuffered`.
    pub fn new(
        out: &'a mut dyn Write,
        err: &'a mut dyn Write,
        ntasks: u32,
        label: bool,
        unbuffered: bool,
    ) -> Self {
        let width = ntasks.saturating_sub(1).to_string().len();
        Self {
            out,
            err,
            label_width: label.then_some(width),
            raw: unbuffered && !label,
            partial: HashMap::new(),
        }
    }

    fn prefix(&self, task: u32) -> String {
        self.label_width
            .map_or_else(String::new, |width| format!("{task:>width$}: "))
    }

    /// Writes a chunk from `task` and flushes it, so it shows at once.
    pub fn write(&mut self, task: u32, stderr: bool, data: &[u8]) -> io::Result<()> {
        if self.raw {
            let w = self.stream(stderr);
            w.write_all(data)?;
            return w.flush();
        }
        let prefix = self.prefix(task);
        let mut buf = self.partial.remove(&(task, stderr)).unwrap_or_default();
        buf.extend_from_slice(data);
        let mut text = Vec::new();
        let mut start = 0;
        while let Some(pos) = buf[start..].iter().position(|b| *b == b'\n') {
            let end = start + pos + 1;
            text.extend_from_slice(prefix.as_bytes());
            text.extend_from_slice(&buf[start..end]);
            start = end;
        }
        if buf.len() - start > MAX_PARTIAL {
            // A line this long is shown as it is rather than held without bound.
            text.extend_from_slice(prefix.as_bytes());
            text.extend_from_slice(&buf[start..]);
        } else if start < buf.len() {
            self.partial.insert((task, stderr), buf[start..].to_vec());
        }
        if !text.is_empty() {
            let w = self.stream(stderr);
            w.write_all(&text)?;
            w.flush()?;
        }
        Ok(())
    }

    /// Writes what is left of unfinished lines (a task's last line without a newline).
    /// Labelled, it ends with a newline.
    pub fn finish(&mut self) -> io::Result<()> {
        let mut rest: Vec<((u32, bool), Vec<u8>)> = self.partial.drain().collect();
        rest.sort_by_key(|(k, _)| *k);
        let labelled = self.label_width.is_some();
        for ((task, stderr), bytes) in rest {
            let prefix = self.prefix(task);
            let w = self.stream(stderr);
            w.write_all(prefix.as_bytes())?;
            w.write_all(&bytes)?;
            if labelled {
                w.write_all(b"\n")?;
            }
            w.flush()?;
        }
        Ok(())
    }

    /// srun's own stderr, for its messages between task output.
    pub fn err_stream(&mut self) -> &mut dyn Write {
        &mut *self.err
    }

    fn stream(&mut self, stderr: bool) -> &mut dyn Write {
        if stderr {
            &mut *self.err
        } else {
            &mut *self.out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_tasks_never_mix_unless_unbuffered() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 2, false, false);
        o.write(0, false, b"zero ").unwrap();
        o.write(1, false, b"one\n").unwrap();
        o.write(0, false, b"done\nrest").unwrap();
        o.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "one\nzero done\nrest");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 2, false, true);
        o.write(0, false, b"zero ").unwrap();
        o.write(1, false, b"one\n").unwrap();
        o.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "zero one\n");
    }

    #[test]
    fn endless_lines_are_not_held_without_bound() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 1, false, false);
        let long = vec![b'x'; MAX_PARTIAL + 1];
        o.write(0, false, &long).unwrap();
        o.write(0, false, b"y").unwrap();
        drop(o);
        assert_eq!(
            out.len(),
            MAX_PARTIAL + 1,
            "shown at once, the next byte held"
        );
    }

    #[test]
    fn unlabelled_output_passes_through() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 2, false, false);
        o.write(0, false, b"par").unwrap();
        o.write(1, true, b"oops\n").unwrap();
        o.write(0, false, b"tial\n").unwrap();
        o.finish().unwrap();
        assert_eq!(out, b"partial\n");
        assert_eq!(err, b"oops\n");
    }

    #[test]
    fn labels_are_per_line_and_aligned() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 12, true, true);
        o.write(3, false, b"a\nb").unwrap();
        o.write(11, false, b"x\n").unwrap();
        o.write(3, false, b"c\n").unwrap();
        o.write(0, true, b"e").unwrap();
        o.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), " 3: a\n11: x\n 3: bc\n");
        assert_eq!(String::from_utf8(err).unwrap(), " 0: e\n");
    }
}
