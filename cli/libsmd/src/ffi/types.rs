//! The C structs `smd.h` declares, built from the [`model`](crate::model) types, and their
//! release. Every string is a NUL-terminated copy owned by the struct; every struct returned
//! to C is released by exactly one `smd_free_*` call.

use std::ffi::{CString, c_char};

use crate::model::{Allocation, Event};

/// `smd_node_t`.
#[repr(C)]
#[derive(Debug)]
pub struct SmdNode {
    /// The node's name.
    pub name: *mut c_char,
    /// The job's CPUs on it.
    pub cpus: u32,
    /// `SMD_NODE_OK`, `SMD_NODE_FAILED` or `SMD_NODE_FAILING`.
    pub state: i32,
}

/// `smd_allocation_t`.
#[repr(C)]
#[derive(Debug)]
pub struct SmdAllocation {
    /// The job.
    pub job_id: u32,
    /// The compressed host list.
    pub node_list: *mut c_char,
    /// `SLURM_JOB_CPUS_PER_NODE`'s form.
    pub cpus_per_node: *mut c_char,
    /// The time limit in minutes (0: unlimited).
    pub time_limit_minutes: u32,
    /// Minutes of extension still available.
    pub extend_available_minutes: u32,
    /// Replacements so far.
    pub spares_used: u32,
    /// Hot spares free in the job's partition.
    pub spares_free: u32,
    /// How many entries `nodes` has.
    pub node_count: usize,
    /// The nodes, in node-list order.
    pub nodes: *mut SmdNode,
}

/// `smd_event_t`.
#[repr(C)]
#[derive(Debug)]
pub struct SmdEvent {
    /// One of `SMD_EVENT_*`.
    pub kind: i32,
    /// The node it happened to ("" if none).
    pub node: *mut c_char,
    /// The replacement node ("" unless replaced).
    pub replacement: *mut c_char,
    /// Unix seconds.
    pub time: i64,
    /// The allocation after the change (owned by the event).
    pub allocation: *mut SmdAllocation,
}

/// A C copy of `s` (a NUL inside, impossible in node names, is dropped).
pub fn c_string(s: &str) -> *mut c_char {
    let clean: String = s.chars().filter(|c| *c != '\0').collect();
    CString::new(clean).unwrap_or_default().into_raw()
}

/// Releases a string made by [`c_string`].
#[allow(unsafe_code)]
fn free_string(p: *mut c_char) {
    if !p.is_null() {
        // SAFETY: `p` came from `CString::into_raw` in `c_string` and is released once.
        drop(unsafe { CString::from_raw(p) });
    }
}

/// A heap copy of `a` for C.
pub fn allocation_to_c(a: &Allocation) -> *mut SmdAllocation {
    let nodes: Box<[SmdNode]> = a
        .nodes
        .iter()
        .map(|n| SmdNode {
            name: c_string(&n.name),
            cpus: n.cpus,
            state: n.state as i32,
        })
        .collect();
    let node_count = nodes.len();
    Box::into_raw(Box::new(SmdAllocation {
        job_id: a.job_id,
        node_list: c_string(&a.node_list),
        cpus_per_node: c_string(&a.cpus_per_node),
        time_limit_minutes: a.time_limit_minutes,
        extend_available_minutes: a.extend_available_minutes,
        spares_used: a.spares_used,
        spares_free: a.spares_free,
        node_count,
        nodes: Box::into_raw(nodes).cast::<SmdNode>(),
    }))
}

/// Releases what [`allocation_to_c`] made.
///
/// # Safety
/// `p` is null or a pointer [`allocation_to_c`] returned, not released before.
#[allow(unsafe_code)]
pub unsafe fn free_allocation(p: *mut SmdAllocation) {
    if p.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let a = unsafe { Box::from_raw(p) };
    free_string(a.node_list);
    free_string(a.cpus_per_node);
    if !a.nodes.is_null() {
        // SAFETY: `nodes` and `node_count` are the boxed slice made in `allocation_to_c`.
        let nodes =
            unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(a.nodes, a.node_count)) };
        for n in nodes.iter() {
            free_string(n.name);
        }
    }
}

/// A heap copy of `e` for C.
pub fn event_to_c(e: &Event) -> *mut SmdEvent {
    Box::into_raw(Box::new(SmdEvent {
        kind: e.kind as i32,
        node: c_string(&e.node),
        replacement: c_string(&e.replacement),
        time: e.time,
        allocation: allocation_to_c(&e.allocation),
    }))
}

/// Releases what [`event_to_c`] made.
///
/// # Safety
/// `p` is null or a pointer [`event_to_c`] returned, not released before.
#[allow(unsafe_code)]
pub unsafe fn free_event(p: *mut SmdEvent) {
    if p.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let e = unsafe { Box::from_raw(p) };
    free_string(e.node);
    free_string(e.replacement);
    // SAFETY: the event owns its allocation, made by `allocation_to_c`.
    unsafe { free_allocation(e.allocation) };
}
