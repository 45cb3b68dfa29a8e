//! Compressing host names into Slurm's ranged form: `n[1-3,5],gpu07`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::pattern::digits;

/// Compresses host names into Slurm's ranged form, sorted and without duplicates.
///
/// The output is sorted as `sinfo`/`squeue` show node lists (Slurm's `hostlist_sort` then
/// `hostlist_ranged_string`): by prefix (the name without its trailing digits, byte order),
/// then by digit width, then numerically. Within a prefix, zero-padded numbers (`n08`) group
/// only with numbers of their width; unpadded numbers group with each other whatever their
/// width (`n9,n10` gives `n[9-10]`), or join the widest padded group they print the same in
/// (`n08,n09,n10` gives `n[08-10]`). A group of one prints without brackets (`n1`, but
/// `n[1,3]`); names without trailing digits print as they are.
///
/// Empty names are dropped. The result expands back to the same set of names unless a name
/// holds `[`, `]`, `,` or whitespace, or is longer than [`super::MAX_NAME_LEN`].
pub fn compress<S: AsRef<str>>(hosts: &[S]) -> String {
    let mut out = String::new();
    for (i, chunk) in chunks(hosts).iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        chunk.render(&mut out);
    }
    out
}

/// One comma-separated piece of the compressed form.
pub(super) enum Chunk<'a> {
    /// A name without a trailing number, printed as is.
    Plain(&'a str),
    /// Names `prefix` + a number printed `width` digits wide; `numbers` sorted, distinct.
    Group {
        prefix: &'a str,
        width: usize,
        numbers: Vec<u64>,
    },
}

impl Chunk<'_> {
    fn render(&self, out: &mut String) {
        // Writing into a String cannot fail.
        match self {
            Chunk::Plain(name) => out.push_str(name),
            Chunk::Group {
                prefix,
                width,
                numbers,
            } => {
                out.push_str(prefix);
                if let [only] = numbers.as_slice() {
                    let _ = write!(out, "{only:0width$}");
                    return;
                }
                out.push('[');
                for (i, (lo, hi)) in runs(numbers).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{lo:0width$}");
                    if hi != lo {
                        let _ = write!(out, "-{hi:0width$}");
                    }
                }
                out.push(']');
            }
        }
    }
}

/// Splits a name into its prefix and trailing number with that number's digit count:
/// `node007` is `("node", Some((7, 3)))`. Digits that overflow a `u64` stay in the name.
pub(super) fn split_name(name: &str) -> (&str, Option<(u64, usize)>) {
    let len = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let split = name.split_at_checked(name.len() - len);
    match split.map(|(prefix, num)| (prefix, num.parse::<u64>())) {
        Some((prefix, Ok(value))) if len > 0 => (prefix, Some((value, len))),
        _ => (name, None),
    }
}

/// Groups names into chunks in output order; see [`compress`] for the rules.
pub(super) fn chunks<S: AsRef<str>>(hosts: &[S]) -> Vec<Chunk<'_>> {
    let mut plain: BTreeSet<&str> = BTreeSet::new();
    let mut numbered: BTreeMap<&str, Vec<(u64, usize)>> = BTreeMap::new();
    for host in hosts.iter().map(AsRef::as_ref).filter(|h| !h.is_empty()) {
        match split_name(host) {
            (prefix, Some(number)) => numbered.entry(prefix).or_default().push(number),
            (_, None) => {
                plain.insert(host);
            }
        }
    }
    let mut groups: BTreeMap<(&str, usize), BTreeSet<u64>> = BTreeMap::new();
    for (prefix, numbers) in numbered {
        let is_padded = |&(value, len): &(u64, usize)| digits(value) < len;
        let padded: BTreeSet<usize> = numbers
            .iter()
            .filter(|n| is_padded(n))
            .map(|&(_, len)| len)
            .collect();
        for number @ (value, len) in numbers {
            // An unpadded number prints the same at any width up to its length.
            let width = if is_padded(&number) {
                len
            } else {
                padded.range(..=len).next_back().copied().unwrap_or(1)
            };
            groups.entry((prefix, width)).or_default().insert(value);
        }
    }
    let mut keyed: Vec<((&str, usize), Chunk<'_>)> = plain
        .into_iter()
        .map(|name| ((name, 0), Chunk::Plain(name)))
        .chain(groups.into_iter().map(|((prefix, width), numbers)| {
            let numbers = numbers.into_iter().collect();
            (
                (prefix, width),
                Chunk::Group {
                    prefix,
                    width,
                    numbers,
                },
            )
        }))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, chunk)| chunk).collect()
}

/// Runs of consecutive numbers in a sorted, distinct slice, as `(lo, hi)`.
pub(super) fn runs(numbers: &[u64]) -> impl Iterator<Item = (u64, u64)> + '_ {
    numbers
        .chunk_by(|a, b| a.checked_add(1) == Some(*b))
        .filter_map(|run| Some((*run.first()?, *run.last()?)))
}
