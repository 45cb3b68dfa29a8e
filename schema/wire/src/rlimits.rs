//! Resource limits carried from the submitting host to a job's processes (Slurm's
//! `PropagateResourceLimits` and `--propagate`): the command puts each soft limit into the
//! job's environment as `SLURM_RLIMIT_<NAME>=[U]<value>` (`U`: the user asked for it with
//! `--propagate`; `18446744073709551615` is unlimited), and the job's supervisor on the node
//! sets it on itself before starting the job's process, which inherits it, and drops the
//! variable from the process's environment.

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Every limit that can be propagated, by Slurm's name.
pub const LIMITS: &[(&str, Resource)] = &[
    ("AS", Resource::RLIMIT_AS),
    ("CORE", Resource::RLIMIT_CORE),
    ("CPU", Resource::RLIMIT_CPU),
    ("DATA", Resource::RLIMIT_DATA),
    ("FSIZE", Resource::RLIMIT_FSIZE),
    ("MEMLOCK", Resource::RLIMIT_MEMLOCK),
    ("NOFILE", Resource::RLIMIT_NOFILE),
    ("NPROC", Resource::RLIMIT_NPROC),
    ("RSS", Resource::RLIMIT_RSS),
    ("STACK", Resource::RLIMIT_STACK),
];

/// The prefix of the variables.
pub const PREFIX: &str = "SLURM_RLIMIT_";

/// The limits a `--propagate` value names (`ALL` or none given: every one; `NONE`: none), or
/// `None` when a name is not one of Slurm's.
pub fn parse(value: Option<&str>) -> Option<Vec<&'static str>> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Some(LIMITS.iter().map(|l| l.0).collect());
    };
    let mut names: Vec<&'static str> = Vec::new();
    for word in value.split(',').map(str::trim) {
        if word.eq_ignore_ascii_case("ALL") {
            names = LIMITS.iter().map(|l| l.0).collect();
        } else if word.eq_ignore_ascii_case("NONE") {
            names.clear();
        } else {
            let name = LIMITS
                .iter()
                .map(|l| l.0)
                .find(|n| n.eq_ignore_ascii_case(word))?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    Some(names)
}

/// The variables for this process's soft limits named in `names`; `asked`: the user asked for
/// them (`--propagate`), so a failure to set one on the node is reported.
pub fn env_of(names: &[&str], asked: bool) -> Vec<(String, String)> {
    LIMITS
        .iter()
        .filter(|(name, _)| names.contains(name))
        .filter_map(|&(name, res)| {
            let (soft, _) = getrlimit(res).ok()?;
            let flag = if asked { "U" } else { "" };
            Some((format!("{PREFIX}{name}"), format!("{flag}{soft}")))
        })
        .collect()
}

/// One limit as the supervisor applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Propagated {
    /// The variable it came from.
    pub var: String,
    /// The error to report, when it could not be set and the user asked for it.
    pub error: Option<String>,
}

/// Sets on this process every limit found in `environ` (soft limit to the value; as root the
/// hard limit is raised to it when lower) and names the variables, to be left out of the
/// job's environment.
pub fn apply(environ: impl IntoIterator<Item = (String, String)>) -> Vec<Propagated> {
    let mut out = Vec::new();
    for (var, value) in environ {
        let Some(name) = var.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(&(_, res)) = LIMITS.iter().find(|l| l.0 == name) else {
            continue;
        };
        let (asked, digits) = match value.strip_prefix('U') {
            Some(rest) => (true, rest),
            None => (false, value.as_str()),
        };
        let result = match digits.parse::<u64>() {
            Err(_) => Err(format!("bad value '{value}'")),
            Ok(soft) => set(res, soft),
        };
        let error = match result {
            Ok(()) => None,
            Err(e) if asked => Some(format!(
                "Can't propagate RLIMIT_{name} of '{digits}' from submit host: {e}"
            )),
            Err(_) => None,
        };
        out.push(Propagated { var, error });
    }
    out
}

fn set(res: Resource, soft: u64) -> Result<(), String> {
    let (_, hard) = getrlimit(res).map_err(|e| e.desc().to_string())?;
    let hard = if soft > hard && nix::unistd::geteuid().is_root() {
        soft
    } else {
        hard
    };
    setrlimit(res, soft.min(hard), hard).map_err(|e| e.desc().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn propagate_values_name_slurms_limits() {
        assert_eq!(parse(None).map(|n| n.len()), Some(LIMITS.len()));
        assert_eq!(parse(Some("ALL")).map(|n| n.len()), Some(LIMITS.len()));
        assert_eq!(parse(Some("NONE")), Some(vec![]));
        assert_eq!(
            parse(Some("nofile,CORE,nofile")),
            Some(vec!["NOFILE", "CORE"])
        );
        assert_eq!(parse(Some("NOFILE,bogus")), None);
    }

    #[test]
    fn limits_travel_as_variables_and_come_back() {
        let env = env_of(&["NOFILE"], true);
        assert_eq!(env.len(), 1);
        assert_eq!(env[0].0, "SLURM_RLIMIT_NOFILE");
        assert!(env[0].1.starts_with('U'), "{env:?}");
        // Setting this process's own soft limit again changes nothing.
        let applied = apply(env.clone());
        assert_eq!(
            applied,
            vec![Propagated {
                var: "SLURM_RLIMIT_NOFILE".into(),
                error: None
            }]
        );
        let other = apply([("PATH".to_string(), "/bin".to_string())]);
        assert!(other.is_empty());
        let bad = apply([("SLURM_RLIMIT_CORE".to_string(), "Ux".to_string())]);
        assert!(
            bad[0]
                .error
                .as_deref()
                .is_some_and(|e| e.contains("RLIMIT_CORE"))
        );
    }
}
