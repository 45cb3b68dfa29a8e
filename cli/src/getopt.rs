//! A `getopt_long` work-alike, so option errors read exactly as Slurm's commands print them
//! (glibc's wording: `unrecognized option '--foo'`, `invalid option -- 'z'`, ...). A command's
//! option table is a list of [`OptSpec`]s whose `id` is the command's own option enum (every
//! command but sacctmgr, whose few flags act as they are met: `sacctmgr -h -x` is help).
//!
//! Long options may be abbreviated to any unambiguous prefix, short options may be clustered
//! (`-Hv`) and take their value attached (`-n4`) or as the next word. In [`Mode::StopAtOperand`]
//! parsing ends at the first word that is not an option (sbatch's script, srun's command); in
//! [`Mode::Permute`] operands are collected and parsing goes on (scancel's job ids, the query
//! commands' stray words). A short-only option has an empty long name, which no `--` word names.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    /// A flag.
    No,
    /// Always takes a value (`--opt=v`, `--opt v`, `-ov`, `-o v`).
    Required,
    /// Takes a value only when attached (`--opt=v`, `-ov`).
    Optional,
}

/// One entry of an option table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptSpec<O> {
    /// The long name, without dashes.
    pub long: &'static str,
    /// The short letter, if any.
    pub short: Option<char>,
    /// Whether a value follows.
    pub arg: HasArg,
    /// What the option means to the command.
    pub id: O,
}

/// How words that are not options are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Stop at the first operand; it and everything after it are returned as operands.
    StopAtOperand,
    /// Collect operands anywhere and keep parsing (until `--`).
    Permute,
}

/// The options found, in order, with their values, and the operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<O> {
    /// Options and their values, in command-line order.
    pub opts: Vec<(O, Option<String>)>,
    /// Words that are not options.
    pub operands: Vec<String>,
}

/// A word the option table does not accept. Displays as glibc's message after `prog: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GetoptError {
    /// `--name` matches no long option.
    #[error("unrecognized option '--{0}'")]
    UnknownLong(String),
    /// `-c` is not a short option.
    #[error("invalid option -- '{0}'")]
    UnknownShort(char),
    /// `--name` is a prefix of several options.
    #[error("option '--{name}' is ambiguous; possibilities:{}", candidates.iter().map(|c| format!(" '--{c}'")).collect::<String>())]
    Ambiguous {
        name: String,
        candidates: Vec<&'static str>,
    },
    /// A long option that needs a value got none.
    #[error("option '--{0}' requires an argument")]
    LongNeedsArg(&'static str),
    /// A short option that needs a value got none.
    #[error("option requires an argument -- '{0}'")]
    ShortNeedsArg(char),
    /// `--flag=value` for a flag.
    #[error("option '--{0}' doesn't allow an argument")]
    LongTakesNoArg(&'static str),
}

/// How a command words an ambiguous long option: sbatch, srun and scancel list the options the
/// prefix matches (glibc since 2.24); squeue, sinfo, scontrol, sacct and sreport name only the
/// prefix (older glibc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ambiguity {
    /// `option '--co' is ambiguous; possibilities: '--comment' '--constraint'`.
    Listed,
    /// `option '--co' is ambiguous`.
    Bare,
}

impl GetoptError {
    /// The whole text `prog` prints for this error: `prog: ` and glibc's message, then Slurm's
    /// hint line (without the final newline).
    pub fn usage_text(&self, prog: &str, ambiguity: Ambiguity) -> String {
        let message = match (self, ambiguity) {
            (Self::Ambiguous { name, .. }, Ambiguity::Bare) => {
                format!("option '--{name}' is ambiguous")
            }
            _ => self.to_string(),
        };
        format!("{prog}: {message}\nTry \"{prog} --help\" for more information")
    }
}

/// Parses `args` (without the program name) against `table`.
pub fn parse<O: Copy + PartialEq>(
    table: &[OptSpec<O>],
    args: &[String],
    mode: Mode,
) -> Result<Parsed<O>, GetoptError> {
    let mut out = Parsed {
        opts: Vec::new(),
        operands: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if word == "--" {
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = word.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let spec = find_long(table, name)?;
            let value = match (spec.arg, attached) {
                (HasArg::No, Some(_)) => return Err(GetoptError::LongTakesNoArg(spec.long)),
                (HasArg::No, None) => None,
                (HasArg::Optional, v) => v,
                (HasArg::Required, Some(v)) => Some(v),
                (HasArg::Required, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => return Err(GetoptError::LongNeedsArg(spec.long)),
                },
            };
            out.opts.push((spec.id, value));
        } else if word.len() > 1 && word.starts_with('-') {
            let letters: Vec<char> = word[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                k += 1;
                let spec = table
                    .iter()
                    .find(|s| s.short == Some(c))
                    .ok_or(GetoptError::UnknownShort(c))?;
                let rest: String = letters[k..].iter().collect();
                let value = match spec.arg {
                    HasArg::No => None,
                    HasArg::Optional => {
                        k = letters.len();
                        (!rest.is_empty()).then_some(rest)
                    }
                    HasArg::Required => {
                        k = letters.len();
                        if !rest.is_empty() {
                            Some(rest)
                        } else if let Some(v) = args.get(i) {
                            i += 1;
                            Some(v.clone())
                        } else {
                            return Err(GetoptError::ShortNeedsArg(c));
                        }
                    }
                };
                out.opts.push((spec.id, value));
            }
        } else {
            out.operands.push(word.clone());
            if mode == Mode::StopAtOperand {
                out.operands.extend(args[i..].iter().cloned());
                break;
            }
        }
    }
    Ok(out)
}

