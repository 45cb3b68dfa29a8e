//! sacct's options, parsed as Slurm's `parse_command_line` does: the same letters and long
//! names, the field list built from `-o`, `-b`, `-l` and `SACCT_FORMAT`, and Slurm's error
//! texts. Times (`-S/-E`) are read here with [`timespec`](crate::timespec), so parsing takes
//! `now` and the zone; the window defaults are applied in [`window`](super::window).

use sluice_vocab::JobState;

use super::jobsel::{JobSel, job_list};
use crate::cmdutil::{ArgKind, OptSpec, getopt, uid_of};
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

const fn spec(short: Option<char>, long: &'static str, arg: ArgKind, id: &'static str) -> OptSpec {
    OptSpec {
        short,
        long,
        arg,
        id,
    }
}

const SPECS: &[OptSpec] = &[
    spec(Some('a'), "allusers", ArgKind::None, "a"),
    spec(Some('A'), "accounts", ArgKind::Required, "A"),
    spec(Some('X'), "allocations", ArgKind::None, "X"),
    spec(Some('b'), "brief", ArgKind::None, "b"),
    spec(Some('M'), "clusters", ArgKind::Required, "M"),
    spec(None, "cluster", ArgKind::Required, "M"),
    spec(None, "delimiter", ArgKind::Required, "delimiter"),
    spec(Some('D'), "duplicates", ArgKind::None, "D"),
    spec(Some('E'), "endtime", ArgKind::Required, "E"),
    spec(Some('e'), "helpformat", ArgKind::None, "e"),
    spec(None, "help-fields", ArgKind::None, "e"),
    spec(None, "federation", ArgKind::None, "federation"),
    spec(Some('o'), "format", ArgKind::Required, "o"),
    spec(None, "fields", ArgKind::Required, "o"),
    spec(Some('h'), "help", ArgKind::None, "h"),
    spec(Some('j'), "jobs", ArgKind::Required, "j"),
    spec(None, "json", ArgKind::None, "json"),
    spec(Some('l'), "long", ArgKind::None, "l"),
    spec(Some('L'), "allclusters", ArgKind::None, "L"),
    spec(None, "local", ArgKind::None, "local"),
    spec(None, "name", ArgKind::Required, "name"),
    spec(Some('n'), "noheader", ArgKind::None, "n"),
    spec(Some('N'), "nodelist", ArgKind::Required, "N"),
    spec(Some('p'), "parsable", ArgKind::None, "p"),
    spec(Some('P'), "parsable2", ArgKind::None, "P"),
    spec(Some('r'), "partition", ArgKind::Required, "r"),
    spec(Some('S'), "starttime", ArgKind::Required, "S"),
    spec(Some('s'), "state", ArgKind::Required, "s"),
    spec(Some('u'), "user", ArgKind::Required, "u"),
    spec(None, "uid", ArgKind::Required, "u"),
    spec(Some('v'), "verbose", ArgKind::None, "v"),
    spec(Some('V'), "version", ArgKind::None, "V"),
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
    let parsed = getopt("sacct", args, SPECS)?;
    if !parsed.positional.is_empty() {
        let mut text = "sacct: error: Unknown arguments:".to_string();
        for w in &parsed.positional {
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
            "h" => return Ok(Invocation::Help),
            "e" => return Ok(Invocation::HelpFields),
            "V" => return Ok(Invocation::Version),
            "a" => o.all_users = true,
            "A" => o.accounts.extend(items(&v)),
            "X" => o.no_steps = true,
            "b" => brief = true,
            "l" => long = true,
            "D" => o.duplicates = true,
            "L" => all_clusters = true,
            "M" if v.eq_ignore_ascii_case("all") || v == "-1" => all_clusters = true,
            "M" => {
                all_clusters = false;
                local = true;
                cluster_list.extend(items(&v));
            }
            "federation" => (federation, all_clusters) = (true, false),
            "local" => (local, all_clusters) = (true, false),
            "delimiter" => o.delimiter = v,
            "n" => o.no_header = true,
            "N" => o.nodelist = o.nodelist.take().or(Some(v)),
            "name" => o.names.extend(items(&v)),
            "p" => o.mode = OutputMode::Parsable,
            "P" => o.mode = OutputMode::Parsable2,
            "r" => o.partitions.extend(items(&v)),
            "o" => formats.push(v),
            "j" => o.jobs.get_or_insert_with(Vec::new).extend(job_list(&v)?),
            "S" => o.start = Some(time(&v)?),
            "E" => o.end = Some(time(&v)?),
            "s" => o.states.extend(state_list(&v)?),
            "u" if v == "-1" => o.all_users = true,
            "u" => {
                o.all_users = false;
                let uids = o.users.get_or_insert_with(Vec::new);
                for u in items(&v) {
                    uids.push(
                        uid_of(&u).ok_or_else(|| format!("sacct: error: Invalid user id: {u}"))?,
                    );
                }
            }
            "json" => o.json = true,
            _ => {}
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
