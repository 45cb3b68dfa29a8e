//! The rest of Slurm 22.05's job options: those of `sbatch`, `srun` and `salloc` that Sluice
//! does not carry into the job, each in the command's option table (so `--gpus=1` is never an
//! "unrecognized option" nor a silent no-op) with what happens to it:
//!
//! * [`Kind::SlurmRefuses`]: Slurm's controller refuses the option on a cluster configured as
//!   every Sluice cluster is (no `GresTypes`, no `Licenses`, no reservations), with these words,
//!   which the command prints as its submission failure.
//! * [`Kind::IgnoredAsSlurm`]: Slurm accepts the option and, in this configuration, nothing
//!   follows from it; the reason is given per option. Values are still checked.
//! * [`Kind::Missing`]: Slurm would honour it and Sluice does not yet: refused by name
//!   (`--x is not supported`), never accepted and dropped. No option is in this case now
//!   (the last, `srun --het-group`, came with heterogeneous jobs).
//!
//! The options Sluice implements are in [`super::COMMON`], [`super::BATCH_ONLY`] and each
//! command's own table.

use crate::getopt::{HasArg, OptSpec};

use super::{Opt, OptError};

/// The commands an option belongs to.
pub const SBATCH: u8 = 1;
/// `srun`.
pub const SRUN: u8 = 2;
/// `salloc`.
pub const SALLOC: u8 = 4;
const ALL: u8 = SBATCH | SRUN | SALLOC;

/// Slurm's words for a GRES request on a cluster without GRES (`ESLURM_INVALID_GRES`).
pub const NO_GRES: &str = "Invalid generic resource (gres) specification";

/// What becomes of an option Sluice does not carry into the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Slurm's controller refuses it here, with these words.
    SlurmRefuses(&'static str),
    /// Slurm accepts it and nothing follows in this configuration (why, for the reader).
    IgnoredAsSlurm(&'static str),
    /// Not implemented: refused by name.
    Missing,
}

/// One option of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Long name without dashes.
    pub long: &'static str,
    /// Short letter, where the command has one (see [`Entry::short_in`]).
    pub short: Option<char>,
    /// Whether it takes a value.
    pub arg: HasArg,
    /// Which commands have it ([`SBATCH`], [`SRUN`], [`SALLOC`]).
    pub cmds: u8,
    /// What Sluice does with it.
    pub kind: Kind,
}

impl Entry {
    /// The short letter in `cmd`.
    fn short_in(&self, _cmd: u8) -> Option<char> {
        self.short
    }
}

const fn e(long: &'static str, short: Option<char>, arg: HasArg, cmds: u8, kind: Kind) -> Entry {
    Entry {
        long,
        short,
        arg,
        cmds,
        kind,
    }
}

const R: HasArg = HasArg::Required;
const GRES: Kind = Kind::SlurmRefuses(NO_GRES);
const SPEC_NOT_ALLOWED: Kind = Kind::IgnoredAsSlurm(
    "AllowSpecResourcesUsage is No (its default; Sluice does not read it): no cores or threads \
     are reserved for system use",
);

