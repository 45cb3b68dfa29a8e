//! Slurm's column printing (`src/common/print_fields.c` behaviour), shared by every command.
//!
//! A column has a header and a width. In the fixed layout a value is right-justified in its
//! width (left-justified when the width is negative), a value longer than the width is cut and
//! its last visible character replaced by `+`, and every column is followed by one space
//! (trailing space included). The header line is followed by a line of dashes. The parsable
//! modes print values untouched: `-p` puts `|` after every field, `-P` only between fields.
//!
//! [`percent`] holds squeue's and sinfo's printf-like `%.18i` layouts.

use std::io::{self, Write};

pub mod percent;
pub mod width;

/// How rows are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputMode {
    /// Fixed-width columns (the default).
    #[default]
    Fixed,
    /// `-p` / `--parsable`: `|` after every field, the last one included.
    Parsable,
    /// `-P` / `--parsable2`: `|` between fields only.
    Parsable2,
}

/// One output column: its header and width (negative = left-justified).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub header: String,
    pub width: i32,
}

impl Column {
    /// A column titled `header`, `width` characters wide (cut to ±[`width::MAX_WIDTH`]).
    pub fn new(header: impl Into<String>, width: i32) -> Self {
        let max = i32::from(width::MAX_WIDTH);
        Self {
            header: header.into(),
            width: width.clamp(-max, max),
        }
    }
}

/// Prints a header and rows for a fixed set of columns.
#[derive(Debug, Clone)]
pub struct Printer {
    mode: OutputMode,
    columns: Vec<Column>,
}

impl Printer {
    /// A printer for `columns` laid out as `mode` says.
    pub fn new(mode: OutputMode, columns: Vec<Column>) -> Self {
        Self { mode, columns }
    }

    /// The columns, in print order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Writes the header line, plus the dash line in the fixed layout.
    pub fn print_header(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut line = String::new();
        let mut dashes = String::new();
        for (i, col) in self.columns.iter().enumerate() {
            let last = i + 1 == self.columns.len();
            match self.mode {
                OutputMode::Fixed => {
                    // Headers are cut without the `+` marker, as Slurm's printf("%*.*s") does.
                    line.push_str(&pad(
                        &cut(&col.header, col.width.unsigned_abs(), false),
                        col.width,
                    ));
                    line.push(' ');
                    dashes.push_str(&"-".repeat(abs_width(col.width)));
                    dashes.push(' ');
                }
                _ => self.push_parsable(&mut line, &col.header, last),
            }
        }
        writeln!(w, "{line}")?;
        if self.mode == OutputMode::Fixed {
            writeln!(w, "{dashes}")?;
        }
        Ok(())
    }

    /// Writes one row; `values` holds one string per column (missing ones print blank).
    pub fn print_row(&self, w: &mut dyn Write, values: &[String]) -> io::Result<()> {
        writeln!(w, "{}", self.format_row(values))
    }

    /// One row as text, without the newline.
    pub fn format_row(&self, values: &[String]) -> String {
        let mut line = String::new();
        for (i, col) in self.columns.iter().enumerate() {
            let value = values.get(i).map_or("", String::as_str);
            let last = i + 1 == self.columns.len();
            match self.mode {
                OutputMode::Fixed => {
                    push_fixed(&mut line, value, col.width);
                    line.push(' ');
                }
                _ => self.push_parsable(&mut line, value, last),
            }
        }
        line
    }

    fn push_parsable(&self, line: &mut String, value: &str, last: bool) {
        line.push_str(value);
        if !(last && self.mode == OutputMode::Parsable2) {
            line.push('|');
        }
    }
}

/// The magnitude of a column width, never more than [`width::MAX_WIDTH`].
fn abs_width(width: i32) -> usize {
    width::clamp(usize::try_from(width.unsigned_abs()).unwrap_or(usize::MAX))
}

/// Cuts `s` to `width` characters; with `mark`, a cut value ends in `+`.
fn cut(s: &str, width: u32, mark: bool) -> String {
    let width = width::clamp(usize::try_from(width).unwrap_or(usize::MAX));
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width).collect();
    if mark && width > 0 {
        out.pop();
        out.push('+');
    }
    out
}

/// Appends `value` as one fixed-layout cell of `width` (without the space that follows it),
/// allocating nothing: cut to the width with a `+` marking the cut, then right-justified for a
/// positive width, left-justified for a negative one; a width of 0 shows nothing of a value.
pub fn push_fixed(line: &mut String, value: &str, width: i32) {
    let w = abs_width(width);
    let len = value.chars().count();
    if len > w {
        if w > 0 {
            line.extend(value.chars().take(w - 1));
            line.push('+');
        }
        return;
    }
    if width >= 0 {
        line.extend(std::iter::repeat_n(' ', w - len));
        line.push_str(value);
    } else {
        line.push_str(value);
        line.extend(std::iter::repeat_n(' ', w - len));
    }
}

/// Pads `s` to the column width: right-justified for a positive width, left for a negative one.
fn pad(s: &str, width: i32) -> String {
    percent::pad(s, abs_width(width), width >= 0, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(mode: OutputMode, header: bool, rows: &[&[&str]]) -> String {
        let p = Printer::new(
            mode,
            vec![
                Column::new("Cluster", 10),
                Column::new("ID", 2),
                Column::new("Name", -6),
            ],
        );
        let mut buf = Vec::new();
        if header {
            p.print_header(&mut buf).unwrap();
        }
        for r in rows {
            let row: Vec<String> = r.iter().map(|s| s.to_string()).collect();
            p.print_row(&mut buf, &row).unwrap();
        }
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn push_fixed_matches_cut_then_pad() {
        for value in ["", "a", "abc", "abcdef", "héllo wörld", "0123456789"] {
            for width in [-12, -5, -3, -1, 0, 1, 2, 3, 5, 10, 12] {
                let mut line = String::from(">");
                push_fixed(&mut line, value, width);
                let old = pad(&cut(value, width.unsigned_abs(), true), width);
                assert_eq!(line, format!(">{old}"), "{value:?} in {width}");
            }
        }
    }

    #[test]
    fn fixed_layout_justifies_truncates_and_keeps_trailing_space() {
        let out = render(
            OutputMode::Fixed,
            true,
            &[&["c1", "7", "ab"], &["averylongname", "123", "abcdefgh"]],
        );
        assert_eq!(
            out,
            "   Cluster ID Name   \n\
             ---------- -- ------ \n\
             \x20       c1  7 ab     \n\
             averylong+ 1+ abcde+ \n"
        );
    }

    #[test]
    fn headers_are_cut_without_a_plus() {
        let p = Printer::new(OutputMode::Fixed, vec![Column::new("Features", 2)]);
        let mut buf = Vec::new();
        p.print_header(&mut buf).unwrap();
        assert_eq!(String::from_utf8(buf).unwrap(), "Fe \n-- \n");
    }

    #[test]
    fn parsable_modes_place_bars_and_skip_dashes() {
        let rows: &[&[&str]] = &[&["averylongname", "", "x"]];
        assert_eq!(
            render(OutputMode::Parsable, true, rows),
            "Cluster|ID|Name|\naverylongname||x|\n"
        );
        assert_eq!(
            render(OutputMode::Parsable2, true, rows),
            "Cluster|ID|Name\naverylongname||x\n"
        );
        assert_eq!(
            render(OutputMode::Parsable2, false, rows),
            "averylongname||x\n"
        );
    }

    #[test]
    fn missing_values_print_blank() {
        let out = render(OutputMode::Fixed, false, &[&["c1"]]);
        assert_eq!(out, "        c1           \n");
    }
}
