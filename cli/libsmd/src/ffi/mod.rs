//! The C ABI, declared by `include/smd.h`: an opaque handle ([`smd_open`]/[`smd_close`]), one
//! function per operation, an event subscription with a blocking [`smd_next_event`], error
//! codes with [`smd_strerror`] and the calling thread's last message ([`smd_last_error`]), and a
//! free function for everything returned. No panic crosses the boundary: a panic is reported as
//! `SMD_ESERVER`.
//!
//! * [`types`]: the C structs and their release.

#![allow(unsafe_code)]

#[cfg(test)]
mod tests;
pub mod types;

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use crate::client::{Client, Subscription};
use crate::endpoint::Endpoint;
use crate::error::{ErrorCode, SmdError};
use crate::model::{Allocation, EventKind, NodeState};
use types::{SmdAllocation, SmdEvent, allocation_to_c, event_to_c, free_allocation, free_event};

/// `smd_handle_t`: a connection to the failure management service.
#[derive(Debug)]
pub struct SmdHandle {
    client: Client,
}

/// `smd_subscription_t`: one job's event stream.
#[derive(Debug)]
pub struct SmdSubscription {
    inner: Subscription,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(text: &str) {
    let clean: String = text.chars().filter(|c| *c != '\0').collect();
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(clean).unwrap_or_default());
}

/// Runs `f`, turning its error or a panic into a code and the thread's last message.
fn guard(f: impl FnOnce() -> Result<(), SmdError>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            set_last_error("");
            ErrorCode::Ok as c_int
        }
        Ok(Err(e)) => {
            set_last_error(&e.to_string());
            e.code() as c_int
        }
        Err(_) => {
            set_last_error("internal error in libsmd");
            ErrorCode::Server as c_int
        }
    }
}

/// A C string argument as `&str`, or a [`SmdError::BadInput`] naming it.
///
/// # Safety
/// `p` is null or a NUL-terminated string valid for the call.
unsafe fn arg<'a>(p: *const c_char, name: &str) -> Result<&'a str, SmdError> {
    if p.is_null() {
        return Err(SmdError::BadInput(format!("{name} is NULL")));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| SmdError::BadInput(format!("{name} is not UTF-8")))
}

/// The handle behind `h`.
///
/// # Safety
/// `h` is null or a handle from [`smd_open`] not yet closed.
unsafe fn handle<'a>(h: *mut SmdHandle) -> Result<&'a SmdHandle, SmdError> {
    // SAFETY: the caller's contract.
    unsafe { h.as_ref() }.ok_or_else(|| SmdError::BadInput("handle is NULL".to_string()))
}

/// Stores `a` in `*out` unless `out` is null.
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn give(out: *mut *mut SmdAllocation, a: &Allocation) {
    if !out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *out = allocation_to_c(a) };
    }
}

/// The body of every call that answers an allocation: `op` on the handle's client, its answer
/// stored in `*out` (unless null), a failure as its code.
///
/// # Safety
/// `h` is a live handle; `out` is null or valid for a write.
unsafe fn allocation_call(
    h: *mut SmdHandle,
    out: *mut *mut SmdAllocation,
    op: impl FnOnce(&Client) -> Result<Allocation, SmdError>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let a = op(&unsafe { handle(h) }?.client)?;
        unsafe { give(out, &a) };
        Ok(())
    })
}

/// Connects to the cluster of `slurm_conf` (NULL: `$SLURM_CONF`, else /etc/slurm/slurm.conf)
/// and stores the handle in `*out`.
///
/// # Safety
/// `slurm_conf` is null or a NUL-terminated string; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_open(slurm_conf: *const c_char, out: *mut *mut SmdHandle) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(SmdError::BadInput("out is NULL".to_string()));
        }
        // SAFETY: `out` is valid for a write (the caller's contract).
        unsafe { *out = std::ptr::null_mut() };
        let endpoint = match slurm_conf.is_null() {
            true => Endpoint::from_env()?,
            // SAFETY: the caller's contract.
            false => {
                Endpoint::from_slurm_conf(Path::new(unsafe { arg(slurm_conf, "slurm_conf") }?))?
            }
        };
        let client = Client::connect(&endpoint)?;
        // SAFETY: as above.
        unsafe { *out = Box::into_raw(Box::new(SmdHandle { client })) };
        Ok(())
    })
}

/// Closes a handle (NULL is ignored). Its subscriptions stay usable until unsubscribed.
///
/// # Safety
/// `h` is null or a handle from [`smd_open`], closed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_close(h: *mut SmdHandle) {
    if !h.is_null() {
        // SAFETY: the caller's contract.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(h) })));
    }
}

/// The job's allocation with its failed and failing nodes, in `*out`.
///
/// # Safety
/// `h` is a live handle; `out` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_job_nodes(
    h: *mut SmdHandle,
    job_id: u32,
    out: *mut *mut SmdAllocation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { allocation_call(h, out, |c| c.job_nodes(job_id)) }
}

/// Replaces `node` of the job by a spare; the new allocation in `*out` (if not NULL).
/// `SMD_EREFUSED` with "Failed to replace the node" when no spare is free.
///
/// # Safety
/// `h` is a live handle; `node` a NUL-terminated string; `out` null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_replace_node(
    h: *mut SmdHandle,
    job_id: u32,
    node: *const c_char,
    out: *mut *mut SmdAllocation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { allocation_call(h, out, |c| c.replace_node(job_id, arg(node, "node")?)) }
}

