//! sacct's usage fields (what `jobacct_gather` measured): memory, page faults, CPU times, disk
//! bytes and the `TRESUsage*` strings, per Slurm's `print.c`. Step lines show what their step
//! used; job lines only the CPU times, summed over the steps (Slurm's `tot_cpu_sec`). A step
//! nothing was measured for shows empty values and CPU times of `00:00:00`.

use sluice_vocab::jobacct::{
    StepUsage, TRES_CPU, TRES_FS_DISK, TRES_MEM, TRES_NAMES, TRES_PAGES, TRES_VMEM, TresMap,
    UsageSide,
};
use sluice_wire::jobacct::StepUsageWire;

use super::values::{Line, units};
use super::{Cx, Field};
use crate::timefmt;

/// The step's usage, for a step line where it was measured.
fn usage(l: &Line) -> Option<StepUsage> {
    StepUsage::from_proto(l.step()?.usage.as_ref()?)
}

/// CPU milliseconds as Slurm's `_elapsed_time`: `MM:SS.mmm` under an hour with a fraction,
/// `HH:MM:SS` (or `D-HH:MM:SS`) otherwise.
pub fn cpu_time(ms: u64) -> String {
    let (secs, milli) = (ms / 1000, ms % 1000);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d:02}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else if milli > 0 {
        format!("{m:02}:{s:02}.{milli:03}")
    } else {
        format!("00:{m:02}:{s:02}")
    }
}

/// A user/system/total CPU time: the step's, or on a job line the sum over its steps.
fn cpu_sum(l: &Line, pick: fn(&StepUsage) -> u64) -> String {
    let ms = match l {
        Line::Step(..) => usage(l).map_or(0, |u| pick(&u)),
        Line::Job(j) => j
            .steps
            .iter()
            .filter_map(|s| StepUsage::from_proto(s.usage.as_ref()?))
            .map(|u| pick(&u))
            .sum(),
    };
    cpu_time(ms)
}

/// How one TRES value is printed: CPU as a clock, sizes reduced, counts as they are.
fn tres_value(cx: &Cx, id: u32, v: u64) -> String {
    match id {
        TRES_CPU => timefmt::clock(i64::try_from(v / 1000).unwrap_or(i64::MAX)),
        TRES_MEM | TRES_VMEM | TRES_FS_DISK => units(cx, v, '\0'),
        _ => v.to_string(),
    }
}

/// The node at `index` of the step's node list.
fn node_name(l: &Line, index: u64) -> String {
    let list = l.step().map(|s| s.node_list.as_str()).unwrap_or_default();
    sluice_vocab::hostlist::expand(list)
        .ok()
        .and_then(|nodes| nodes.into_iter().nth(usize::try_from(index).ok()?))
        .unwrap_or_default()
}

/// One TRES of one map of one side, shown by `show`.
fn one(
    (l, cx): (&Line, &Cx),
    side: fn(&StepUsage) -> &UsageSide,
    map: fn(&UsageSide) -> &TresMap,
    id: u32,
    show: fn(&Line, &Cx, u64) -> String,
) -> String {
    usage(l)
        .and_then(|u| map(side(&u)).get(id))
        .map(|v| show(l, cx, v))
        .unwrap_or_default()
}

/// A whole map as `cpu=...,fs/disk=...,mem=...` in sacct's order.
fn tres_string(
    (l, cx): (&Line, &Cx),
    side: fn(&StepUsage) -> &UsageSide,
    map: fn(&UsageSide) -> &TresMap,
    show: fn(&Line, &Cx, u32, u64) -> String,
) -> String {
    let Some(u) = usage(l) else {
        return String::new();
    };
    let m = map(side(&u));
    TRES_NAMES
        .iter()
        .filter_map(|&(id, name)| Some(format!("{name}={}", show(l, cx, id, m.get(id)?))))
        .collect::<Vec<_>>()
        .join(",")
}

fn size(_: &Line, cx: &Cx, v: u64) -> String {
    units(cx, v, '\0')
}
fn count(_: &Line, _: &Cx, v: u64) -> String {
    v.to_string()
}
fn node(l: &Line, _: &Cx, v: u64) -> String {
    node_name(l, v)
}
fn cpu_secs(_: &Line, _: &Cx, v: u64) -> String {
    cpu_time(v / 1000 * 1000)
}
fn value(_: &Line, cx: &Cx, id: u32, v: u64) -> String {
    tres_value(cx, id, v)
}
fn task(_: &Line, _: &Cx, _: u32, v: u64) -> String {
    v.to_string()
}
fn node_of(l: &Line, _: &Cx, _: u32, v: u64) -> String {
    node_name(l, v)
}

