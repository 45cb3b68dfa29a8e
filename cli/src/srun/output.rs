//! Tasks' output as it arrives: straight through, or with `-l` each line prefixed by the
//! task's rank (right-aligned to the widest rank, as srun does: ` 3: `).

use std::collections::HashMap;
use std::io::{self, Write};

/// Writes task output to srun's stdout and stderr.
pub struct TaskOutput<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// `Some(width)` when labelling.
    label_width: Option<usize>,
    /// Unfinished lines per (task, stderr) while labelling.
    partial: HashMap<(u32, bool), Vec<u8>>,
}

impl<'a> TaskOutput<'a> {
    /// Output for `ntasks` tasks, labelled when `label`.
    pub fn new(out: &'a mut dyn Write, err: &'a mut dyn Write, ntasks: u32, label: bool) -> Self {
        let width = ntasks.saturating_sub(1).to_string().len();
        Self {
            out,
            err,
            label_width: label.then_some(width),
            partial: HashMap::new(),
        }
    }

    /// Writes a chunk from `task` and flushes it, so it shows at once.
    pub fn write(&mut self, task: u32, stderr: bool, data: &[u8]) -> io::Result<()> {
        let Some(width) = self.label_width else {
            let w = self.stream(stderr);
            w.write_all(data)?;
            return w.flush();
        };
        let mut buf = self.partial.remove(&(task, stderr)).unwrap_or_default();
        buf.extend_from_slice(data);
        let mut text = Vec::new();
        let mut start = 0;
        while let Some(pos) = buf[start..].iter().position(|b| *b == b'\n') {
            let end = start + pos + 1;
            text.extend_from_slice(format!("{task:>width$}: ").as_bytes());
            text.extend_from_slice(&buf[start..end]);
            start = end;
        }
        if start < buf.len() {
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
    pub fn finish(&mut self) -> io::Result<()> {
        let Some(width) = self.label_width else {
            return Ok(());
        };
        let mut rest: Vec<((u32, bool), Vec<u8>)> = self.partial.drain().collect();
        rest.sort_by_key(|(k, _)| *k);
        for ((task, stderr), bytes) in rest {
            let w = self.stream(stderr);
            w.write_all(format!("{task:>width$}: ").as_bytes())?;
            w.write_all(&bytes)?;
            w.write_all(b"\n")?;
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
    fn unlabelled_output_passes_through() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::new(&mut out, &mut err, 2, false);
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
        let mut o = TaskOutput::new(&mut out, &mut err, 12, true);
        o.write(3, false, b"a\nb").unwrap();
        o.write(11, false, b"x\n").unwrap();
        o.write(3, false, b"c\n").unwrap();
        o.write(0, true, b"e").unwrap();
        o.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), " 3: a\n11: x\n 3: bc\n");
        assert_eq!(String::from_utf8(err).unwrap(), " 0: e\n");
    }
}
