//! sreport's command line: the global options (`aM:hnpPQs:t:T:vV`, `--federation`, `--local`)
//! and the environment variables that preset them (`SREPORT_TRES`, `SREPORT_CLUSTER`,
//! `SREPORT_FEDERATION`, `SREPORT_LOCAL`).

use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};
use crate::output::OutputMode;

use super::error::SreportError;
use super::tres::TresSel;
use super::units::TimeFormat;

/// Which clusters reports cover when the report's own words do not say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ClusterChoice {
    /// The local cluster (`ClusterName`).
    #[default]
    Local,
    /// `-M a,b`.
    List(Vec<String>),
    /// `-a` (or `-M all`).
    All,
}

/// The global options.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Options {
    pub mode: OutputMode,
    /// `-n`.
    pub noheader: bool,
    pub time: TimeFormat,
    pub tres: TresSel,
    pub clusters: ClusterChoice,
    /// `--federation`: the local cluster's federation, merged into one `FED:<name>` cluster.
    pub federation: bool,
    /// `-s name`: users sorted by name instead of usage.
    pub sort_by_name: bool,
    /// `-Q`.
    pub quiet: bool,
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

/// An sreport option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SrOpt {
    AllClusters,
    Cluster,
    Federation,
    Help,
    Immediate,
    Local,
    NoHeader,
    Parsable,
    Parsable2,
    Quiet,
    Sort,
    /// `-t`: short only.
    TimeFormat,
    Tres,
    Verbose,
    Version,
}

