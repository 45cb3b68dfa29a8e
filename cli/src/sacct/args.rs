//! sacct's options, parsed as Slurm's `parse_command_line` does: the same letters and long
//! names, the field list built from `-o`, `-b`, `-l` and `SACCT_FORMAT`, and Slurm's error
//! texts. Times (`-S/-E`) are read here with [`timespec`](crate::timespec), so parsing takes
//! `now` and the zone; the window defaults are applied in [`window`](super::window).

use sluice_vocab::JobState;

use super::jobsel::{JobSel, job_list};
use crate::cmdutil::uid_of;
use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};
use crate::output::OutputMode;
use crate::timefmt::Zone;
use crate::timespec;

/// The fields sacct shows by default.
pub const DEFAULT_FIELDS: &str = "jobid,jobname,partition,account,alloccpus,state,exitcode";
/// `-b`.
pub const BRIEF_FIELDS: &str = "jobid,state,exitcode";
/// `-l`: Slurm's long list (fields we do not store are left out when printing).
pub const LONG_FIELDS: &str = "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,\
maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,\
avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,\
reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,\
maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,reqtres,\
alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,\
tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,tresusageoutmaxn,\
tresusageoutmaxt,tresusageoutave,tresusageouttot";

/// The states `-s` accepts (Slurm's `_supported_state`); others are refused.
const SUPPORTED: &[JobState] = &[
    JobState::Pending,
    JobState::Running,
    JobState::Suspended,
    JobState::Completed,
    JobState::Cancelled,
    JobState::Failed,
    JobState::Timeout,
    JobState::NodeFail,
    JobState::Preempted,
    JobState::BootFail,
    JobState::Deadline,
    JobState::OutOfMemory,
    JobState::Requeued,
    JobState::Resizing,
    JobState::Revoked,
];

/// Which clusters to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterSel {
    /// The local cluster (`ClusterName`), the default.
    Local,
    /// `-M a,b`.
    List(Vec<String>),
    /// `-M all` / `-L`.
    All,
    /// `--federation`: every cluster of the local cluster's federation.
    Federation,
}

/// Everything sacct was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SacctOpts {
    /// `-j`.
    pub jobs: Option<Vec<JobSel>>,
    /// `-X`: allocations only, no steps.
    pub no_steps: bool,
    /// `-p` / `-P` / fixed columns.
    pub mode: OutputMode,
    /// `--delimiter` (`|` by default) for `-p`/`-P`.
    pub delimiter: String,
    /// `-n`.
    pub no_header: bool,
    /// `--noconvert`: sizes as kept, not reduced to larger units.
    pub noconvert: bool,
    /// The fields, as given (`name[%width]`, comma-separated).
    pub fields: String,
    /// `-l`: the fields include Slurm's long list, whose unaccounted fields are left out.
    pub long: bool,
    /// `-a`, `-u -1`, or implied by `-j`/`--nodelist` without `-u`.
    pub all_users: bool,
    /// `-u` (uids).
    pub users: Option<Vec<u32>>,
    /// `-A`.
    pub accounts: Vec<String>,
    /// `--name`.
    pub names: Vec<String>,
    /// `-r/--partition`.
    pub partitions: Vec<String>,
    /// `-N/--nodelist` (a hostlist expression).
    pub nodelist: Option<String>,
    /// `-M`, `-L`, `--federation`, `--local`.
    pub clusters: ClusterSel,
    /// `-S` (unix seconds).
    pub start: Option<i64>,
    /// `-E` (unix seconds).
    pub end: Option<i64>,
    /// `-s`.
    pub states: Vec<JobState>,
    /// `-D`.
    pub duplicates: bool,
    /// `--json`.
    pub json: bool,
    /// `-W/--wckeys`.
    pub wckeys: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Query the accounting records.
    Run(Box<SacctOpts>),
    /// `-h/--help`.
    Help,
    /// `-e/--helpformat`.
    HelpFields,
    /// `-V`.
    Version,
}

/// An sacct option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SaOpt {
    AllUsers,
    Accounts,
    Allocations,
    Brief,
    Clusters,
    Delimiter,
    Duplicates,
    EndTime,
    HelpFormat,
    Federation,
    Format,
    Help,
    Jobs,
    Json,
    Long,
    AllClusters,
    Local,
    Name,
    NoConvert,
    NoHeader,
    NodeList,
    Parsable,
    Parsable2,
    Partition,
    StartTime,
    State,
    User,
    Verbose,
    Version,
    Wckeys,
}

