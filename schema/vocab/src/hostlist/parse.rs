//! Parsing a hostlist expression into patterns of literals and bracket groups.

use super::pattern::{Pattern, Range, Segment, digits};
use super::{Hostlist, HostlistError, MAX_HOSTS, MAX_NAME_LEN};

/// Parses a whole expression; see the module documentation for the syntax.
pub(super) fn parse(expr: &str) -> Result<Hostlist, HostlistError> {
    let mut patterns = Vec::new();
    let mut len = 0usize;
    for item in split_items(expr)? {
        if item.is_empty() {
            continue;
        }
        let pattern = parse_item(item)?;
        len = len
            .checked_add(pattern.count)
            .filter(|total| *total <= MAX_HOSTS)
            .ok_or_else(|| too_many(item))?;
        patterns.push(pattern);
    }
    Ok(Hostlist { patterns, len })
}

/// Splits at top-level commas, checking brackets and whitespace on the way.
fn split_items(expr: &str) -> Result<Vec<&str>, HostlistError> {
    let unbalanced = |pos| HostlistError::UnbalancedBracket {
        expr: expr.to_owned(),
        pos,
    };
    let mut items = Vec::new();
    let mut start = 0;
    let mut open: Option<usize> = None;
    for (pos, ch) in expr.char_indices() {
        match ch {
            c if c.is_whitespace() => {
                return Err(HostlistError::Whitespace {
                    expr: expr.to_owned(),
                    pos,
                });
            }
            '[' if open.is_some() => return Err(unbalanced(pos)),
            '[' => open = Some(pos),
            ']' if open.take().is_none() => return Err(unbalanced(pos)),
            ',' if open.is_none() => {
                items.push(expr.get(start..pos).unwrap_or_default());
                start = pos + 1;
            }
            _ => {}
        }
    }
    if let Some(pos) = open {
        return Err(unbalanced(pos));
    }
    items.push(expr.get(start..).unwrap_or_default());
    Ok(items)
}

/// Parses one item whose brackets are known to be balanced and not nested.
fn parse_item(item: &str) -> Result<Pattern, HostlistError> {
    let mut segments = Vec::new();
    let mut count = 1usize;
    let mut name_len = 0usize;
    let mut rest = item;
    while let Some((literal, tail)) = rest.split_once('[') {
        push_literal(&mut segments, &mut name_len, literal);
        let Some((body, after)) = tail.split_once(']') else {
            let pos = item.len().saturating_sub(tail.len() + 1);
            return Err(HostlistError::UnbalancedBracket {
                expr: item.to_owned(),
                pos,
            });
        };
        let (ranges, values) = parse_ranges(body, item)?;
        count = count
            .checked_mul(values)
            .filter(|total| *total <= MAX_HOSTS)
            .ok_or_else(|| too_many(item))?;
        let widest = ranges
            .iter()
            .map(|r| r.width.max(digits(r.hi)))
            .max()
            .unwrap_or(0);
        name_len = name_len.saturating_add(widest);
        segments.push(Segment::Numbers(ranges));
        rest = after;
    }
    push_literal(&mut segments, &mut name_len, rest);
    if name_len > MAX_NAME_LEN {
        return Err(HostlistError::NameTooLong {
            text: item.to_owned(),
            max: MAX_NAME_LEN,
        });
    }
    Ok(Pattern { segments, count })
}

fn push_literal(segments: &mut Vec<Segment>, name_len: &mut usize, literal: &str) {
    if !literal.is_empty() {
        *name_len = name_len.saturating_add(literal.len());
        segments.push(Segment::Literal(literal.to_owned()));
    }
}

/// Parses a bracket body `1-3,5` into ranges and the number of values they hold.
fn parse_ranges(body: &str, item: &str) -> Result<(Vec<Range>, usize), HostlistError> {
    let mut ranges = Vec::new();
    let mut values = 0usize;
    for spec in body.split(',') {
        if spec.is_empty() {
            return Err(HostlistError::EmptyRange {
                text: item.to_owned(),
            });
        }
        let (lo_text, hi_text) = spec.split_once('-').unwrap_or((spec, spec));
        let bad = || HostlistError::BadNumber {
            text: spec.to_owned(),
        };
        let lo = number(lo_text).ok_or_else(bad)?;
        let hi = number(hi_text).ok_or_else(bad)?;
        if hi < lo {
            return Err(HostlistError::DescendingRange {
                text: spec.to_owned(),
            });
        }
        values = usize::try_from(hi - lo)
            .ok()
            .and_then(|span| span.checked_add(1))
            .and_then(|n| values.checked_add(n))
            .filter(|total| *total <= MAX_HOSTS)
            .ok_or_else(|| too_many(item))?;
        ranges.push(Range {
            lo,
            hi,
            width: lo_text.len(),
        });
    }
    Ok((ranges, values))
}

/// A range bound: plain ASCII digits (no sign, no step) that fit in a `u64`.
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn too_many(item: &str) -> HostlistError {
    HostlistError::TooManyHosts {
        text: item.to_owned(),
        max: MAX_HOSTS,
    }
}
