//! The automatic handling's instructions: `SMD_NONSTOP_FAILED` and `SMD_NONSTOP_FAILING`, each
//! a `:`-separated list of `REPLACE`, `DROP`, `TIME_LIMIT_DELAY=X`, `TIME_LIMIT_EXTEND=Y`,
//! `TIME_LIMIT_DROP=Z` (minutes, `4` or `4min`) and `EXIT_JOB`. The items combine as a logical
//! and whatever their order: replace (waiting up to the delay), then drop what could not be
//! replaced, then exit the job if nodes are still failed (or at once when `EXIT_JOB` is alone).
//! Parsing is strict: an unknown or repeated item, a bad number, or a time item without the
//! action it modifies is an error naming the variable and the item.

use std::fmt;

/// The variable for failed nodes.
pub const FAILED_VAR: &str = "SMD_NONSTOP_FAILED";
/// The variable for failing nodes.
pub const FAILING_VAR: &str = "SMD_NONSTOP_FAILING";

/// What to do about one class of nodes (failed, or failing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// `REPLACE`: ask for a spare for each node.
    pub replace: bool,
    /// `DROP`: drop the nodes that were not replaced.
    pub drop: bool,
    /// `TIME_LIMIT_DELAY`: minutes to keep trying to replace (and to extend the limit by).
    pub delay_minutes: Option<u32>,
    /// `TIME_LIMIT_EXTEND`: minutes of extension per replaced node.
    pub extend_minutes: Option<u32>,
    /// `TIME_LIMIT_DROP`: minutes of extension per dropped node.
    pub drop_minutes: Option<u32>,
    /// `EXIT_JOB`: the job exits when nodes are still failed after the other actions.
    pub exit_job: bool,
}

/// A value of `SMD_NONSTOP_FAILED`/`SMD_NONSTOP_FAILING` that is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// The variable.
    pub var: &'static str,
    /// Its whole value.
    pub value: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {}=\"{}\": {}",
            self.var, self.value, self.reason
        )
    }
}

impl std::error::Error for PolicyError {}

const ITEMS: &str =
    "REPLACE, DROP, TIME_LIMIT_DELAY=min, TIME_LIMIT_EXTEND=min, TIME_LIMIT_DROP=min, EXIT_JOB";

impl Policy {
    /// Parses the value of `var`.
    pub fn parse(var: &'static str, value: &str) -> Result<Self, PolicyError> {
        let err = |reason: String| PolicyError {
            var,
            value: value.to_string(),
            reason,
        };
        let mut p = Policy::default();
        if value.trim().is_empty() {
            return Err(err(format!("empty (expected {ITEMS})")));
        }
        for item in value.split(':') {
            let item = item.trim();
            let (word, arg) = match item.split_once('=') {
                Some((w, a)) => (w.trim(), Some(a.trim())),
                None => (item, None),
            };
            let word = word.to_ascii_uppercase();
            let twice = || err(format!("{word} is given twice"));
            match (word.as_str(), arg) {
                ("REPLACE", None) if p.replace => return Err(twice()),
                ("REPLACE", None) => p.replace = true,
                ("DROP", None) if p.drop => return Err(twice()),
                ("DROP", None) => p.drop = true,
                ("EXIT_JOB", None) if p.exit_job => return Err(twice()),
                ("EXIT_JOB", None) => p.exit_job = true,
                ("REPLACE" | "DROP" | "EXIT_JOB", Some(_)) => {
                    return Err(err(format!("{word} takes no value")));
                }
                ("TIME_LIMIT_DELAY" | "TIME_LIMIT_EXTEND" | "TIME_LIMIT_DROP", arg) => {
                    let slot = match word.as_str() {
                        "TIME_LIMIT_DELAY" => &mut p.delay_minutes,
                        "TIME_LIMIT_EXTEND" => &mut p.extend_minutes,
                        _ => &mut p.drop_minutes,
                    };
                    if slot.is_some() {
                        return Err(twice());
                    }
                    let minutes = arg.and_then(minutes).ok_or_else(|| {
                        err(format!(
                            "{word} needs a number of minutes (from 1), as {word}=10"
                        ))
                    })?;
                    *slot = Some(minutes);
                }
                ("", None) => return Err(err(format!("an empty item (expected {ITEMS})"))),
                _ => return Err(err(format!("unknown item \"{item}\" (expected {ITEMS})"))),
            }
        }
        let needs = |what: &str, of: &str| err(format!("{what} needs {of}"));
        if p.delay_minutes.is_some() && !p.replace {
            return Err(needs("TIME_LIMIT_DELAY", "REPLACE"));
        }
        if p.extend_minutes.is_some() && !p.replace {
            return Err(needs("TIME_LIMIT_EXTEND", "REPLACE"));
        }
        if p.drop_minutes.is_some() && !p.drop {
            return Err(needs("TIME_LIMIT_DROP", "DROP"));
        }
        Ok(p)
    }

    /// The policies of `environ`: `(failed, failing)`, each `None` when its variable is unset.
    pub fn from_environ(
        environ: &[(String, String)],
    ) -> Result<(Option<Policy>, Option<Policy>), PolicyError> {
        let get = |var: &'static str| -> Result<Option<Policy>, PolicyError> {
            environ
                .iter()
                .rev()
                .find(|(k, _)| k == var)
                .map(|(_, v)| Policy::parse(var, v))
                .transpose()
        };
        Ok((get(FAILED_VAR)?, get(FAILING_VAR)?))
    }
}