const fn spec(short: Option<char>, long: &'static str, arg: HasArg, id: SaOpt) -> OptSpec<SaOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

const SPECS: &[OptSpec<SaOpt>] = &[
    spec(Some('a'), "allusers", HasArg::No, SaOpt::AllUsers),
    spec(Some('A'), "accounts", HasArg::Required, SaOpt::Accounts),
    spec(Some('X'), "allocations", HasArg::No, SaOpt::Allocations),
    spec(Some('b'), "brief", HasArg::No, SaOpt::Brief),
    spec(Some('M'), "clusters", HasArg::Required, SaOpt::Clusters),
    spec(None, "cluster", HasArg::Required, SaOpt::Clusters),
    spec(None, "delimiter", HasArg::Required, SaOpt::Delimiter),
    spec(Some('D'), "duplicates", HasArg::No, SaOpt::Duplicates),
    spec(Some('E'), "endtime", HasArg::Required, SaOpt::EndTime),
    spec(Some('e'), "helpformat", HasArg::No, SaOpt::HelpFormat),
    spec(None, "help-fields", HasArg::No, SaOpt::HelpFormat),
    spec(None, "federation", HasArg::No, SaOpt::Federation),
    spec(Some('o'), "format", HasArg::Required, SaOpt::Format),
    spec(None, "fields", HasArg::Required, SaOpt::Format),
    spec(Some('h'), "help", HasArg::No, SaOpt::Help),
    // `--h`, `--he` and `--hel` have always meant --helpformat here (its two names came first
    // and share one option), where glibc would call them ambiguous with --help; kept so. Only
    // `--h=x` now names `--h`, not `--helpformat`, in its "doesn't allow an argument" error.
    spec(None, "h", HasArg::No, SaOpt::HelpFormat),
    spec(None, "he", HasArg::No, SaOpt::HelpFormat),
    spec(None, "hel", HasArg::No, SaOpt::HelpFormat),
    spec(Some('j'), "jobs", HasArg::Required, SaOpt::Jobs),
    spec(None, "json", HasArg::No, SaOpt::Json),
    spec(Some('l'), "long", HasArg::No, SaOpt::Long),
    spec(Some('L'), "allclusters", HasArg::No, SaOpt::AllClusters),
    spec(None, "local", HasArg::No, SaOpt::Local),
    spec(None, "name", HasArg::Required, SaOpt::Name),
    spec(None, "noconvert", HasArg::No, SaOpt::NoConvert),
    spec(Some('n'), "noheader", HasArg::No, SaOpt::NoHeader),
    spec(Some('N'), "nodelist", HasArg::Required, SaOpt::NodeList),
    spec(Some('p'), "parsable", HasArg::No, SaOpt::Parsable),
    spec(Some('P'), "parsable2", HasArg::No, SaOpt::Parsable2),
    spec(Some('r'), "partition", HasArg::Required, SaOpt::Partition),
    spec(Some('S'), "starttime", HasArg::Required, SaOpt::StartTime),
    spec(Some('s'), "state", HasArg::Required, SaOpt::State),
    spec(Some('u'), "user", HasArg::Required, SaOpt::User),
    spec(None, "uid", HasArg::Required, SaOpt::User),
    spec(Some('v'), "verbose", HasArg::No, SaOpt::Verbose),
    spec(Some('V'), "version", HasArg::No, SaOpt::Version),
    spec(Some('W'), "wckeys", HasArg::Required, SaOpt::Wckeys),
];

/// The environment and clock the options are read against.
pub struct Context<'a> {
    /// Reads `SACCT_FORMAT`, `SACCT_FEDERATION`, `SACCT_LOCAL`.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// Now, for `-S now-1hour` and friends.
    pub now: i64,
    /// The zone times are written in.
    pub zone: Zone,
}

/// Comma-separated items, empty ones skipped (Slurm's `slurm_addto_char_list`).
fn items(v: &str) -> impl Iterator<Item = String> + '_ {
    v.split(',').filter(|s| !s.is_empty()).map(String::from)
}