fn ins(u: &StepUsage) -> &UsageSide {
    &u.usage_in
}
fn outs(u: &StepUsage) -> &UsageSide {
    &u.usage_out
}

macro_rules! stat {
    ($name:literal, $w:literal, $side:ident, $map:ident, $id:ident, $show:ident) => {
        Field {
            name: $name,
            width: $w,
            value: |l, cx: &Cx| one((l, cx), $side, |s| &s.$map, $id, $show),
        }
    };
}

macro_rules! tres {
    ($name:literal, $side:ident, $map:ident, $show:ident) => {
        Field {
            name: $name,
            width: 10,
            value: |l, cx: &Cx| tres_string((l, cx), $side, |s| &s.$map, $show),
        }
    };
}

/// The usage fields only a live step has (`sstat`): which task and node used the least. The
/// accounting history does not keep them, so sacct does not offer them.
pub const LIVE_FIELDS: &[Field] = &[
    stat!("MinCPUNode", 10, ins, min_node, TRES_CPU, node),
    stat!("MinCPUTask", 10, ins, min_task, TRES_CPU, count),
    tres!("TRESUsageInMinNode", ins, min_node, node_of),
    tres!("TRESUsageInMinTask", ins, min_task, task),
    tres!("TRESUsageOutMinNode", outs, min_node, node_of),
    tres!("TRESUsageOutMinTask", outs, min_task, task),
];

/// The usage fields, by Slurm's name.
pub const USAGE_FIELDS: &[Field] = &[
    stat!("AveCPU", 10, ins, ave, TRES_CPU, cpu_secs),
    stat!("AveDiskRead", 12, ins, ave, TRES_FS_DISK, size),
    stat!("AveDiskWrite", 12, outs, ave, TRES_FS_DISK, size),
    stat!("AvePages", 10, ins, ave, TRES_PAGES, size),
    stat!("AveRSS", 10, ins, ave, TRES_MEM, size),
    stat!("AveVMSize", 10, ins, ave, TRES_VMEM, size),
    stat!("MaxDiskRead", 12, ins, max, TRES_FS_DISK, size),
    stat!("MaxDiskReadNode", 15, ins, max_node, TRES_FS_DISK, node),
    stat!("MaxDiskReadTask", 15, ins, max_task, TRES_FS_DISK, count),
    stat!("MaxDiskWrite", 12, outs, max, TRES_FS_DISK, size),
    stat!("MaxDiskWriteNode", 16, outs, max_node, TRES_FS_DISK, node),
    stat!("MaxDiskWriteTask", 16, outs, max_task, TRES_FS_DISK, count),
    stat!("MaxPages", 8, ins, max, TRES_PAGES, size),
    stat!("MaxPagesNode", 12, ins, max_node, TRES_PAGES, node),
    stat!("MaxPagesTask", 12, ins, max_task, TRES_PAGES, count),
    stat!("MaxRSS", 10, ins, max, TRES_MEM, size),
    stat!("MaxRSSNode", 10, ins, max_node, TRES_MEM, node),
    stat!("MaxRSSTask", 10, ins, max_task, TRES_MEM, count),
    stat!("MaxVMSize", 10, ins, max, TRES_VMEM, size),
    stat!("MaxVMSizeNode", 14, ins, max_node, TRES_VMEM, node),
    stat!("MaxVMSizeTask", 14, ins, max_task, TRES_VMEM, count),
    stat!("MinCPU", 10, ins, min, TRES_CPU, cpu_secs),
    Field {
        name: "SystemCPU",
        width: 10,
        value: |l, _| cpu_sum(l, |u| u.sys_cpu_ms),
    },
    Field {
        name: "TotalCPU",
        width: 10,
        value: |l, _| cpu_sum(l, StepUsage::total_cpu_ms),
    },
    tres!("TRESUsageInAve", ins, ave, value),
    tres!("TRESUsageInMax", ins, max, value),
    tres!("TRESUsageInMaxNode", ins, max_node, node_of),
    tres!("TRESUsageInMaxTask", ins, max_task, task),
    tres!("TRESUsageInMin", ins, min, value),
    tres!("TRESUsageInTot", ins, tot, value),
    tres!("TRESUsageOutAve", outs, ave, value),
    tres!("TRESUsageOutMax", outs, max, value),
    tres!("TRESUsageOutMaxNode", outs, max_node, node_of),
    tres!("TRESUsageOutMaxTask", outs, max_task, task),
    tres!("TRESUsageOutMin", outs, min, value),
    tres!("TRESUsageOutTot", outs, tot, value),
    Field {
        name: "UserCPU",
        width: 10,
        value: |l, _| cpu_sum(l, |u| u.user_cpu_ms),
    },
];

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
