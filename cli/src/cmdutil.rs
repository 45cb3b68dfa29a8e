//! What squeue, sinfo, scontrol and sacct share: GNU-style option parsing with Slurm's error
//! texts, user and group names, the controller's error texts, and a small runtime to run one
//! request on.

use std::io::Write;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// A flag.
    None,
    /// `-x value`, `-xvalue`, `--long value`, `--long=value`.
    Required,
    /// Only attached: `-xvalue`, `--long=value` (getopt's `::`).
    Optional,
}

/// One option a command accepts.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    /// The short letter, if any.
    pub short: Option<char>,
    /// The long name (without `--`); may be empty.
    pub long: &'static str,
    /// Whether it takes a value.
    pub arg: ArgKind,
    /// What the command calls it.
    pub id: &'static str,
}

/// Options in command-line order, and the words that are not options.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// `(id, value)` per option given.
    pub opts: Vec<(&'static str, Option<String>)>,
    /// The other words, in order (getopt permutes them to the end).
    pub positional: Vec<String>,
}

/// Parses `args` as GNU getopt_long does (unique prefixes of long names accepted, `--` ends
/// options). Errors are getopt's messages followed by Slurm's hint.
pub fn getopt(prog: &str, args: &[String], specs: &[OptSpec]) -> Result<Parsed, String> {
    let hint = format!("Try \"{prog} --help\" for more information");
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            parsed.positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let spec = find_long(specs, name).map_err(|ambiguous| {
                if ambiguous {
                    format!("{prog}: option '--{name}' is ambiguous\n{hint}")
                } else {
                    format!("{prog}: unrecognized option '--{name}'\n{hint}")
                }
            })?;
            let value = match (spec.arg, attached) {
                (ArgKind::None, Some(_)) => {
                    return Err(format!(
                        "{prog}: option '--{}' doesn't allow an argument\n{hint}",
                        spec.long
                    ));
                }
                (ArgKind::None, None) => None,
                (_, Some(v)) => Some(v),
                (ArgKind::Optional, None) => None,
                (ArgKind::Required, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => {
                        return Err(format!(
                            "{prog}: option '--{}' requires an argument\n{hint}",
                            spec.long
                        ));
                    }
                },
            };
            parsed.opts.push((spec.id, value));
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            parsed.positional.push(arg.clone());
            continue;
        };
        let chars: Vec<char> = cluster.chars().collect();
        let mut k = 0;
        while k < chars.len() {
            let c = chars[k];
            k += 1;
            let spec = specs
                .iter()
                .find(|s| s.short == Some(c))
                .ok_or_else(|| format!("{prog}: invalid option -- '{c}'\n{hint}"))?;
            let rest: String = chars[k..].iter().collect();
            let value = match spec.arg {
                ArgKind::None => None,
                ArgKind::Optional => {
                    k = chars.len();
                    (!rest.is_empty()).then_some(rest)
                }
                ArgKind::Required => {
                    k = chars.len();
                    if !rest.is_empty() {
                        Some(rest)
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        Some(v.clone())
                    } else {
                        return Err(format!(
                            "{prog}: option requires an argument -- '{c}'\n{hint}"
                        ));
                    }
                }
            };
            parsed.opts.push((spec.id, value));
        }
    }
    Ok(parsed)
}

/// The spec whose long name is `name`, or the only one it abbreviates; `Err(true)` when
/// ambiguous, `Err(false)` when unknown.
fn find_long<'a>(specs: &'a [OptSpec], name: &str) -> Result<&'a OptSpec, bool> {
    if name.is_empty() {
        return Err(false);
    }
    if let Some(s) = specs.iter().find(|s| s.long == name) {
        return Ok(s);
    }
    let mut matches = specs.iter().filter(|s| s.long.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(s), None) => Ok(s),
        (Some(a), Some(b)) if a.id == b.id => Ok(a),
        (Some(_), Some(_)) => Err(true),
        (None, _) => Err(false),
    }
}

/// The login name of `uid`, or the number when the account is unknown (Slurm's
/// `uid_to_string`).
pub fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}

/// The name of group `gid`, or the number when unknown.
pub fn group_name(gid: u32) -> String {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map_or_else(|| gid.to_string(), |g| g.name)
}

/// The uid of a user given by name or number.
pub fn uid_of(user: &str) -> Option<u32> {
    if let Ok(n) = user.parse::<u32>() {
        return Some(n);
    }
    nix::unistd::User::from_name(user)
        .ok()
        .flatten()
        .map(|u| u.uid.as_raw())
}

/// The calling user's uid.
pub fn current_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

/// The text of a refused request: the daemon's message, or Slurm's wording for a daemon that
/// cannot be reached.
pub fn status_text(status: &tonic::Status) -> String {
    match status.code() {
        tonic::Code::Unavailable | tonic::Code::DeadlineExceeded => {
            "Unable to contact slurm controller (connect failure)".to_string()
        }
        _ => crate::sacctmgr::error::status_text(status),
    }
}

/// A single-threaded runtime for one command's requests.
pub fn runtime(prog: &str, err: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            let _ = writeln!(err, "{prog}: error: {e}");
            None
        }
    }
}

/// The process's arguments without the program name.
pub fn args() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// Now, in unix seconds (only the commands' entry points read the clock).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[OptSpec] = &[
        OptSpec {
            short: Some('h'),
            long: "noheader",
            arg: ArgKind::None,
            id: "h",
        },
        OptSpec {
            short: Some('u'),
            long: "user",
            arg: ArgKind::Required,
            id: "u",
        },
        OptSpec {
            short: None,
            long: "users",
            arg: ArgKind::Required,
            id: "u",
        },
        OptSpec {
            short: Some('j'),
            long: "jobs",
            arg: ArgKind::Optional,
            id: "j",
        },
        OptSpec {
            short: Some('o'),
            long: "format",
            arg: ArgKind::Required,
            id: "o",
        },
        OptSpec {
            short: Some('O'),
            long: "Format",
            arg: ArgKind::Required,
            id: "O",
        },
    ];

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        getopt("squeue", &a, SPECS)
    }

    #[test]
    fn short_clusters_attached_and_separate_values() {
        let p = parse(&["-hualice", "-j5", "-j", "7", "--user=bob", "--us", "carl"]).unwrap();
        assert_eq!(
            p.opts,
            vec![
                ("h", None),
                ("u", Some("alice".into())),
                ("j", Some("5".into())),
                ("j", None),
                ("u", Some("bob".into())),
                ("u", Some("carl".into())),
            ]
        );
        assert_eq!(p.positional, vec!["7".to_string()]);
    }

    #[test]
    fn getopt_errors_name_the_option() {
        assert_eq!(
            parse(&["-x"]).unwrap_err(),
            "squeue: invalid option -- 'x'\nTry \"squeue --help\" for more information"
        );
        assert!(
            parse(&["--bogus"])
                .unwrap_err()
                .starts_with("squeue: unrecognized option '--bogus'")
        );
        assert!(
            parse(&["-u"])
                .unwrap_err()
                .contains("requires an argument -- 'u'")
        );
        assert!(
            parse(&["--form", "x"]).is_ok(),
            "case-sensitive prefix is unique"
        );
        assert!(
            parse(&["--noheader=1"])
                .unwrap_err()
                .contains("doesn't allow")
        );
    }

    #[test]
    fn double_dash_ends_options() {
        let p = parse(&["--", "-h"]).unwrap();
        assert!(p.opts.is_empty());
        assert_eq!(p.positional, vec!["-h".to_string()]);
    }
}
