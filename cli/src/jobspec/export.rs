//! `--export`: which of the submitting environment the job runs with.
//!
//! * `ALL` (the default): every variable.
//! * `NONE`: only the `SLURM_*` variables.
//! * a list `A,B=val,...`: the `SLURM_*` variables, `A` with its current value (if set), `B`
//!   set to `val`; with `ALL` in the list, every variable plus the listed settings.

use sluice_wire::proto::EnvVar;

/// Which variables the job receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// Every variable of the submitting environment.
    pub all: bool,
    /// Variables named without a value: copied from the environment when set.
    pub names: Vec<String>,
    /// `NAME=value` settings, applied last.
    pub settings: Vec<(String, String)>,
}

impl Default for Export {
    fn default() -> Self {
        Self {
            all: true,
            names: Vec::new(),
            settings: Vec::new(),
        }
    }
}

impl Export {
    /// Parses an `--export` value.
    pub fn parse(value: &str) -> Self {
        let mut export = Self {
            all: false,
            names: Vec::new(),
            settings: Vec::new(),
        };
        for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item.eq_ignore_ascii_case("ALL") {
                export.all = true;
            } else if item.eq_ignore_ascii_case("NONE") || item.eq_ignore_ascii_case("NIL") {
                // Only the SLURM_* variables: nothing to add.
            } else if let Some((name, val)) = item.split_once('=') {
                export.settings.push((name.to_string(), val.to_string()));
            } else {
                export.names.push(item.to_string());
            }
        }
        export
    }

    /// The environment the job runs with, from the submitting environment `environ`.
    pub fn apply(&self, environ: &[(String, String)]) -> Vec<EnvVar> {
        let mut out: Vec<EnvVar> = Vec::new();
        let mut set = |name: &str, value: &str| match out.iter_mut().find(|v| v.name == name) {
            Some(v) => v.value = value.to_string(),
            None => out.push(EnvVar {
                name: name.to_string(),
                value: value.to_string(),
            }),
        };
        for (name, value) in environ {
            if self.all || name.starts_with("SLURM_") || self.names.iter().any(|n| n == name) {
                set(name, value);
            }
        }
        for (name, value) in &self.settings {
            set(name, value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environ() -> Vec<(String, String)> {
        [
            ("HOME", "/home/u"),
            ("PATH", "/bin"),
            ("SLURM_CONF", "/c"),
            ("X", "1"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    fn names(vars: &[EnvVar]) -> Vec<String> {
        vars.iter()
            .map(|v| format!("{}={}", v.name, v.value))
            .collect()
    }

    #[test]
    fn all_is_the_default_and_keeps_everything() {
        assert_eq!(Export::default().apply(&environ()).len(), 4);
        assert_eq!(Export::parse("ALL").apply(&environ()).len(), 4);
    }

    #[test]
    fn none_keeps_only_slurm_variables() {
        assert_eq!(
            names(&Export::parse("NONE").apply(&environ())),
            vec!["SLURM_CONF=/c"]
        );
    }

    #[test]
    fn a_list_names_variables_and_sets_values() {
        let got = names(&Export::parse("PATH,Y=2,X=9").apply(&environ()));
        assert_eq!(got, vec!["PATH=/bin", "SLURM_CONF=/c", "Y=2", "X=9"]);
        let with_all = names(&Export::parse("ALL,X=9").apply(&environ()));
        assert_eq!(
            with_all,
            vec!["HOME=/home/u", "PATH=/bin", "SLURM_CONF=/c", "X=9"]
        );
        // A named variable that is not set is simply absent.
        assert_eq!(
            names(&Export::parse("NOPE").apply(&environ())),
            vec!["SLURM_CONF=/c"]
        );
    }
}
