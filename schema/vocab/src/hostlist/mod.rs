//! Slurm hostlist expressions: `node[01-10,20],gpu[1-4]`.
//!
//! Written here rather than taken from crates.io because the published crates get zero padding
//! and compression wrong. The syntax matches Slurm's `hostlist_create`:
//! - commas at the top level separate items; commas inside brackets separate ranges;
//! - a bracket holds ranges `lo-hi` or single numbers, `[1-3,5,7-9]`; a range's zero padding is
//!   the width of its lower bound as written (`[001-100]` gives `001`..`100`, `[1-100]` gives
//!   `1`..`100`); stepped ranges (`[1-9:2]`) are not Slurm syntax and are rejected;
//! - several bracket groups in one item expand as a cartesian product, the leftmost group
//!   varying slowest: `a[1-2]b[3-4]` is `a1b3,a1b4,a2b3,a2b4`;
//! - duplicates are kept in order on expansion ([`Hostlist::uniq`] removes them), empty items
//!   (`a,,b`) are skipped, whitespace is an error.
//!
//! [`compress`] and the [`Display`](fmt::Display) of a [`Hostlist`] give Slurm's ranged form.

mod compress;
mod parse;
mod pattern;
#[cfg(test)]
mod tests;

pub use compress::compress;

use pattern::{Pattern, PatternIter, Range, digits};

use std::fmt;
use std::str::FromStr;

/// The most hosts one expression may expand to (Slurm's `MAX_RANGE`); guards memory.
pub const MAX_HOSTS: usize = 1 << 20;
/// The longest host name an expression may produce; with [`MAX_HOSTS`] it bounds expansion.
pub const MAX_NAME_LEN: usize = 255;

/// Why a hostlist expression cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// A `[` without its `]`, a `]` without its `[`, or a `[` inside brackets.
    #[error("unbalanced bracket at byte {pos} of hostlist `{expr}'")]
    UnbalancedBracket { expr: String, pos: usize },
    /// Whitespace, which hostlist expressions do not allow.
    #[error("whitespace at byte {pos} of hostlist `{expr}'")]
    Whitespace { expr: String, pos: usize },
    /// A bracket with nothing between two of its commas: `n[]`, `n[1,]`.
    #[error("empty range in `{text}'")]
    EmptyRange { text: String },
    /// A range bound that is not a plain decimal number (also `1-9:2`, `-3`, overflow).
    #[error("invalid range: `{text}'")]
    BadNumber { text: String },
    /// A range whose upper bound is below its lower bound: `[5-1]`.
    #[error("invalid range: `{text}' (descending)")]
    DescendingRange { text: String },
    /// The expression expands to more than `max` hosts.
    #[error("too many hosts in range `{text}' (more than {max})")]
    TooManyHosts { text: String, max: usize },
    /// An item produces names longer than `max` bytes.
    #[error("host name too long in `{text}' (more than {max} bytes)")]
    NameTooLong { text: String, max: usize },
}

/// Expands a hostlist expression into host names, in order, duplicates kept.
pub fn expand(expr: &str) -> Result<Vec<String>, HostlistError> {
    Ok(Hostlist::parse(expr)?.iter().collect())
}

/// An ordered list of host names, stored as ranges rather than expanded names.
///
/// Equality compares the expansions (order and duplicates included), not the spelling.
#[derive(Debug, Clone, Default)]
pub struct Hostlist {
    patterns: Vec<Pattern>,
    len: usize,
}

impl Hostlist {
    /// An empty hostlist.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a hostlist expression such as `node[01-10,20],gpu[1-4]`.
    pub fn parse(expr: &str) -> Result<Self, HostlistError> {
        parse::parse(expr)
    }

    /// The host names in order, duplicates kept.
    pub fn iter(&self) -> impl Iterator<Item = String> + '_ {
        self.patterns.iter().flat_map(PatternIter::new)
    }

    /// The number of names, duplicates counted.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no names.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `host` is in the list, without expanding it.
    pub fn contains(&self, host: &str) -> bool {
        self.patterns.iter().any(|p| p.matches(host))
    }

    /// Appends one host name (empty names are ignored), merging it into the last range when it
    /// is the next number (`n1` then `n2` is stored as `n[1-2]`).
    pub fn push(&mut self, host: &str) {
        if host.is_empty() {
            return;
        }
        match compress::split_name(host) {
            (prefix, Some((value, text_len))) => {
                let extended = self
                    .patterns
                    .last_mut()
                    .is_some_and(|last| last.try_extend(prefix, value, text_len));
                if !extended {
                    let width = if digits(value) < text_len {
                        text_len
                    } else {
                        1
                    };
                    let range = Range {
                        lo: value,
                        hi: value,
                        width,
                    };
                    self.patterns
                        .push(Pattern::numbered(prefix, vec![range], 1));
                }
            }
            (_, None) => self.patterns.push(Pattern::literal(host)),
        }
        self.len += 1;
    }

    /// The same hosts sorted as [`compress`] orders them, each once (Slurm's `hostlist_uniq`).
    pub fn uniq(&self) -> Hostlist {
        let names: Vec<String> = self.iter().collect();
        let patterns: Vec<Pattern> = compress::chunks(&names)
            .into_iter()
            .map(|chunk| match chunk {
                compress::Chunk::Plain(name) => Pattern::literal(name),
                compress::Chunk::Group {
                    prefix,
                    width,
                    numbers,
                } => {
                    let ranges = compress::runs(&numbers)
                        .map(|(lo, hi)| Range { lo, hi, width })
                        .collect();
                    Pattern::numbered(prefix, ranges, numbers.len())
                }
            })
            .collect();
        let len = patterns.iter().map(|p| p.count).sum();
        Hostlist { patterns, len }
    }
}

impl fmt::Display for Hostlist {
    /// The compressed ranged form, sorted and without duplicates (see [`compress`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&compress(&self.iter().collect::<Vec<_>>()))
    }
}

impl FromStr for Hostlist {
    type Err = HostlistError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Hostlist::parse(s)
    }
}

impl<S: AsRef<str>> FromIterator<S> for Hostlist {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut list = Hostlist::new();
        list.extend(iter);
        list
    }
}

impl<S: AsRef<str>> Extend<S> for Hostlist {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for host in iter {
            self.push(host.as_ref());
        }
    }
}

impl PartialEq for Hostlist {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Hostlist {}
