//! sstat's command line: `-j job[.step][,...]` (required), `-a`, `-o fields`, `-n`, `-p`/`-P`,
//! `-i`, `-e`, `-h`, `--usage`, `-V`. Errors are Slurm's whole text.

use crate::acct::jobsel::{self, JobSel};
use crate::getopt::{self, HasArg, Mode, OptSpec};
use crate::output::OutputMode;

/// An sstat option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StOpt {
    AllSteps,
    Format,
    HelpFormat,
    Help,
    Jobs,
    NoConvert,
    NoHeader,
    Parsable,
    Parsable2,
    PidFormat,
    Usage,
    Verbose,
    Version,
}

const fn o(long: &'static str, short: Option<char>, arg: HasArg, id: StOpt) -> OptSpec<StOpt> {
    OptSpec {
        long,
        short,
        arg,
        id,
    }
}

/// sstat's option table.
pub const TABLE: &[OptSpec<StOpt>] = &[
    o("allsteps", Some('a'), HasArg::No, StOpt::AllSteps),
    o("fields", None, HasArg::Required, StOpt::Format),
    o("format", Some('o'), HasArg::Required, StOpt::Format),
    o("helpformat", Some('e'), HasArg::No, StOpt::HelpFormat),
    o("help", Some('h'), HasArg::No, StOpt::Help),
    o("jobs", Some('j'), HasArg::Required, StOpt::Jobs),
    o("noconvert", None, HasArg::No, StOpt::NoConvert),
    o("noheader", Some('n'), HasArg::No, StOpt::NoHeader),
    o("parsable", Some('p'), HasArg::No, StOpt::Parsable),
    o("parsable2", Some('P'), HasArg::No, StOpt::Parsable2),
    o("pidformat", Some('i'), HasArg::No, StOpt::PidFormat),
    o("usage", None, HasArg::No, StOpt::Usage),
    o("verbose", Some('v'), HasArg::No, StOpt::Verbose),
    o("version", Some('V'), HasArg::No, StOpt::Version),
];

/// Slurm 22.05's default field list.
pub const DEFAULT_FORMAT: &str = "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,\
MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,\
MinCPUTask,AveCPU,NTasks,AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,\
MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,\
MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,\
TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,\
TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,\
TRESUsageOutMinNode,TRESUsageOutMinTask,TRESUsageOutTot";

/// `-i`'s field list.
pub const PID_FORMAT: &str = "JobID,Nodelist,Pids";

/// What to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstatOpts {
    /// The `-j` items.
    pub jobs: Vec<JobSel>,
    /// `-a`: every step of a job given without a step.
    pub all_steps: bool,
    /// The field list.
    pub format: String,
    /// `-n`.
    pub no_header: bool,
    /// `--noconvert`: sizes in bytes, not reduced to larger units.
    pub noconvert: bool,
    /// `-p` / `-P`.
    pub mode: OutputMode,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Show the steps.
    Run(SstatOpts),
    /// `-h`.
    Help,
    /// `--usage`.
    Usage,
    /// `-e`.
    HelpFormat,
    /// `-V`.
    Version,
}

/// Parses sstat's arguments.
pub fn parse(args: &[String]) -> Result<Invocation, String> {
    let parsed = getopt::parse(TABLE, args, Mode::Permute).map_err(|e| format!("sstat: {e}"))?;
    let mut o = SstatOpts {
        jobs: Vec::new(),
        all_steps: false,
        format: DEFAULT_FORMAT.to_string(),
        no_header: false,
        noconvert: false,
        mode: OutputMode::Fixed,
    };
    for (opt, value) in parsed.opts {
        let v = value.unwrap_or_default();
        match opt {
            StOpt::Help => return Ok(Invocation::Help),
            StOpt::Usage => return Ok(Invocation::Usage),
            StOpt::HelpFormat => return Ok(Invocation::HelpFormat),
            StOpt::Version => return Ok(Invocation::Version),
            StOpt::AllSteps => o.all_steps = true,
            StOpt::Format => o.format = v,
            StOpt::PidFormat => o.format = PID_FORMAT.to_string(),
            StOpt::Jobs => o.jobs.extend(job_list(&v)?),
            StOpt::NoHeader => o.no_header = true,
            StOpt::Parsable => o.mode = OutputMode::Parsable,
            StOpt::Parsable2 => o.mode = OutputMode::Parsable2,
            StOpt::NoConvert => o.noconvert = true,
            // Slurm's -v logs its plugins loading; there are none to report here.
            StOpt::Verbose => {}
        }
    }
    // Slurm takes stray words as jobs too (`sstat 12`).
    for word in &parsed.operands {
        o.jobs.extend(job_list(word)?);
    }
    if o.jobs.is_empty() {
        return Err("sstat: error: You didn't give me any jobs to stat.".into());
    }
    Ok(Invocation::Run(o))
}

/// sstat's `-j` items: sacct's, but not a heterogeneous job's component (`123+1`), which
/// sstat does not read (refused as any other id it cannot read).
fn job_list(v: &str) -> Result<Vec<JobSel>, String> {
    let sels = jobsel::job_list(v).map_err(|e| e.replacen("sacct:", "sstat:", 1))?;
    if let Some(item) = v.split(',').find(|item| item.contains('+')) {
        return Err(format!("sstat: fatal: Bad job/step specified: {item}"));
    }
    Ok(sels)
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