/// Every Slurm 22.05 job option of sbatch, srun and salloc that Sluice does not implement.
pub const ENTRIES: &[Entry] = &[
    // GPUs and other generic resources: Sluice nodes declare no GRES (`Gres=` is not read and
    // there is no `GresTypes`), so Slurm's controller would refuse every one of these.
    e("gres", None, R, ALL, GRES),
    e("gpus", Some('G'), R, ALL, GRES),
    e("gpus-per-node", None, R, ALL, GRES),
    e("gpus-per-task", None, R, ALL, GRES),
    e("gpus-per-socket", None, R, ALL, GRES),
    e("cpus-per-gpu", None, R, ALL, GRES),
    e("mem-per-gpu", None, R, ALL, GRES),
    e("ntasks-per-gpu", None, R, ALL, GRES),
    e("gpu-bind", None, R, ALL, GRES),
    e("gpu-freq", None, R, ALL, GRES),
    // No `Licenses=` is read, so every license name is unknown to the controller.
    e(
        "licenses",
        Some('L'),
        R,
        ALL,
        Kind::SlurmRefuses("Invalid license specification"),
    ),
    // Sluice has no advanced reservations, so no reservation name is valid.
    e(
        "reservation",
        None,
        R,
        ALL,
        Kind::SlurmRefuses("Requested reservation is invalid"),
    ),
    // Accepted and without effect, as in Slurm configured like Sluice.
    e(
        "gres-flags",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("binds GRES to CPUs; a job here has no GRES to bind"),
    ),
    e(
        "profile",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("AcctGatherProfileType is none: no profile data is gathered"),
    ),
    e(
        "network",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("SwitchType is none: no switch plugin reads the network spec"),
    ),
    e(
        "switches",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("TopologyPlugin is none: node selection knows no switches"),
    ),
    e(
        "power",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("no power management plugin (PowerPlugin) reads power flags"),
    ),
    e(
        "delay-boot",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("no node features plugin: nodes are never rebooted for a job"),
    ),
    e(
        "mcs-label",
        None,
        R,
        ALL,
        Kind::IgnoredAsSlurm("MCSPlugin is none: mcs/none accepts any label and keeps none"),
    ),
    // Slurm 22.05's commands check the count, print `error: Ignoring -S since it's not
    // allowed by configuration (AllowSpecResourcesUsage = No)` and submit the job without it
    // (seen on the oracle, as root and as a normal user); Sluice reads no
    // `AllowSpecResourcesUsage`, so it is always No here.
    e("core-spec", Some('S'), R, ALL, SPEC_NOT_ALLOWED),
    e("thread-spec", None, R, ALL, SPEC_NOT_ALLOWED),
    // srun's own.
    e(
        "accel-bind",
        None,
        R,
        SRUN,
        Kind::IgnoredAsSlurm("binds tasks to GPUs, MICs or NICs: no node here has GRES to bind"),
    ),
    e(
        "launcher-opts",
        None,
        R,
        SRUN,
        Kind::IgnoredAsSlurm("read only by launch plugins other than launch/slurm, the one here"),
    ),
    // `-Z/--no-allocate` is srun's own option now (`srun::no_alloc`).
];

/// The catalog's options of `cmd` as option-table entries (ids [`Opt::Other`]).
pub fn specs(cmd: u8) -> impl Iterator<Item = OptSpec<Opt>> {
    ENTRIES
        .iter()
        .filter(move |entry| entry.cmds & cmd != 0)
        .map(move |entry| OptSpec {
            long: entry.long,
            short: entry.short_in(cmd),
            arg: entry.arg,
            id: Opt::Other(entry.long),
        })
}

/// What applying catalog option `long` with `value` does: nothing for the ignored ones (once
/// their value is checked) but the line Slurm's command prints about some of them (returned,
/// without the `prog: error: ` prefix), else the refusal.
pub fn apply(long: &'static str, value: Option<&str>) -> Result<Option<&'static str>, OptError> {
    let Some(entry) = ENTRIES.iter().find(|entry| entry.long == long) else {
        return Err(OptError::Unsupported(long));
    };
    match entry.kind {
        Kind::SlurmRefuses(text) => Err(OptError::Refused(text)),
        Kind::IgnoredAsSlurm(_) => {
            check_ignored(long, value.unwrap_or_default())?;
            Ok(ignored_note(long))
        }
        Kind::Missing => Err(OptError::Unsupported(long)),
    }
}

/// The line Slurm's commands print when they drop an ignored option, where they print one.
fn ignored_note(long: &str) -> Option<&'static str> {
    match long {
        "core-spec" => Some(
            "Ignoring -S since it's not allowed by configuration (AllowSpecResourcesUsage = No)",
        ),
        "thread-spec" => Some(
            "Ignoring --thread-spec since it's not allowed by configuration \
             (AllowSpecResourcesUsage = No)",
        ),
        _ => None,
    }
}

