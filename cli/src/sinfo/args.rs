//! sinfo's options, with Slurm's names, built-in formats and error texts.

use sluice_vocab::NodeState;
use sluice_vocab::hostlist::Hostlist;

use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};

/// The partition view.
pub const DEFAULT_FORMAT: &str = "%#P %.5a %.10l %.6D %.6t %N";
/// `-s`.
pub const SUMMARIZE_FORMAT: &str = "%#P %.5a %.10l %.16F %N";
/// `-l`.
pub const LONG_FORMAT: &str = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
/// `-N`.
pub const NODE_FORMAT: &str = "%#N %.6D %#P %6t";
/// `-N -l`.
pub const NODE_LONG_FORMAT: &str = "%#N %.6D %#P %.11T %.4c %.8z %.6m %.8d %.6w %.8f %20E";
/// `-R`.
pub const REASONS_FORMAT: &str = "%20E %9u %19H %N";
/// `-R -l`.
pub const REASONS_LONG_FORMAT: &str = "%20E %12U %19H %6t %N";

/// Everything sinfo was asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SinfoOpts {
    /// `-o`, or the built-in format the other options select.
    pub format: String,
    /// `-N`: one line per node and partition.
    pub node_view: bool,
    /// `-R`: nodes that are down or drained, with their reasons.
    pub reasons: bool,
    /// `-l`: also prints the date line.
    pub long: bool,
    /// `-h`.
    pub no_header: bool,
    /// `-p`.
    pub partitions: Option<Vec<String>>,
    /// `-n`.
    pub nodes: Option<Hostlist>,
    /// `-t`.
    pub states: Option<Vec<String>>,
    /// `-r`: responding nodes only.
    pub responding: bool,
    /// `-d`: non-responding nodes only.
    pub dead: bool,
    /// Which clusters to show (`--local`, `--federation`, `-M`).
    pub view: View,
}

/// Which clusters sinfo asks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum View {
    /// The local controller (the default, `--local`).
    #[default]
    Local,
    /// Every member of the local cluster's federation in one table with a CLUSTER column.
    Federation,
    /// Each named cluster on its own, under a `CLUSTER: name` line (`-M a,b|all`).
    Clusters(String),
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Show nodes.
    Run(Box<SinfoOpts>),
    /// `--help` / `--usage`.
    Help,
    /// `-V`.
    Version,
}

/// An sinfo option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SiOpt {
    All,
    Clusters,
    Federation,
    Local,
    Dead,
    Exact,
    Format,
    Help,
    NoHeader,
    Long,
    NodeView,
    Nodes,
    Partition,
    ListReasons,
    Responding,
    Summarize,
    States,
    Verbose,
    Version,
}