const fn spec(short: Option<char>, long: &'static str, arg: HasArg, id: SrOpt) -> OptSpec<SrOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

const SPECS: &[OptSpec<SrOpt>] = &[
    spec(Some('a'), "all_clusters", HasArg::No, SrOpt::AllClusters),
    spec(Some('M'), "cluster", HasArg::Required, SrOpt::Cluster),
    spec(None, "federation", HasArg::No, SrOpt::Federation),
    spec(Some('h'), "help", HasArg::No, SrOpt::Help),
    spec(None, "immediate", HasArg::No, SrOpt::Immediate),
    spec(None, "local", HasArg::No, SrOpt::Local),
    spec(Some('n'), "noheader", HasArg::No, SrOpt::NoHeader),
    spec(Some('p'), "parsable", HasArg::No, SrOpt::Parsable),
    spec(Some('P'), "parsable2", HasArg::No, SrOpt::Parsable2),
    spec(Some('Q'), "quiet", HasArg::No, SrOpt::Quiet),
    spec(Some('s'), "sort", HasArg::Required, SrOpt::Sort),
    spec(Some('t'), "", HasArg::Required, SrOpt::TimeFormat),
    spec(Some('T'), "tres", HasArg::Required, SrOpt::Tres),
    spec(None, "usage", HasArg::No, SrOpt::Help),
    spec(Some('v'), "verbose", HasArg::No, SrOpt::Verbose),
    spec(Some('V'), "version", HasArg::No, SrOpt::Version),
];

/// Parses the arguments after the program name, with `env` giving environment variables.
pub fn parse(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Invocation, SreportError> {
    let parsed = getopt::parse(SPECS, args, Mode::Permute)
        .map_err(|e| e.usage_text("sreport", Ambiguity::Bare))
        .map_err(SreportError::Usage)?;
    let mut o = Options::default();
    let mut tres = env("SREPORT_TRES");
    let mut cluster = env("SREPORT_CLUSTER");
    let mut all = false;
    let mut local = env("SREPORT_LOCAL").is_some();
    o.federation = env("SREPORT_FEDERATION").is_some();
    for (id, value) in parsed.opts {
        let value = value.unwrap_or_default();
        match id {
            SrOpt::Help => return Ok(Invocation::Help),
            SrOpt::Version => return Ok(Invocation::Version),
            SrOpt::AllClusters => all = true,
            SrOpt::Cluster => cluster = Some(value),
            SrOpt::Federation => o.federation = true,
            SrOpt::Local => local = true,
            SrOpt::NoHeader => o.noheader = true,
            SrOpt::Parsable => o.mode = OutputMode::Parsable,
            SrOpt::Parsable2 => o.mode = OutputMode::Parsable2,
            SrOpt::Quiet => o.quiet = true,
            SrOpt::Sort => o.sort_by_name = sort_by_name(&value)?,
            SrOpt::TimeFormat => o.time = TimeFormat::parse(&value)?,
            SrOpt::Tres => tres = Some(value),
            // -v and --immediate change nothing sreport prints.
            SrOpt::Immediate | SrOpt::Verbose => {}
        }
    }
    if usize::from(all) + usize::from(cluster.is_some()) + usize::from(local) > 1 {
        return Err(SreportError::ClusterOptions);
    }
    o.clusters = match cluster {
        Some(c) if c.eq_ignore_ascii_case("all") => ClusterChoice::All,
        Some(c) => {
            let mut list = Vec::new();
            super::fields::add_to_list(&mut list, &c);
            ClusterChoice::List(list)
        }
        None if all => ClusterChoice::All,
        None => ClusterChoice::Local,
    };
    if local {
        o.federation = false;
    }
    o.tres = TresSel::parse(tres.as_deref()).map_err(SreportError::Usage)?;
    Ok(Invocation::Run {
        opts: o,
        words: parsed.operands,
    })
}

/// `-s`/`sort`: `Name` (one character) or `Time` (six: the word must be complete).
pub fn sort_by_name(value: &str) -> Result<bool, SreportError> {
    if crate::words::is_keyword(value, "Name", 1) {
        Ok(true)
    } else if value.len() >= 4 && crate::words::is_keyword(value, "Time", 4) {
        Ok(false)
    } else {
        Err(SreportError::SortFormat(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], env: &[(&str, &str)]) -> Result<Invocation, SreportError> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(&a, &move |k: &str| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    fn opts(args: &[&str]) -> (Options, Vec<String>) {
        match run(args, &[]).unwrap() {
            Invocation::Run { opts, words } => (opts, words),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_anywhere_and_words_kept() {
        let (o, w) = opts(&[
            "cluster",
            "-P",
            "utilization",
            "-t",
            "percent",
            "-n",
            "start=x",
        ]);
        assert_eq!(w, ["cluster", "utilization", "start=x"]);
        assert_eq!(
            (o.mode, o.noheader, o.time),
            (OutputMode::Parsable2, true, TimeFormat::Percent)
        );
        assert_eq!(o.clusters, ClusterChoice::Local);
        let (m, _) = opts(&["-M", "c1,c2", "-Tmem,cpu", "--fed"]);
        assert_eq!(
            m.clusters,
            ClusterChoice::List(vec!["c1".into(), "c2".into()])
        );
        assert_eq!(m.tres.names(), ["cpu", "mem"]);
        assert!(m.federation);
        assert_eq!(opts(&["-a"]).0.clusters, ClusterChoice::All);
        assert_eq!(opts(&["-M", "ALL"]).0.clusters, ClusterChoice::All);
        assert!(
            !opts(&["--federation", "--local"]).0.federation,
            "--local wins"
        );
        assert!(opts(&["-s", "name"]).0.sort_by_name);
    }

    #[test]
    fn errors_use_slurms_text() {
        let e = |args: &[&str]| run(args, &[]).unwrap_err().to_string();
        assert_eq!(e(&["-t", "fortnight"]), "unknown time format fortnight");
        assert_eq!(
            e(&["-a", "-M", "c1"]),
            "Only one cluster option can be used (--all_clusters OR --cluster OR --local)"
        );
        assert_eq!(
            e(&["--local", "-a"]),
            "Only one cluster option can be used (--all_clusters OR --cluster OR --local)"
        );
        assert_eq!(
            e(&["-x"]),
            "sreport: invalid option -- 'x'\nTry \"sreport --help\" for more information"
        );
        assert_eq!(e(&["-s", "size"]), "unknown timesort format size");
    }

    #[test]
    fn environment_presets() {
        let r = run(
            &[],
            &[("SREPORT_TRES", "node"), ("SREPORT_FEDERATION", "1")],
        )
        .unwrap();
        let Invocation::Run { opts, .. } = r else {
            panic!()
        };
        assert_eq!(opts.tres.names(), ["node"]);
        assert!(opts.federation);
        assert!(run(&["-a"], &[("SREPORT_LOCAL", "1")]).is_err());
        assert_eq!(run(&["-h"], &[]).unwrap(), Invocation::Help);
    }
}
