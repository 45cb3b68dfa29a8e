//! Reading a field list (`-o`, `-b`, `-l`, `SACCT_FORMAT`): `name[%width]` items matched by
//! prefix against Slurm's whole field table, so an abbreviation picks the field Slurm would.

use super::fields::{FIELDS, Field};
use super::usage::USAGE_FIELDS;
use crate::output::{Column, width};

/// Slurm's sacct field table, in its order (`sacct.c`); the ones sluice accounts are in
/// [`FIELDS`] and [`USAGE_FIELDS`].
const SLURM_FIELDS: &[&str] = &[
    "Account",
    "AdminComment",
    "AllocCPUS",
    "AllocGRES",
    "AllocNodes",
    "AllocTRES",
    "AssocID",
    "AveCPU",
    "AveCPUFreq",
    "AveDiskRead",
    "AveDiskWrite",
    "AvePages",
    "AveRSS",
    "AveVMSize",
    "BlockID",
    "Cluster",
    "Comment",
    "Constraints",
    "Container",
    "ConsumedEnergy",
    "ConsumedEnergyRaw",
    "CPUTime",
    "CPUTimeRAW",
    "DBIndex",
    "DerivedExitCode",
    "Elapsed",
    "ElapsedRaw",
    "Eligible",
    "End",
    "ExitCode",
    "Extra",
    "FailedNode",
    "Flags",
    "GID",
    "Group",
    "JobID",
    "JobIDRaw",
    "JobName",
    "Layout",
    "Licenses",
    "MaxDiskRead",
    "MaxDiskReadNode",
    "MaxDiskReadTask",
    "MaxDiskWrite",
    "MaxDiskWriteNode",
    "MaxDiskWriteTask",
    "MaxPages",
    "MaxPagesNode",
    "MaxPagesTask",
    "MaxRSS",
    "MaxRSSNode",
    "MaxRSSTask",
    "MaxVMSize",
    "MaxVMSizeNode",
    "MaxVMSizeTask",
    "McsLabel",
    "MinCPU",
    "MinCPUNode",
    "MinCPUTask",
    "NCPUS",
    "NNodes",
    "NodeList",
    "NTasks",
    "Partition",
    "Planned",
    "PlannedCPU",
    "PlannedCPURAW",
    "Priority",
    "QOS",
    "QOSRAW",
    "QOSREQ",
    "Reason",
    "ReqCPUFreq",
    "ReqCPUFreqMin",
    "ReqCPUFreqMax",
    "ReqCPUFreqGov",
    "ReqCPUS",
    "ReqGRES",
    "ReqMem",
    "ReqNodes",
    "ReqTRES",
    "Reservation",
    "ReservationId",
    "Start",
    "State",
    "StdErr",
    "StdIn",
    "StdOut",
    "Submit",
    "SubmitLine",
    "Suspended",
    "SystemCPU",
    "SystemComment",
    "Timelimit",
    "TimelimitRaw",
    "TotalCPU",
    "TRESUsageInAve",
    "TRESUsageInMax",
    "TRESUsageInMaxNode",
    "TRESUsageInMaxTask",
    "TRESUsageInMin",
    "TRESUsageInMinNode",
    "TRESUsageInMinTask",
    "TRESUsageInTot",
    "TRESUsageOutAve",
    "TRESUsageOutMax",
    "TRESUsageOutMaxNode",
    "TRESUsageOutMaxTask",
    "TRESUsageOutMin",
    "TRESUsageOutMinNode",
    "TRESUsageOutMinTask",
    "TRESUsageOutTot",
    "UID",
    "User",
    "UserCPU",
    "WCKey",
    "WCKeyID",
    "WorkDir",
];

/// A chosen field and its column.
pub type Chosen = (&'static Field, Column);

/// The accounted field Slurm's name `name` denotes.
fn accounted(name: &str) -> Option<&'static Field> {
    FIELDS.iter().chain(USAGE_FIELDS).find(|f| f.name == name)
}

/// Parses a field list. `ALL` (or any prefix of it) is every accounted field. With
/// `skip_unaccounted` (`-l`), Slurm fields sluice does not account are left out; otherwise they
/// are refused with Slurm's text for an unknown field.
pub fn parse_format(spec: &str, skip_unaccounted: bool) -> Result<Vec<Chosen>, String> {
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, width) = match item.split_once('%') {
            Some((n, w)) => (n, Some(width::parse_signed(w))),
            None => (item, None),
        };
        let column = |f: &'static Field| (f, Column::new(f.name, width.unwrap_or(f.width)));
        if !name.is_empty()
            && "ALL"
                .get(..name.len())
                .is_some_and(|a| a.eq_ignore_ascii_case(name))
        {
            out.extend(SLURM_FIELDS.iter().filter_map(|n| accounted(n)).map(column));
            continue;
        }
        let slurm = SLURM_FIELDS.iter().find(|f| {
            f.get(..name.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(name))
        });
        match slurm.and_then(|n| accounted(n)) {
            Some(field) => out.push(column(field)),
            None if slurm.is_some() && skip_unaccounted => {}
            None => return Err(format!("sacct: error: Invalid field requested: \"{name}\"")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &str) -> Vec<(&'static str, i32)> {
        parse_format(spec, false)
            .unwrap()
            .into_iter()
            .map(|(f, c)| (f.name, c.width))
            .collect()
    }

    #[test]
    fn prefixes_pick_slurms_first_match() {
        assert_eq!(
            names("jobid,jobn,state%-6,nodel%5,cputimer"),
            vec![
                ("JobID", -12),
                ("JobName", 10),
                ("State", -6),
                ("NodeList", 5),
                ("CPUTimeRAW", 10)
            ]
        );
        assert_eq!(names("end%x"), vec![("End", 0)]);
    }

    #[test]
    fn every_accounted_field_is_in_slurms_table() {
        for f in FIELDS.iter().chain(USAGE_FIELDS) {
            assert!(SLURM_FIELDS.contains(&f.name), "{}", f.name);
        }
        let all = FIELDS.len() + USAGE_FIELDS.len();
        assert_eq!(parse_format("all", false).unwrap().len(), all);
    }

    #[test]
    fn unknown_and_unaccounted_fields() {
        assert_eq!(
            parse_format("jobid,xyz", false).err(),
            Some("sacct: error: Invalid field requested: \"xyz\"".into())
        );
        assert_eq!(
            parse_format("consumedenergy", false).err(),
            Some("sacct: error: Invalid field requested: \"consumedenergy\"".into())
        );
        assert_eq!(parse_format("jobid,consumedenergy", true).unwrap().len(), 1);
        assert_eq!(parse_format("maxrss,totalcpu", false).unwrap().len(), 2);
    }
}