const fn spec(short: Option<char>, long: &'static str, arg: HasArg, id: SiOpt) -> OptSpec<SiOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

const SPECS: &[OptSpec<SiOpt>] = &[
    spec(Some('a'), "all", HasArg::No, SiOpt::All),
    spec(Some('M'), "clusters", HasArg::Required, SiOpt::Clusters),
    spec(None, "cluster", HasArg::Required, SiOpt::Clusters),
    spec(None, "federation", HasArg::No, SiOpt::Federation),
    spec(None, "local", HasArg::No, SiOpt::Local),
    spec(Some('d'), "dead", HasArg::No, SiOpt::Dead),
    spec(Some('e'), "exact", HasArg::No, SiOpt::Exact),
    spec(Some('o'), "format", HasArg::Required, SiOpt::Format),
    spec(None, "help", HasArg::No, SiOpt::Help),
    spec(None, "usage", HasArg::No, SiOpt::Help),
    spec(Some('h'), "noheader", HasArg::No, SiOpt::NoHeader),
    spec(Some('l'), "long", HasArg::No, SiOpt::Long),
    spec(Some('N'), "Node", HasArg::No, SiOpt::NodeView),
    spec(Some('n'), "nodes", HasArg::Required, SiOpt::Nodes),
    spec(Some('p'), "partition", HasArg::Required, SiOpt::Partition),
    spec(Some('R'), "list-reasons", HasArg::No, SiOpt::ListReasons),
    spec(Some('r'), "responding", HasArg::No, SiOpt::Responding),
    spec(Some('s'), "summarize", HasArg::No, SiOpt::Summarize),
    spec(Some('t'), "states", HasArg::Required, SiOpt::States),
    spec(Some('v'), "verbose", HasArg::No, SiOpt::Verbose),
    spec(Some('V'), "version", HasArg::No, SiOpt::Version),
];

/// Parses sinfo's arguments; `env` reads `SINFO_FORMAT`. The error is the text for stderr.
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Invocation, String> {
    let parsed = getopt::parse(SPECS, args, Mode::Permute)
        .map_err(|e| e.usage_text("sinfo", Ambiguity::Bare))?;
    if let Some(word) = parsed.operands.first() {
        return Err(format!(
            "sinfo: error: Unrecognized option: {word}\nUsage: sinfo [OPTIONS]"
        ));
    }
    let mut o = SinfoOpts::default();
    let (mut format, mut summarize) = (None, false);
    let (mut fed, mut local) = (false, false);
    let mut clusters = env("SINFO_CLUSTERS").or_else(|| env("SLURM_CLUSTERS"));
    for (id, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match id {
            SiOpt::Help => return Ok(Invocation::Help),
            SiOpt::Version => return Ok(Invocation::Version),
            SiOpt::Dead => o.dead = true,
            SiOpt::Responding => o.responding = true,
            SiOpt::Format => format = Some(v),
            SiOpt::NoHeader => o.no_header = true,
            SiOpt::Long => o.long = true,
            SiOpt::NodeView => o.node_view = true,
            SiOpt::ListReasons => o.reasons = true,
            SiOpt::Summarize => summarize = true,
            SiOpt::Nodes => {
                o.nodes =
                    Some(Hostlist::parse(&v).map_err(|_| {
                        format!("sinfo: error: Invalid node name specification: {v}")
                    })?)
            }
            SiOpt::Partition => {
                o.partitions = Some(
                    v.split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect(),
                )
            }
            SiOpt::States => o.states = Some(state_list(&v)?),
            SiOpt::Clusters => clusters = Some(v),
            SiOpt::Federation => fed = true,
            SiOpt::Local => local = true,
            SiOpt::All | SiOpt::Exact | SiOpt::Verbose => {}
        }
    }
    if o.reasons && o.states.is_none() {
        o.states = Some(vec!["down".into(), "drain".into()]);
    }
    // -M overrides the federated view, --local overrides --federation.
    o.view = match clusters {
        Some(c) => View::Clusters(c),
        None if fed && !local => View::Federation,
        None => View::Local,
    };
    let built_in = format.is_none();
    o.format = match format {
        Some(f) => f,
        None if summarize => SUMMARIZE_FORMAT.into(),
        None if o.node_view && o.long => NODE_LONG_FORMAT.into(),
        None if o.node_view => NODE_FORMAT.into(),
        None if o.reasons && o.long => REASONS_LONG_FORMAT.into(),
        None if o.reasons => REASONS_FORMAT.into(),
        None => match env("SINFO_FORMAT") {
            Some(f) if !o.long => f,
            _ if o.long => LONG_FORMAT.into(),
            _ => DEFAULT_FORMAT.into(),
        },
    };
    if built_in && o.view == View::Federation {
        o.format = with_cluster_column(&o.format);
    }
    Ok(Invocation::Run(Box::new(o)))
}

/// A built-in format with the cluster (`%8V`) after its first column: the federated view
/// names each line's cluster.
pub fn with_cluster_column(format: &str) -> String {
    match format.split_once(' ') {
        Some((first, rest)) => format!("{first} %8V {rest}"),
        None => format!("{format} %8V"),
    }
}

/// Parses `-t`: node state names, long or compact, lowercased.
fn state_list(v: &str) -> Result<Vec<String>, String> {
    v.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let known = NodeState::parse(s).is_some()
                || ["drain", "alloc", "allocated", "responding", "no_respond"]
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(s));
            if known {
                Ok(s.to_ascii_lowercase())
            } else {
                Err(format!(
                    "sinfo: error: Bad node state specified: {s}\nsinfo: error: valid states: NoResp ALLOC ALLOCATED COMPLETING DOWN DRAIN DRAINED DRAINING FAIL FUTURE IDLE MIX MIXED UNK UNKNOWN"
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<SinfoOpts, String> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&a, &|_| None)? {
            Invocation::Run(o) => Ok(*o),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_pick_the_built_in_formats() {
        assert_eq!(run(&[]).unwrap().format, DEFAULT_FORMAT);
        assert_eq!(run(&["-N"]).unwrap().format, NODE_FORMAT);
        assert_eq!(run(&["-Nl"]).unwrap().format, NODE_LONG_FORMAT);
        assert_eq!(run(&["-l"]).unwrap().format, LONG_FORMAT);
        assert_eq!(run(&["-s"]).unwrap().format, SUMMARIZE_FORMAT);
        let r = run(&["-R"]).unwrap();
        assert_eq!(r.format, REASONS_FORMAT);
        assert_eq!(
            r.states,
            Some(vec!["down".to_string(), "drain".to_string()])
        );
        assert_eq!(run(&["-o", "%P"]).unwrap().format, "%P");
    }

    #[test]
    fn bad_states_and_words_are_errors() {
        assert_eq!(
            run(&["-t", "IDLE,drain"]).unwrap().states,
            Some(vec!["idle".into(), "drain".into()])
        );
        assert!(
            run(&["-t", "bogus"])
                .unwrap_err()
                .contains("Bad node state specified: bogus")
        );
        assert!(
            run(&["extra"])
                .unwrap_err()
                .contains("Unrecognized option: extra")
        );
    }
}