/// The checks Slurm's commands make on the ignored options' values.
fn check_ignored(long: &'static str, value: &str) -> Result<(), OptError> {
    if let "core-spec" | "thread-spec" = long {
        // A count, zero included (Slurm's `parse_int` without the positive check).
        let option = if long == "core-spec" {
            "--core-spec"
        } else {
            "--thread-spec"
        };
        return value
            .trim()
            .parse::<u16>()
            .map(|_| ())
            .map_err(|_| OptError::InvalidNumeric {
                value: value.to_string(),
                option,
            });
    }
    let ok = match long {
        "gres-flags" => value
            .split(',')
            .all(|f| ["disable-binding", "enforce-binding"].contains(&f)),
        "profile" => value.split(',').all(|p| {
            ["all", "none", "energy", "lustre", "network", "task"]
                .contains(&p.to_ascii_lowercase().as_str())
        }),
        "delay-boot" => crate::jobspec::values::time_limit(value).is_ok(),
        // g (GPUs), n (NICs), v (verbose), as Slurm's srun reads them.
        "accel-bind" => !value.is_empty() && value.chars().all(|c| "gnv".contains(c)),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(OptError::InvalidValue {
            option: long,
            value: value.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_options_are_refused_with_slurms_words() {
        for long in [
            "gres",
            "gpus",
            "gpus-per-node",
            "cpus-per-gpu",
            "mem-per-gpu",
        ] {
            let e = apply(long, Some("1")).unwrap_err();
            assert_eq!(e.to_string(), NO_GRES, "{long}");
            assert!(e.is_submit_refusal());
        }
        assert_eq!(
            apply("licenses", Some("matlab")).unwrap_err().to_string(),
            "Invalid license specification"
        );
    }

    #[test]
    fn options_outside_the_catalog_are_refused_by_name() {
        let e = apply("het-group", Some("0")).unwrap_err();
        assert_eq!(e.to_string(), "--het-group is not supported");
        assert!(!e.is_submit_refusal());
    }

    #[test]
    fn specialized_cores_and_threads_are_dropped_with_slurms_line() {
        assert_eq!(
            apply("core-spec", Some("1")),
            Ok(Some(
                "Ignoring -S since it's not allowed by configuration \
                 (AllowSpecResourcesUsage = No)"
            ))
        );
        assert!(apply("thread-spec", Some("2")).unwrap().is_some());
        assert_eq!(
            apply("core-spec", Some("x")).unwrap_err().to_string(),
            "Invalid numeric value \"x\" for --core-spec."
        );
        assert_eq!(
            apply("thread-spec", Some("x")).unwrap_err().to_string(),
            "Invalid numeric value \"x\" for --thread-spec."
        );
        assert_eq!(apply("network", Some("x")), Ok(None));
    }

    #[test]
    fn ignored_options_check_their_values() {
        assert_eq!(apply("network", Some("anything")), Ok(None));
        assert_eq!(apply("gres-flags", Some("enforce-binding")), Ok(None));
        assert_eq!(
            apply("gres-flags", Some("sometimes"))
                .unwrap_err()
                .to_string(),
            "Invalid --gres-flags specification: sometimes"
        );
        assert_eq!(apply("profile", Some("task,energy")), Ok(None));
        assert!(apply("profile", Some("x")).is_err());
    }

    fn unique<T: Ord + Clone + std::fmt::Debug>(what: &str, items: &[T]) {
        let mut sorted = items.to_vec();
        sorted.sort();
        for pair in sorted.windows(2) {
            assert_ne!(pair[0], pair[1], "{what}: given twice");
        }
    }

    /// A table's long names and short letters.
    type Names = Vec<(&'static str, Option<char>)>;

    /// Every command's whole table names each long option and short letter once, so the
    /// catalog never shadows an implemented option.
    #[test]
    fn each_command_names_every_option_once() {
        let tables: [(&str, Names); 3] = [
            (
                "sbatch",
                crate::sbatch::args::table()
                    .iter()
                    .map(|s| (s.long, s.short))
                    .collect(),
            ),
            (
                "srun",
                crate::srun::args::table()
                    .iter()
                    .map(|s| (s.long, s.short))
                    .collect(),
            ),
            (
                "salloc",
                crate::salloc::args::table()
                    .iter()
                    .map(|s| (s.long, s.short))
                    .collect(),
            ),
        ];
        for (cmd, table) in tables {
            let longs: Vec<&str> = table
                .iter()
                .map(|(l, _)| *l)
                .filter(|l| !l.is_empty())
                .collect();
            unique(cmd, &longs);
            let mut shorts: Vec<(char, &str)> = table
                .iter()
                .filter_map(|(l, s)| s.map(|c| (c, *l)))
                .collect();
            shorts.sort();
            shorts.dedup_by(|a, b| a.0 == b.0 && same_option(cmd, a.1, b.1));
            let letters: Vec<char> = shorts.iter().map(|(c, _)| *c).collect();
            unique(cmd, &letters);
        }
    }

    /// Aliases sharing a letter (`-n` is `--ntasks` and `--tasks`, `-M` `--clusters` and
    /// `--cluster`).
    fn same_option(_cmd: &str, a: &str, b: &str) -> bool {
        fn alias(x: &str) -> &str {
            match x {
                "tasks" => "ntasks",
                "cluster" => "clusters",
                "cpu_bind" => "cpu-bind",
                "workdir" => "chdir",
                other => other,
            }
        }
        alias(a) == alias(b)
    }
}