/// An exact long name, else the one option it abbreviates. Several names for the same option
/// (same id and value kind) are not ambiguous, as in glibc.
fn find_long<'a, O: Copy + PartialEq>(
    table: &'a [OptSpec<O>],
    name: &str,
) -> Result<&'a OptSpec<O>, GetoptError> {
    if name.is_empty() {
        return Err(GetoptError::UnknownLong(String::new()));
    }
    if let Some(spec) = table.iter().find(|s| s.long == name) {
        return Ok(spec);
    }
    let matches: Vec<&OptSpec<O>> = table.iter().filter(|s| s.long.starts_with(name)).collect();
    match matches.as_slice() {
        [] => Err(GetoptError::UnknownLong(name.to_string())),
        [one] => Ok(one),
        [first, ..] => {
            if matches
                .iter()
                .all(|m| m.arg == first.arg && m.id == first.id)
            {
                Ok(first)
            } else {
                Err(GetoptError::Ambiguous {
                    name: name.to_string(),
                    candidates: matches.iter().map(|m| m.long).collect(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum T {
        Name,
        Hold,
        Verbose,
        Comment,
        Constraint,
        Ntasks,
        NtasksPerNode,
        Parsable,
    }

    const TABLE: &[OptSpec<T>] = &[
        OptSpec {
            long: "job-name",
            short: Some('J'),
            arg: HasArg::Required,
            id: T::Name,
        },
        OptSpec {
            long: "hold",
            short: Some('H'),
            arg: HasArg::No,
            id: T::Hold,
        },
        OptSpec {
            long: "verbose",
            short: Some('v'),
            arg: HasArg::No,
            id: T::Verbose,
        },
        OptSpec {
            long: "comment",
            short: None,
            arg: HasArg::Required,
            id: T::Comment,
        },
        OptSpec {
            long: "constraint",
            short: Some('C'),
            arg: HasArg::Required,
            id: T::Constraint,
        },
        OptSpec {
            long: "ntasks",
            short: Some('n'),
            arg: HasArg::Required,
            id: T::Ntasks,
        },
        OptSpec {
            long: "tasks",
            short: Some('n'),
            arg: HasArg::Required,
            id: T::Ntasks,
        },
        OptSpec {
            long: "ntasks-per-node",
            short: None,
            arg: HasArg::Required,
            id: T::NtasksPerNode,
        },
        OptSpec {
            long: "parsable",
            short: None,
            arg: HasArg::Optional,
            id: T::Parsable,
        },
    ];

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn long_short_clustered_and_attached_forms() {
        let p = parse(
            TABLE,
            &words("--job-name=a -J b -Hv -n4 --ntasks 5 --parsable x y"),
            Mode::StopAtOperand,
        )
        .unwrap();
        assert_eq!(
            p.opts,
            vec![
                (T::Name, Some("a".into())),
                (T::Name, Some("b".into())),
                (T::Hold, None),
                (T::Verbose, None),
                (T::Ntasks, Some("4".into())),
                (T::Ntasks, Some("5".into())),
                (T::Parsable, None),
            ]
        );
        assert_eq!(p.operands, vec!["x", "y"]);
    }

    #[test]
    fn stop_mode_keeps_options_after_the_operand_for_the_operand() {
        let p = parse(TABLE, &words("-H script.sh -J x"), Mode::StopAtOperand).unwrap();
        assert_eq!(p.opts, vec![(T::Hold, None)]);
        assert_eq!(p.operands, vec!["script.sh", "-J", "x"]);
        let q = parse(TABLE, &words("12 -v 13 -- -J"), Mode::Permute).unwrap();
        assert_eq!(q.opts, vec![(T::Verbose, None)]);
        assert_eq!(q.operands, vec!["12", "13", "-J"]);
    }

    #[test]
    fn prefixes_resolve_unless_ambiguous() {
        let p = parse(TABLE, &words("--job=x --comm=c --ho"), Mode::Permute).unwrap();
        assert_eq!(p.opts[0], (T::Name, Some("x".into())));
        assert_eq!(p.opts[1], (T::Comment, Some("c".into())));
        assert_eq!(p.opts[2], (T::Hold, None));
        let e = parse(TABLE, &words("--co=x"), Mode::Permute).unwrap_err();
        assert_eq!(
            e.to_string(),
            "option '--co' is ambiguous; possibilities: '--comment' '--constraint'"
        );
        let e = parse(TABLE, &words("--ntasks-p=1 --nt=2"), Mode::Permute).unwrap_err();
        assert!(
            e.to_string().starts_with("option '--nt' is ambiguous"),
            "{e}"
        );
    }

    #[test]
    fn glibc_messages() {
        let msg = |s: &str| {
            parse(TABLE, &words(s), Mode::Permute)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(msg("--bogus"), "unrecognized option '--bogus'");
        assert_eq!(msg("-z"), "invalid option -- 'z'");
        assert_eq!(msg("-J"), "option requires an argument -- 'J'");
        assert_eq!(
            msg("--job-name"),
            "option '--job-name' requires an argument"
        );
        assert_eq!(
            msg("--hold=yes"),
            "option '--hold' doesn't allow an argument"
        );
    }
}

/// The query commands' style: permuted operands, `Bare` ambiguity, the hint line.
#[cfg(test)]
mod query_tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Q {
        NoHeader,
        User,
        Jobs,
        Format,
        FormatLong,
        Time,
        Comment,
        Constraint,
    }

    const SPECS: &[OptSpec<Q>] = &[
        OptSpec {
            short: Some('h'),
            long: "noheader",
            arg: HasArg::No,
            id: Q::NoHeader,
        },
        OptSpec {
            short: Some('u'),
            long: "user",
            arg: HasArg::Required,
            id: Q::User,
        },
        OptSpec {
            short: None,
            long: "users",
            arg: HasArg::Required,
            id: Q::User,
        },
        OptSpec {
            short: Some('j'),
            long: "jobs",
            arg: HasArg::Optional,
            id: Q::Jobs,
        },
        OptSpec {
            short: Some('o'),
            long: "format",
            arg: HasArg::Required,
            id: Q::Format,
        },
        OptSpec {
            short: Some('O'),
            long: "Format",
            arg: HasArg::Required,
            id: Q::FormatLong,
        },
        OptSpec {
            short: Some('t'),
            long: "",
            arg: HasArg::Required,
            id: Q::Time,
        },
        OptSpec {
            short: None,
            long: "comment",
            arg: HasArg::Required,
            id: Q::Comment,
        },
        OptSpec {
            short: None,
            long: "constraint",
            arg: HasArg::Required,
            id: Q::Constraint,
        },
    ];

    fn run(args: &[&str]) -> Result<Parsed<Q>, String> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        parse(SPECS, &a, Mode::Permute).map_err(|e| e.usage_text("squeue", Ambiguity::Bare))
    }

    #[test]
    fn short_clusters_attached_and_separate_values() {
        let p = run(&["-hualice", "-j5", "-j", "7", "--user=bob", "--us", "carl"]).unwrap();
        assert_eq!(
            p.opts,
            vec![
                (Q::NoHeader, None),
                (Q::User, Some("alice".into())),
                (Q::Jobs, Some("5".into())),
                (Q::Jobs, None),
                (Q::User, Some("bob".into())),
                (Q::User, Some("carl".into())),
            ]
        );
        assert_eq!(p.operands, vec!["7".to_string()]);
    }

    #[test]
    fn getopt_errors_name_the_option() {
        assert_eq!(
            run(&["-x"]).unwrap_err(),
            "squeue: invalid option -- 'x'\nTry \"squeue --help\" for more information"
        );
        assert!(
            run(&["--bogus"])
                .unwrap_err()
                .starts_with("squeue: unrecognized option '--bogus'")
        );
        assert!(
            run(&["-u"])
                .unwrap_err()
                .contains("requires an argument -- 'u'")
        );
        assert!(
            run(&["--form", "x"]).is_ok(),
            "case-sensitive prefix is unique"
        );
        assert!(
            run(&["--noheader=1"])
                .unwrap_err()
                .contains("doesn't allow")
        );
        assert_eq!(
            run(&["--co=x"]).unwrap_err(),
            "squeue: option '--co' is ambiguous\nTry \"squeue --help\" for more information"
        );
    }

    #[test]
    fn an_empty_long_name_names_no_short_only_option() {
        assert_eq!(
            run(&["--=x"]).unwrap_err(),
            "squeue: unrecognized option '--'\nTry \"squeue --help\" for more information"
        );
        assert_eq!(
            run(&["-tx"]).unwrap().opts,
            vec![(Q::Time, Some("x".into()))]
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let p = run(&["--", "-h"]).unwrap();
        assert!(p.opts.is_empty());
        assert_eq!(p.operands, vec!["-h".to_string()]);
    }
}
