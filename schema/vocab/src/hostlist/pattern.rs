//! The stored form of a hostlist: items as literals and bracket groups, expanded lazily.

use std::fmt::Write as _;

/// A run of numbers `lo..=hi`, printed zero-padded to `width` digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Range {
    pub(super) lo: u64,
    pub(super) hi: u64,
    pub(super) width: usize,
}

impl Range {
    /// Whether a digit string of `text_len` digits and value `value` is how this range prints it.
    pub(super) fn prints(&self, value: u64, text_len: usize) -> bool {
        (self.lo..=self.hi).contains(&value) && text_len == self.width.max(digits(value))
    }
}

/// One piece of an item: fixed text, or a bracket group of ranges.
#[derive(Debug, Clone)]
pub(super) enum Segment {
    Literal(String),
    Numbers(Vec<Range>),
}

/// One top-level item: its segments and how many names they expand to.
#[derive(Debug, Clone)]
pub(super) struct Pattern {
    pub(super) segments: Vec<Segment>,
    pub(super) count: usize,
}

impl Pattern {
    /// `prefix` followed by one bracket group; `count` is the number of values in `ranges`.
    pub(super) fn numbered(prefix: &str, ranges: Vec<Range>, count: usize) -> Self {
        let mut segments = Vec::with_capacity(2);
        if !prefix.is_empty() {
            segments.push(Segment::Literal(prefix.to_owned()));
        }
        segments.push(Segment::Numbers(ranges));
        Pattern { segments, count }
    }

    /// A single name taken as is.
    pub(super) fn literal(name: &str) -> Self {
        Pattern {
            segments: vec![Segment::Literal(name.to_owned())],
            count: 1,
        }
    }

    /// Appends `prefix` + the number (`text_len` digits) if it continues this pattern's last
    /// range, as Slurm's `hostlist_push_host` coalesces neighbours.
    pub(super) fn try_extend(&mut self, prefix: &str, value: u64, text_len: usize) -> bool {
        let ranges = match self.segments.as_mut_slice() {
            [Segment::Literal(p), Segment::Numbers(r)] if p == prefix => r,
            [Segment::Numbers(r)] if prefix.is_empty() => r,
            _ => return false,
        };
        match ranges.last_mut() {
            Some(last) if last.hi.checked_add(1) == Some(value) => {
                let next = Range { hi: value, ..*last };
                if !next.prints(value, text_len) {
                    return false;
                }
                *last = next;
                self.count += 1;
                true
            }
            _ => false,
        }
    }

    /// Whether `host` is one of this pattern's names.
    pub(super) fn matches(&self, host: &str) -> bool {
        matches_segments(&self.segments, host)
    }
}

/// Matches `s` against segments, trying each split of a digit run where numbers meet digits.
fn matches_segments(segments: &[Segment], s: &str) -> bool {
    match segments.split_first() {
        None => s.is_empty(),
        Some((Segment::Literal(lit), rest)) => s
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| matches_segments(rest, tail)),
        Some((Segment::Numbers(ranges), rest)) => {
            let run = s.bytes().take_while(u8::is_ascii_digit).count();
            (1..=run).any(|k| {
                let Some((num, tail)) = s.split_at_checked(k) else {
                    return false;
                };
                let Ok(value) = num.parse::<u64>() else {
                    return false;
                };
                ranges.iter().any(|r| r.prints(value, k)) && matches_segments(rest, tail)
            })
        }
    }
}

/// The number of decimal digits of `value`.
pub(super) fn digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Iterates a pattern's names like an odometer, the last bracket group turning fastest.
pub(super) struct PatternIter<'a> {
    segments: &'a [Segment],
    /// Per segment: (index of the current range, current value); unused for literals.
    cursors: Vec<(usize, u64)>,
    done: bool,
}

impl<'a> PatternIter<'a> {
    pub(super) fn new(pattern: &'a Pattern) -> Self {
        let cursors = pattern
            .segments
            .iter()
            .map(|seg| (0, first_value(seg)))
            .collect();
        PatternIter {
            segments: &pattern.segments,
            cursors,
            done: false,
        }
    }

    fn advance(&mut self) {
        for (seg, cursor) in self.segments.iter().zip(self.cursors.iter_mut()).rev() {
            let Segment::Numbers(ranges) = seg else {
                continue;
            };
            let (index, value) = *cursor;
            match ranges.get(index) {
                Some(range) if value < range.hi => *cursor = (index, value + 1),
                _ => match ranges.get(index + 1) {
                    Some(next) => *cursor = (index + 1, next.lo),
                    None => {
                        *cursor = (0, first_value(seg));
                        continue;
                    }
                },
            }
            return;
        }
        self.done = true;
    }
}

fn first_value(segment: &Segment) -> u64 {
    match segment {
        Segment::Numbers(ranges) => ranges.first().map_or(0, |r| r.lo),
        Segment::Literal(_) => 0,
    }
}

impl Iterator for PatternIter<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let mut name = String::new();
        for (seg, &(index, value)) in self.segments.iter().zip(&self.cursors) {
            match seg {
                Segment::Literal(lit) => name.push_str(lit),
                Segment::Numbers(ranges) => {
                    let width = ranges.get(index).map_or(1, |r| r.width);
                    // Writing into a String cannot fail.
                    let _ = write!(name, "{value:0width$}");
                }
            }
        }
        self.advance();
        Some(name)
    }
}
