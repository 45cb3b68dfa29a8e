//! sacctmgr's command-line grammar: global options, `key[+-]=value` words and the
//! `where`/`set` parts of a command (lines and keywords: [`crate::words`]).

use crate::output::OutputMode;
use crate::words::is_keyword;

use super::error::SacctmgrError;

/// The global options (`-i -n -p -P -Q -v`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `-i`: commit without asking.
    pub immediate: bool,
    /// `-n`: no header lines.
    pub noheader: bool,
    /// `-p` / `-P`, or fixed columns.
    pub mode: OutputMode,
    /// `-Q`.
    pub quiet: bool,
    /// `-v`, once per occurrence.
    pub verbosity: u8,
    /// `-s`: list users with their associations (as `withassoc`).
    pub associations: bool,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Run `words` (or read commands from stdin when empty).
    Run { opts: Options, words: Vec<String> },
    /// `-h`.
    Help,
    /// `-V`.
    Version,
}

const LONG: &[(&str, char)] = &[
    ("help", 'h'),
    ("usage", 'h'),
    ("immediate", 'i'),
    ("noheader", 'n'),
    ("oneliner", 'o'),
    ("parsable", 'p'),
    ("parsable2", 'P'),
    ("quiet", 'Q'),
    ("readonly", 'r'),
    ("associations", 's'),
    ("verbose", 'v'),
    ("version", 'V'),
];

/// Parses the arguments after the program name. Options may appear anywhere, as with GNU
/// getopt; `--` ends them.
pub fn parse_invocation(args: &[String]) -> Result<Invocation, SacctmgrError> {
    let mut opts = Options::default();
    let mut words = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let flags: Vec<char> = if arg == "--" {
            words.extend(iter.by_ref().cloned());
            break;
        } else if let Some(long) = arg.strip_prefix("--") {
            vec![long_option(long)?]
        } else if arg.len() > 1 && arg.starts_with('-') {
            arg.chars().skip(1).collect()
        } else {
            words.push(arg.clone());
            continue;
        };
        for flag in flags {
            match flag {
                'h' => return Ok(Invocation::Help),
                'V' => return Ok(Invocation::Version),
                'i' => opts.immediate = true,
                'n' => opts.noheader = true,
                'p' => opts.mode = OutputMode::Parsable,
                'P' => opts.mode = OutputMode::Parsable2,
                'Q' => opts.quiet = true,
                'v' => opts.verbosity = opts.verbosity.saturating_add(1),
                's' => opts.associations = true,
                // Accepted for compatibility; they change nothing Sluice prints.
                'o' | 'r' => {}
                other => return Err(SacctmgrError::InvalidOption(other.to_string())),
            }
        }
    }
    Ok(Invocation::Run { opts, words })
}

fn long_option(name: &str) -> Result<char, SacctmgrError> {
    if let Some((_, c)) = LONG.iter().find(|(l, _)| *l == name) {
        return Ok(*c);
    }
    let hits: Vec<char> = LONG
        .iter()
        .filter(|(l, _)| !name.is_empty() && l.starts_with(name))
        .map(|(_, c)| *c)
        .collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [first, rest @ ..] if rest.iter().all(|c| c == first) => Ok(*first),
        _ => Err(SacctmgrError::UnrecognizedOption(format!("--{name}"))),
    }
}

/// How a `key=value` word applies its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `key=value`.
    Set,
    /// `key+=value`.
    Add,
    /// `key-=value`.
    Remove,
}

/// One word of a command: a bare word or `key[+-]=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// A word without `=`.
    Bare(String),
    /// `key[+-]=value`.
    Pair { key: String, op: Op, value: String },
}

impl Word {
    /// Splits a word at its first `=` (a `+` or `-` right before it is the operator).
    pub fn parse(raw: &str) -> Self {
        let Some(eq) = raw.find('=') else {
            return Self::Bare(raw.to_string());
        };
        let (mut key, value) = (&raw[..eq], &raw[eq + 1..]);
        let mut op = Op::Set;
        if let Some(k) = key.strip_suffix('+') {
            (key, op) = (k, Op::Add);
        } else if let Some(k) = key.strip_suffix('-') {
            (key, op) = (k, Op::Remove);
        }
        Self::Pair {
            key: key.to_string(),
            op,
            value: value.to_string(),
        }
    }

    /// The word as typed, for error messages.
    pub fn raw(&self) -> String {
        match self {
            Self::Bare(w) => w.clone(),
            Self::Pair { key, op, value } => {
                let op = match op {
                    Op::Set => "",
                    Op::Add => "+",
                    Op::Remove => "-",
                };
                format!("{key}{op}={value}")
            }
        }
    }
}

/// A comma-separated list with duplicates and blanks dropped, order kept.
pub fn split_list(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    out
}

/// A list edited by `x=a,b`, `x+=a` or `x-=a` (Slurm's mode lists). Items keep a `+`/`-`
/// prefix when added or removed; plain items set the list exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModeList {
    /// Whether the list was given at all (an empty `x=` clears it).
    pub given: bool,
    /// The items, `+a` / `-a` for edits, `a` for exact members.
    pub items: Vec<String>,
}