/// Drops `node` from the job's allocation; the new allocation in `*out` (if not NULL).
///
/// # Safety
/// As [`smd_replace_node`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_drop_node(
    h: *mut SmdHandle,
    job_id: u32,
    node: *const c_char,
    out: *mut *mut SmdAllocation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { allocation_call(h, out, |c| c.drop_node(job_id, arg(node, "node")?)) }
}

/// Drains `node` of the job's allocation with `reason`; the new allocation in `*out`.
///
/// # Safety
/// As [`smd_replace_node`]; `reason` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_drain_node(
    h: *mut SmdHandle,
    job_id: u32,
    node: *const c_char,
    reason: *const c_char,
    out: *mut *mut SmdAllocation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        allocation_call(h, out, |c| {
            c.drain_node(job_id, arg(node, "node")?, arg(reason, "reason")?)
        })
    }
}

/// Extends the job's time limit by `minutes`; the new allocation in `*out` (if not NULL).
///
/// # Safety
/// `h` is a live handle; `out` null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_extend_time(
    h: *mut SmdHandle,
    job_id: u32,
    minutes: u32,
    out: *mut *mut SmdAllocation,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { allocation_call(h, out, |c| c.extend_time(job_id, minutes)) }
}

/// Releases an allocation (NULL is ignored).
///
/// # Safety
/// `a` is null or an allocation returned by this library, released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_free_allocation(a: *mut SmdAllocation) {
    // SAFETY: the caller's contract.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { free_allocation(a) }));
}

/// Subscribes to the job's node events; the subscription in `*out`.
///
/// # Safety
/// `h` is a live handle; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_subscribe(
    h: *mut SmdHandle,
    job_id: u32,
    out: *mut *mut SmdSubscription,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(SmdError::BadInput("out is NULL".to_string()));
        }
        // SAFETY: the caller's contract.
        let inner = unsafe { handle(h) }?.client.subscribe(job_id)?;
        unsafe { *out = Box::into_raw(Box::new(SmdSubscription { inner })) };
        Ok(())
    })
}

/// Blocks for the subscription's next event, stored in `*out`. `SMD_EENDED` once the stream
/// is over (after `SMD_EVENT_JOB_ENDED`).
///
/// # Safety
/// `s` is a live subscription; `out` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_next_event(s: *mut SmdSubscription, out: *mut *mut SmdEvent) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(SmdError::BadInput("out is NULL".to_string()));
        }
        // SAFETY: the caller's contract.
        let s = unsafe { s.as_mut() }
            .ok_or_else(|| SmdError::BadInput("subscription is NULL".to_string()))?;
        let event = s.inner.next_event()?;
        unsafe { *out = event_to_c(&event) };
        Ok(())
    })
}

/// Releases an event (NULL is ignored).
///
/// # Safety
/// `e` is null or an event returned by [`smd_next_event`], released once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_free_event(e: *mut SmdEvent) {
    // SAFETY: the caller's contract.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { free_event(e) }));
}

/// Ends a subscription (NULL is ignored).
///
/// # Safety
/// `s` is null or a subscription from [`smd_subscribe`], ended once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn smd_unsubscribe(s: *mut SmdSubscription) {
    if !s.is_null() {
        // SAFETY: the caller's contract.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(s) })));
    }
}

/// The fixed text of an error code ("Unknown error" for a number that is none). Static.
#[unsafe(no_mangle)]
pub extern "C" fn smd_strerror(code: c_int) -> *const c_char {
    ErrorCode::from_i32(code).map_or(c"Unknown error".as_ptr(), |c| c.c_text().as_ptr())
}

/// The message of the calling thread's last failed call ("" after a success); valid until the
/// thread's next call into the library.
#[unsafe(no_mangle)]
pub extern "C" fn smd_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// `OK`, `FAILED` or `FAILING` for an `SMD_NODE_*` value ("UNKNOWN" otherwise). Static.
#[unsafe(no_mangle)]
pub extern "C" fn smd_node_state_name(state: c_int) -> *const c_char {
    match state {
        s if s == NodeState::Ok as c_int => c"OK".as_ptr(),
        s if s == NodeState::Failed as c_int => c"FAILED".as_ptr(),
        s if s == NodeState::Failing as c_int => c"FAILING".as_ptr(),
        _ => c"UNKNOWN".as_ptr(),
    }
}

/// The name of an `SMD_EVENT_*` value (`FAILED`, `REPLACED`, ...; "UNKNOWN" otherwise). Static.
#[unsafe(no_mangle)]
pub extern "C" fn smd_event_kind_name(kind: c_int) -> *const c_char {
    const KINDS: [(EventKind, &CStr); 7] = [
        (EventKind::Failed, c"FAILED"),
        (EventKind::Failing, c"FAILING"),
        (EventKind::Replaced, c"REPLACED"),
        (EventKind::Dropped, c"DROPPED"),
        (EventKind::Recovered, c"RECOVERED"),
        (EventKind::TimeExtended, c"TIME_EXTENDED"),
        (EventKind::JobEnded, c"JOB_ENDED"),
    ];
    KINDS
        .iter()
        .find(|(k, _)| *k as c_int == kind)
        .map_or(c"UNKNOWN".as_ptr(), |(_, name)| name.as_ptr())
}
