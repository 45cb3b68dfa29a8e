//! squeue's and sinfo's printf-like layouts: `-o "%.18i %9P %N"` (`%[.][size]type[suffix]`)
//! and squeue's `-O "JobID:10,Name"` (`name[:[.][size][suffix]]`), and the field padding both
//! commands share (`_print_str`): no dash line, no implicit separator, the text between fields
//! printed as is.

use super::width;

/// One field of a format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// The field letter (`-o`) or name (`-O`), as written.
    pub name: String,
    /// Minimum width; 0 = as wide as the value.
    pub width: usize,
    /// `.`: right-justify (default is left).
    pub right: bool,
    /// `#` in a built-in format: the width is computed from the values (sinfo).
    pub auto: bool,
    /// Text printed after the field.
    pub suffix: String,
}

/// A parsed format: text before the first field, then the fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Layout {
    /// Text printed before the first field.
    pub prefix: String,
    /// The fields in order.
    pub fields: Vec<FieldSpec>,
}

/// Parses a `%[.][size]type[suffix]` format (`-o`). A `%` followed by nothing yields a field
/// with an empty name, which callers report as invalid.
pub fn parse_letters(format: &str) -> Layout {
    let mut parts = format.split('%');
    let prefix = parts.next().unwrap_or_default().to_string();
    let mut fields = Vec::new();
    for token in parts {
        let rest = token.strip_prefix('.');
        let right = rest.is_some();
        let rest = rest.unwrap_or(token);
        let auto = rest.starts_with('#');
        let rest = rest.strip_prefix('#').unwrap_or(rest);
        let (width, digits) = width::parse_digits(rest);
        let mut chars = rest[digits..].chars();
        let name = chars.next().map(String::from).unwrap_or_default();
        fields.push(FieldSpec {
            name,
            width,
            right,
            auto,
            suffix: chars.collect(),
        });
    }
    Layout { prefix, fields }
}

/// Parses squeue's `-O` format: comma-separated `name[:[.][size][suffix]]`; without a size a
/// field is 20 wide, left-justified.
pub fn parse_long(format: &str) -> Vec<FieldSpec> {
    format
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|token| match token.split_once(':') {
            None => FieldSpec {
                name: token.to_string(),
                width: 20,
                right: false,
                auto: false,
                suffix: String::new(),
            },
            Some((name, spec)) => {
                let (right, rest) = match spec.strip_prefix('.') {
                    Some(r) => (true, r),
                    None => (false, spec),
                };
                let (width, digits) = width::parse_digits(rest);
                FieldSpec {
                    name: name.to_string(),
                    width,
                    right,
                    auto: false,
                    suffix: rest[digits..].to_string(),
                }
            }
        })
        .collect()
}

/// Pads a value as squeue and sinfo do: with a width, left-justified values are cut to it;
/// right-justified ones are cut only when `cut` (node lists and times are not); shorter values
/// are padded with spaces. Width 0 prints the value as is; no width exceeds
/// [`width::MAX_WIDTH`].
pub fn pad(value: &str, width: usize, right: bool, cut: bool) -> String {
    let width = width::clamp(width);
    if width == 0 {
        return value.to_string();
    }
    let len = value.chars().count();
    if len > width && (cut || !right) {
        return value.chars().take(width).collect();
    }
    let fill = " ".repeat(width.saturating_sub(len));
    if right {
        fill + value
    } else {
        format!("{value}{fill}")
    }
}

/// Renders one line: the prefix, then each value padded per its field, then its suffix.
/// `cut[i]` says whether field `i` may be cut when right-justified.
pub fn render_line(layout: &Layout, values: &[(String, bool)]) -> String {
    let mut line = layout.prefix.clone();
    for (field, (value, cut)) in layout.fields.iter().zip(values) {
        line.push_str(&pad(value, field.width, field.right, *cut));
        line.push_str(&field.suffix);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letter_formats_split_width_justification_and_suffix() {
        let l = parse_letters("x%.18i %9P:%N");
        assert_eq!(l.prefix, "x");
        let got: Vec<_> = l
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.width, f.right, f.suffix.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("i", 18, true, " "),
                ("P", 9, false, ":"),
                ("N", 0, false, "")
            ]
        );
        let auto = parse_letters("%#P %.6D");
        assert!(auto.fields[0].auto && !auto.fields[1].auto);
        assert_eq!(parse_letters("%.5").fields[0].name, "");
    }

    #[test]
    fn long_formats_default_to_twenty_left() {
        let f = parse_long("JobID,Name:.10|,State:5");
        assert_eq!(
            (f[0].name.as_str(), f[0].width, f[0].right),
            ("JobID", 20, false)
        );
        assert_eq!(
            (
                f[1].name.as_str(),
                f[1].width,
                f[1].right,
                f[1].suffix.as_str()
            ),
            ("Name", 10, true, "|")
        );
        assert_eq!((f[2].width, f[2].right), (5, false));
    }

    #[test]
    fn padding_cuts_like_printf_precision() {
        assert_eq!(pad("abc", 5, true, true), "  abc");
        assert_eq!(pad("abc", 5, false, true), "abc  ");
        assert_eq!(pad("abcdefgh", 3, true, true), "abc");
        assert_eq!(pad("abcdefgh", 3, true, false), "abcdefgh");
        assert_eq!(pad("abcdefgh", 3, false, false), "abc");
        assert_eq!(pad("abcdefgh", 0, false, true), "abcdefgh");
    }

    #[test]
    fn lines_join_prefix_values_and_suffixes() {
        let l = parse_letters(">%.4i|%3j.");
        let line = render_line(&l, &[("7".into(), true), ("name".into(), true)]);
        assert_eq!(line, ">   7|nam.");
    }
}