/// Parses sacct's arguments; errors are Slurm's texts, ready for stderr.
pub fn parse(args: &[String], cx: &Context) -> Result<Invocation, String> {
    let parsed = getopt::parse(SPECS, args, Mode::Permute)
        .map_err(|e| e.usage_text("sacct", Ambiguity::Bare))?;
    if !parsed.operands.is_empty() {
        let mut text = "sacct: error: Unknown arguments:".to_string();
        for w in &parsed.operands {
            text.push_str(&format!("\nsacct: error:  {w}"));
        }
        return Err(text);
    }
    let mut o = SacctOpts {
        jobs: None,
        no_steps: false,
        mode: OutputMode::Fixed,
        delimiter: "|".into(),
        no_header: false,
        noconvert: false,
        fields: String::new(),
        long: false,
        all_users: false,
        users: None,
        accounts: Vec::new(),
        names: Vec::new(),
        partitions: Vec::new(),
        nodelist: None,
        clusters: ClusterSel::Local,
        start: None,
        end: None,
        states: Vec::new(),
        duplicates: false,
        json: false,
        wckeys: Vec::new(),
    };
    let mut federation = (cx.env)("SACCT_FEDERATION").is_some();
    let mut local = (cx.env)("SACCT_LOCAL").is_some();
    let (mut all_clusters, mut cluster_list) = (false, Vec::new());
    let (mut brief, mut long, mut formats) = (false, false, Vec::new());
    let time =
        |v: &str| timespec::parse(v, cx.now, cx.zone).map_err(|e| format!("sacct: error: {e}"));
    for (id, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match id {
            SaOpt::Help => return Ok(Invocation::Help),
            SaOpt::HelpFormat => return Ok(Invocation::HelpFields),
            SaOpt::Version => return Ok(Invocation::Version),
            SaOpt::AllUsers => o.all_users = true,
            SaOpt::Accounts => o.accounts.extend(items(&v)),
            SaOpt::Allocations => o.no_steps = true,
            SaOpt::Brief => brief = true,
            SaOpt::Long => long = true,
            SaOpt::Duplicates => o.duplicates = true,
            SaOpt::AllClusters => all_clusters = true,
            SaOpt::Clusters if v.eq_ignore_ascii_case("all") || v == "-1" => all_clusters = true,
            SaOpt::Clusters => {
                all_clusters = false;
                local = true;
                cluster_list.extend(items(&v));
            }
            SaOpt::Federation => (federation, all_clusters) = (true, false),
            SaOpt::Local => (local, all_clusters) = (true, false),
            SaOpt::Delimiter => o.delimiter = v,
            SaOpt::NoHeader => o.no_header = true,
            SaOpt::NoConvert => o.noconvert = true,
            SaOpt::NodeList => o.nodelist = o.nodelist.take().or(Some(v)),
            SaOpt::Name => o.names.extend(items(&v)),
            SaOpt::Parsable => o.mode = OutputMode::Parsable,
            SaOpt::Parsable2 => o.mode = OutputMode::Parsable2,
            SaOpt::Partition => o.partitions.extend(items(&v)),
            SaOpt::Format => formats.push(v),
            SaOpt::Jobs => o.jobs.get_or_insert_with(Vec::new).extend(job_list(&v)?),
            SaOpt::StartTime => o.start = Some(time(&v)?),
            SaOpt::EndTime => o.end = Some(time(&v)?),
            SaOpt::State => o.states.extend(state_list(&v)?),
            SaOpt::User if v == "-1" => o.all_users = true,
            SaOpt::User => {
                o.all_users = false;
                let uids = o.users.get_or_insert_with(Vec::new);
                for u in items(&v) {
                    uids.push(
                        uid_of(&u).ok_or_else(|| format!("sacct: error: Invalid user id: {u}"))?,
                    );
                }
            }
            SaOpt::Json => o.json = true,
            SaOpt::Wckeys => o.wckeys.extend(items(&v)),
            SaOpt::Verbose => {}
        }
    }
    if long && !formats.is_empty() {
        return Err(
            "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. \
                    Please remove one and retry."
                .into(),
        );
    }
    if brief {
        formats.push(BRIEF_FIELDS.into());
    }
    if long {
        formats.push(LONG_FIELDS.into());
        o.long = true;
    }
    o.fields = if formats.is_empty() {
        (cx.env)("SACCT_FORMAT").unwrap_or_else(|| DEFAULT_FIELDS.into())
    } else {
        formats.join(",")
    };
    o.clusters = if federation && !all_clusters && cluster_list.is_empty() && !local {
        ClusterSel::Federation
    } else if all_clusters {
        ClusterSel::All
    } else if !cluster_list.is_empty() {
        ClusterSel::List(cluster_list)
    } else {
        ClusterSel::Local
    };
    Ok(Invocation::Run(Box::new(o)))
}

/// `-s`: long or compact names; Slurm's texts for unknown and unaccounted states.
fn state_list(v: &str) -> Result<Vec<JobState>, String> {
    items(v)
        .map(|s| {
            let state = if s.eq_ignore_ascii_case("REQUEUE") {
                Some(JobState::Requeued)
            } else {
                JobState::parse(&s)
            };
            let state =
                state.ok_or_else(|| format!("sacct: fatal: unrecognized job state value '{s}'"))?;
            if !SUPPORTED.contains(&state) {
                return Err(format!(
                    "sacct: fatal: job state {s} is not supported / accounted"
                ));
            }
            Ok(state)
        })
        .collect()
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