impl ModeList {
    /// Adds one `key<op>=value` word; mixing exact items with `+`/`-` ones is an error.
    pub fn apply(&mut self, op: Op, value: &str) -> Result<(), SacctmgrError> {
        self.given = true;
        for item in split_list(value) {
            let item = match op {
                Op::Add => format!("+{}", item.trim_start_matches(['+', '-'])),
                Op::Remove => format!("-{}", item.trim_start_matches(['+', '-'])),
                Op::Set => item,
            };
            if !self.items.contains(&item) {
                self.items.push(item);
            }
        }
        let edits = self.items.iter().filter(|i| is_edit(i)).count();
        if edits != 0 && edits != self.items.len() {
            return Err(SacctmgrError::MixedListModes);
        }
        Ok(())
    }

    /// Whether the items edit the list (`+`/`-`) rather than set it.
    pub fn is_edit(&self) -> bool {
        self.items.first().is_some_and(|i| is_edit(i))
    }
}

/// Whether an item carries a `+`/`-` edit prefix.
pub fn is_edit(item: &str) -> bool {
    item.starts_with('+') || item.starts_with('-')
}

/// A command's words split at `where` and `set`: words before `set` (or after `where`) are
/// conditions, words after `set` are settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    pub cond: Vec<Word>,
    pub set: Vec<Word>,
}

impl Parts {
    /// Splits `words`.
    pub fn split(words: &[String]) -> Self {
        let mut parts = Self::default();
        let mut in_set = false;
        for w in words {
            if is_keyword(w, "where", 5) {
                in_set = false;
            } else if is_keyword(w, "set", 3) {
                in_set = true;
            } else if in_set {
                parts.set.push(Word::parse(w));
            } else {
                parts.cond.push(Word::parse(w));
            }
        }
        parts
    }

    /// All words, conditions first, for commands that do not tell them apart (add, list, delete).
    pub fn all(words: &[String]) -> Vec<Word> {
        let p = Self::split(words);
        p.cond.into_iter().chain(p.set).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_combine_and_may_follow_the_command() {
        let inv = parse_invocation(&strings(&["-in", "show", "cluster", "-P", "--verb"])).unwrap();
        let Invocation::Run { opts, words } = inv else {
            panic!("not a run")
        };
        assert!(opts.immediate && opts.noheader);
        assert_eq!(opts.mode, OutputMode::Parsable2);
        assert_eq!(opts.verbosity, 1);
        assert_eq!(words, strings(&["show", "cluster"]));
        assert_eq!(
            parse_invocation(&strings(&["--parsable"])).unwrap(),
            Invocation::Run {
                opts: Options {
                    mode: OutputMode::Parsable,
                    ..Options::default()
                },
                words: vec![],
            }
        );
        assert_eq!(
            parse_invocation(&strings(&["-V"])).unwrap(),
            Invocation::Version
        );
        let Invocation::Run { opts, .. } =
            parse_invocation(&strings(&["-n", "-s", "list", "user"])).unwrap()
        else {
            panic!("not a run")
        };
        assert!(opts.associations && opts.noheader);
        let Invocation::Run { opts, .. } = parse_invocation(&strings(&["--assoc"])).unwrap() else {
            panic!("not a run")
        };
        assert!(opts.associations);
        assert!(parse_invocation(&strings(&["-x"])).is_err());
        assert!(
            parse_invocation(&strings(&["--pars"])).is_err(),
            "ambiguous prefix"
        );
    }

    #[test]
    fn words_split_at_the_first_equals_with_an_operator() {
        assert_eq!(
            Word::parse("clusters+=a,b"),
            Word::Pair {
                key: "clusters".into(),
                op: Op::Add,
                value: "a,b".into()
            }
        );
        assert_eq!(Word::parse("x-=").raw(), "x-=");
        assert_eq!(
            Word::parse("descr=a=b"),
            Word::Pair {
                key: "descr".into(),
                op: Op::Set,
                value: "a=b".into()
            }
        );
        assert_eq!(Word::parse("c1"), Word::Bare("c1".into()));
    }

    #[test]
    fn parts_split_at_where_and_set() {
        let p = Parts::split(&strings(&[
            "c1",
            "SET",
            "fedstate=drain",
            "where",
            "fed=f1",
        ]));
        assert_eq!(p.cond, vec![Word::parse("c1"), Word::parse("fed=f1")]);
        assert_eq!(p.set, vec![Word::parse("fedstate=drain")]);
        assert_eq!(Parts::all(&strings(&["a", "set", "b"])).len(), 2);
    }

    #[test]
    fn mode_lists_refuse_mixing_set_and_edits() {
        let mut l = ModeList::default();
        l.apply(Op::Set, "a,b,a,").unwrap();
        assert_eq!(l.items, strings(&["a", "b"]));
        assert!(!l.is_edit());
        assert!(matches!(
            l.apply(Op::Add, "c"),
            Err(SacctmgrError::MixedListModes)
        ));
        let mut l = ModeList::default();
        l.apply(Op::Add, "a").unwrap();
        l.apply(Op::Remove, "b").unwrap();
        assert_eq!(l.items, strings(&["+a", "-b"]));
        assert!(matches!(
            ModeList::default().apply(Op::Set, "+a,b"),
            Err(SacctmgrError::MixedListModes)
        ));
        let mut empty = ModeList::default();
        empty.apply(Op::Set, "").unwrap();
        assert!(empty.given && empty.items.is_empty());
    }
}
