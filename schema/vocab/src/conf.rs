//! The `slurm.conf` / `slurmdbd.conf` syntax: `Key=Value` pairs, several to a line, `#`
//! comments, case-insensitive keys, optional double quotes and `\` line continuation.
//!
//! This module only splits text into located pairs; each program interprets the keys it knows
//! and reports bad values through [`ConfError::bad_value`], which names file, line and key.

use std::fmt;
use std::path::{Path, PathBuf};

/// A configuration error, always naming where it is.
#[derive(Debug, thiserror::Error)]
pub enum ConfError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line that is not `Key=Value` pairs.
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A key whose value is invalid.
    #[error("{path}:{line}: invalid value for {key}: \"{value}\" ({reason})")]
    BadValue {
        path: PathBuf,
        line: usize,
        key: String,
        value: String,
        reason: String,
    },
    /// A required key that is missing.
    #[error("{path}: {key} is required")]
    Missing { path: PathBuf, key: String },
}

/// One `Key=Value` pair with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub key: String,
    pub value: String,
    pub line: usize,
}

impl Pair {
    /// Whether the key is `name`, ignoring case as Slurm does.
    pub fn is(&self, name: &str) -> bool {
        self.key.eq_ignore_ascii_case(name)
    }
}

/// A parsed file: its path and its logical lines, each a list of pairs.
#[derive(Debug, Clone)]
pub struct ConfFile {
    pub path: PathBuf,
    pub lines: Vec<Vec<Pair>>,
}

impl ConfFile {
    /// Reads and splits `path`.
    pub fn read(path: &Path) -> Result<Self, ConfError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(path, &text)
    }

    /// Splits `text`; `path` is used in error messages.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfError> {
        let mut lines = Vec::new();
        let mut pending = String::new();
        let mut pending_start = 0;
        for (i, raw) in text.lines().enumerate() {
            let no = i + 1;
            let content = strip_comment(raw);
            if pending.is_empty() {
                pending_start = no;
            }
            if let Some(cont) = content.trim_end().strip_suffix('\\') {
                pending.push_str(cont);
                pending.push(' ');
                continue;
            }
            pending.push_str(content);
            let logical = std::mem::take(&mut pending);
            let pairs =
                split_pairs(&logical, pending_start).map_err(|message| ConfError::Syntax {
                    path: path.to_path_buf(),
                    line: pending_start,
                    message,
                })?;
            if !pairs.is_empty() {
                lines.push(pairs);
            }
        }
        if !pending.trim().is_empty() {
            let pairs =
                split_pairs(&pending, pending_start).map_err(|message| ConfError::Syntax {
                    path: path.to_path_buf(),
                    line: pending_start,
                    message,
                })?;
            lines.push(pairs);
        }
        Ok(Self {
            path: path.to_path_buf(),
            lines,
        })
    }

    /// Every pair, in file order.
    pub fn pairs(&self) -> impl Iterator<Item = &Pair> {
        self.lines.iter().flatten()
    }

    /// The last value given for a top-level `key` (later lines override earlier ones).
    pub fn get(&self, key: &str) -> Option<&Pair> {
        self.pairs().filter(|p| p.is(key)).last()
    }

    /// A [`ConfError::BadValue`] for `pair`.
    pub fn bad_value(&self, pair: &Pair, reason: impl fmt::Display) -> ConfError {
        ConfError::BadValue {
            path: self.path.clone(),
            line: pair.line,
            key: pair.key.clone(),
            value: pair.value.clone(),
            reason: reason.to_string(),
        }
    }

    /// Parses `pair`'s value as a number, or names file, line and key.
    pub fn number<T: std::str::FromStr>(&self, pair: &Pair) -> Result<T, ConfError>
    where
        T::Err: fmt::Display,
    {
        pair.value
            .trim()
            .parse::<T>()
            .map_err(|e| self.bad_value(pair, e))
    }
}

fn strip_comment(line: &str) -> &str {
    let mut in_quotes = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quotes = !in_quotes,
            '#' if !in_quotes => return &line[..i],
            _ => {}
        }
    }
    line
}

fn split_pairs(line: &str, line_no: usize) -> Result<Vec<Pair>, String> {
    let mut pairs = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("expected Key=Value, found \"{}\"", rest.trim()))?;
        let key = &rest[..eq];
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("expected Key=Value, found \"{}\"", rest.trim()));
        }
        let after = &rest[eq + 1..];
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted
                .find('"')
                .ok_or_else(|| format!("unterminated quote in value of {key}"))?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        pairs.push(Pair {
            key: key.to_string(),
            value: value.to_string(),
            line: line_no,
        });
        rest = tail.trim_start();
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfFile, ConfError> {
        ConfFile::parse(Path::new("test.conf"), text)
    }

    #[test]
    fn splits_pairs_comments_quotes_and_continuations() {
        let f = parse(
            "# header\nClusterName=c1  # trailing\n\nNodeName=n[1-4] CPUs=8 \\\n  RealMemory=1000\nReason=\"two words\"\n",
        )
        .unwrap();
        assert_eq!(f.lines.len(), 3);
        assert_eq!(f.get("clustername").unwrap().value, "c1");
        let node: Vec<_> = f.lines[1]
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(
            node,
            [
                ("NodeName", "n[1-4]"),
                ("CPUs", "8"),
                ("RealMemory", "1000")
            ]
        );
        assert_eq!(f.lines[1][2].line, 4);
        assert_eq!(f.get("Reason").unwrap().value, "two words");
    }

    #[test]
    fn later_values_override_and_errors_name_the_line() {
        let f = parse("DbdPort=1\nDbdPort=2\n").unwrap();
        assert_eq!(f.get("DBDPORT").unwrap().value, "2");
        let e = parse("A=1\nnot a pair\n").unwrap_err().to_string();
        assert!(e.starts_with("test.conf:2:"), "{e}");
        let f = parse("DbdPort=x\n").unwrap();
        let e = f
            .number::<u16>(f.get("DbdPort").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("test.conf:1") && e.contains("DbdPort"), "{e}");
    }
}
