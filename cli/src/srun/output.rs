//! Tasks' output as srun shows it: line by line per task and stream (as Slurm's srun, so two
//! tasks' lines never mix), with `-l` each line prefixed by the task's rank (right-aligned to
//! the widest rank: ` 3: `); with `-u` (and no `-l`) every chunk as it arrives, a partial line
//! included. Either way nothing waits on a timer: a complete line shows the moment it arrives.
//!
//! A step across a heterogeneous job's components shows each component's tasks as that
//! component's options say ([`TaskIo`]: its `-l`, `-u` and `-o/-e <task>`), as Slurm's srun
//! does; the labels are the tasks' ranks in the whole step.

use std::collections::HashMap;
use std::io::{self, Write};

use super::args::{IoTarget, SrunOpts};

/// Longest unfinished line held back; beyond it the bytes are shown as they are.
const MAX_PARTIAL: usize = 64 * 1024;

/// How the output of some of a step's tasks is shown: every task's for a step of one job,
/// one component's (ranks `first_task..`, up to the next component's) for a step across a
/// heterogeneous job's components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskIo {
    /// The first of these tasks' ranks in the step.
    pub first_task: u32,
    /// `-l`.
    pub label: bool,
    /// `-u` (or `--pty`).
    pub unbuffered: bool,
    /// Whose stdout and stderr srun shows (`-o`/`-e <task>`), by rank in the step.
    pub shown: (IoTarget, IoTarget),
}

impl TaskIo {
    /// `opts`'s settings for `ntasks` tasks whose ranks start at `first_task` (`-o <task>`
    /// counts from the first of them).
    pub fn of(opts: &SrunOpts, first_task: u32, ntasks: u32) -> Self {
        let shift = |t: IoTarget| match t {
            IoTarget::Task(n) => IoTarget::Task(n.saturating_add(first_task)),
            other => other,
        };
        Self {
            first_task,
            label: opts.label,
            unbuffered: opts.unbuffered || opts.pty,
            shown: (
                shift(opts.output.within(ntasks)),
                shift(opts.stderr_target().within(ntasks)),
            ),
        }
    }

    /// Whether srun shows what `task` sends on stdout (or stderr).
    pub fn shows(&self, task: u32, stderr: bool) -> bool {
        let target = if stderr { &self.shown.1 } else { &self.shown.0 };
        target.shows(task)
    }
}

/// The settings of `task` among `io` (sorted by first task; the first one when none fits).
pub fn io_of(io: &[TaskIo], task: u32) -> Option<&TaskIo> {
    let at = io.partition_point(|c| c.first_task <= task);
    io.get(at.saturating_sub(1))
}

/// Writes task output to srun's stdout and stderr.
pub struct TaskOutput<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// The labels' width (the widest rank of the step).
    label_width: usize,
    /// Each component's settings, by first task ([`io_of`]).
    io: Vec<TaskIo>,
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
        let all = TaskIo {
            first_task: 0,
            label,
            unbuffered,
            shown: (IoTarget::All, IoTarget::All),
        };
        Self::per_component(out, err, ntasks, &[all])
    }

    /// Output for `ntasks` tasks, each shown as the settings of its component in `io` say.
    pub fn per_component(
        out: &'a mut dyn Write,
        err: &'a mut dyn Write,
        ntasks: u32,
        io: &[TaskIo],
    ) -> Self {
        Self {
            out,
            err,
            label_width: ntasks.saturating_sub(1).to_string().len(),
            io: io.to_vec(),
            partial: HashMap::new(),
        }
    }

    /// `(labelled, raw)` for `task`; raw: `-u` without `-l`, chunks pass straight through.
    fn style(&self, task: u32) -> (bool, bool) {
        io_of(&self.io, task).map_or((false, false), |c| (c.label, c.unbuffered && !c.label))
    }

    fn prefix(&self, task: u32) -> String {
        let width = self.label_width;
        if self.style(task).0 {
            format!("{task:>width$}: ")
        } else {
            String::new()
        }
    }

    /// Writes a chunk from `task` and flushes it, so it shows at once.
    pub fn write(&mut self, task: u32, stderr: bool, data: &[u8]) -> io::Result<()> {
        if self.style(task).1 {
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
        for ((task, stderr), bytes) in rest {
            let labelled = self.style(task).0;
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
    fn each_components_tasks_follow_its_own_options() {
        let io = |first_task, label, unbuffered| TaskIo {
            first_task,
            label,
            unbuffered,
            shown: (IoTarget::All, IoTarget::All),
        };
        // Ranks 0-1 unlabelled, 2-3 labelled (`-l` of the second component), 4 unbuffered.
        let parts = [io(0, false, false), io(2, true, false), io(4, false, true)];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut o = TaskOutput::per_component(&mut out, &mut err, 5, &parts);
        o.write(1, false, b"one\n").unwrap();
        o.write(3, false, b"three\n").unwrap();
        o.write(4, false, b"fo").unwrap();
        o.write(0, false, b"zero").unwrap();
        o.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "one\n3: three\nfozero");
        assert_eq!(io_of(&parts, 3).map(|c| c.first_task), Some(2));
        assert_eq!(io_of(&parts, 9).map(|c| c.first_task), Some(4));
    }

    #[test]
    fn a_components_task_filter_counts_from_its_first_task() {
        let opts = crate::srun::args::run_opts("-o 1 -e none true");
        let c = TaskIo::of(&opts, 4, 2);
        assert!(c.shows(5, false) && !c.shows(4, false) && !c.shows(1, false));
        assert_eq!(c.shown.1, IoTarget::None);
        // A task beyond the component's names a file, as for a step of one job.
        let c = TaskIo::of(&crate::srun::args::run_opts("-o 3 true"), 4, 2);
        assert_eq!(c.shown.0, IoTarget::File("3".into()));
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