/// `4` or `4min` (any case), at least 1.
fn minutes(text: &str) -> Option<u32> {
    let lower = text.to_ascii_lowercase();
    let digits = lower.strip_suffix("min").unwrap_or(&lower);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u32>().ok().filter(|m| *m > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `p` written back as a variable's value, items in `order`.
    fn render(p: &Policy, order: &[usize]) -> String {
        let mut items: Vec<String> = Vec::new();
        let all = [
            p.replace.then(|| "REPLACE".to_string()),
            p.drop.then(|| "DROP".to_string()),
            p.delay_minutes.map(|m| format!("TIME_LIMIT_DELAY={m}")),
            p.extend_minutes
                .map(|m| format!("TIME_LIMIT_EXTEND={m}min")),
            p.drop_minutes.map(|m| format!("TIME_LIMIT_DROP={m}")),
            p.exit_job.then(|| "EXIT_JOB".to_string()),
        ];
        for i in order {
            if let Some(item) = &all[*i % all.len()]
                && !items.contains(item)
            {
                items.push(item.clone());
            }
        }
        for item in all.into_iter().flatten() {
            if !items.contains(&item) {
                items.push(item);
            }
        }
        items.join(":")
    }

    proptest! {
        #[test]
        fn valid_policies_round_trip_in_any_order(
            replace: bool,
            drop: bool,
            exit_job: bool,
            delay in proptest::option::of(1u32..10_000),
            extend in proptest::option::of(1u32..10_000),
            drop_min in proptest::option::of(1u32..10_000),
            order in proptest::collection::vec(0usize..6, 0..6),
        ) {
            let p = Policy {
                replace,
                drop,
                delay_minutes: delay.filter(|_| replace),
                extend_minutes: extend.filter(|_| replace),
                drop_minutes: drop_min.filter(|_| drop),
                exit_job: exit_job || !(replace || drop),
            };
            prop_assert_eq!(Policy::parse(FAILED_VAR, &render(&p, &order)), Ok(p));
        }

        #[test]
        fn any_text_parses_or_is_an_error_naming_the_variable(text in "[A-Za-z_=:0-9 -]{0,40}") {
            if let Err(e) = Policy::parse(FAILING_VAR, &text) {
                prop_assert!(e.to_string().starts_with("invalid SMD_NONSTOP_FAILING=\""));
            }
        }
    }

    fn ok(v: &str) -> Policy {
        Policy::parse(FAILED_VAR, v).unwrap()
    }

    fn bad(v: &str) -> String {
        Policy::parse(FAILED_VAR, v).unwrap_err().to_string()
    }

    #[test]
    fn the_guides_combinations_parse() {
        assert_eq!(
            ok("REPLACE"),
            Policy {
                replace: true,
                ..Policy::default()
            }
        );
        assert_eq!(
            ok("REPLACE:TIME_LIMIT_DELAY=4:EXIT_JOB"),
            Policy {
                replace: true,
                delay_minutes: Some(4),
                exit_job: true,
                ..Policy::default()
            }
        );
        assert_eq!(
            ok("REPLACE:TIME_LIMIT_DELAY=4min:DROP:TIME_LIMIT_DROP=10"),
            Policy {
                replace: true,
                drop: true,
                delay_minutes: Some(4),
                drop_minutes: Some(10),
                ..Policy::default()
            }
        );
        assert_eq!(ok("replace:time_limit_extend=2MIN").extend_minutes, Some(2));
        assert!(ok("EXIT_JOB").exit_job);
    }

    #[test]
    fn bad_values_are_named() {
        for (value, words) in [
            ("", "empty"),
            ("REPLACE:", "an empty item"),
            ("REPLACE:FOO", "unknown item \"FOO\""),
            ("REPLACE:REPLACE", "REPLACE is given twice"),
            (
                "REPLACE:TIME_LIMIT_DELAY",
                "TIME_LIMIT_DELAY needs a number",
            ),
            (
                "REPLACE:TIME_LIMIT_DELAY=0",
                "TIME_LIMIT_DELAY needs a number",
            ),
            (
                "REPLACE:TIME_LIMIT_DELAY=x",
                "TIME_LIMIT_DELAY needs a number",
            ),
            (
                "REPLACE:TIME_LIMIT_DELAY=-1",
                "TIME_LIMIT_DELAY needs a number",
            ),
            (
                "REPLACE:TIME_LIMIT_DELAY=99999999999",
                "TIME_LIMIT_DELAY needs a number",
            ),
            ("REPLACE=1", "REPLACE takes no value"),
            ("TIME_LIMIT_DELAY=4", "TIME_LIMIT_DELAY needs REPLACE"),
            (
                "DROP:TIME_LIMIT_EXTEND=4",
                "TIME_LIMIT_EXTEND needs REPLACE",
            ),
            ("REPLACE:TIME_LIMIT_DROP=4", "TIME_LIMIT_DROP needs DROP"),
        ] {
            let e = bad(value);
            assert!(
                e.starts_with(&format!("invalid SMD_NONSTOP_FAILED=\"{value}\": "))
                    && e.contains(words),
                "{value}: {e}"
            );
        }
    }

    #[test]
    fn the_environment_gives_each_class_its_policy() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(Policy::from_environ(&env(&[])).unwrap(), (None, None));
        let (failed, failing) =
            Policy::from_environ(&env(&[(FAILING_VAR, "DROP"), ("X", "y")])).unwrap();
        assert_eq!(failed, None);
        assert!(failing.unwrap().drop);
        let e = Policy::from_environ(&env(&[(FAILING_VAR, "NOPE")])).unwrap_err();
        assert_eq!(e.var, FAILING_VAR);
    }
}
