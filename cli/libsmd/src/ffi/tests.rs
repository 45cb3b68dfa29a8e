//! The C ABI's answers to bad input: codes and messages, never a crash.

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use super::*;

fn text(p: *const c_char) -> String {
    // SAFETY: the library returns NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[test]
fn null_arguments_are_bad_input_with_a_message() {
    // SAFETY: every pointer is null or valid; null is what is being tested.
    unsafe {
        assert_eq!(smd_open(null(), null_mut()), ErrorCode::BadInput as c_int);
        assert_eq!(text(smd_last_error()), "out is NULL");
        let mut a: *mut SmdAllocation = null_mut();
        assert_eq!(
            smd_job_nodes(null_mut(), 1, &mut a),
            ErrorCode::BadInput as c_int
        );
        assert_eq!(text(smd_last_error()), "handle is NULL");
        assert!(a.is_null());
        let mut e: *mut SmdEvent = null_mut();
        assert_eq!(
            smd_next_event(null_mut(), &mut e),
            ErrorCode::BadInput as c_int
        );
        assert_eq!(text(smd_last_error()), "subscription is NULL");
        // Releasing nothing is allowed.
        smd_free_allocation(null_mut());
        smd_free_event(null_mut());
        smd_unsubscribe(null_mut());
        smd_close(null_mut());
    }
}

#[test]
fn a_bad_configuration_fails_open_and_leaves_no_handle() {
    // Not null, so the test sees `smd_open` reset it.
    let mut h: *mut SmdHandle = std::ptr::dangling_mut();
    // SAFETY: the path is a NUL-terminated string and `h` is writable.
    let rc = unsafe { smd_open(c"/nonexistent/slurm.conf".as_ptr(), &mut h) };
    assert_eq!(rc, ErrorCode::Config as c_int);
    assert!(h.is_null());
    assert!(text(smd_last_error()).starts_with("/nonexistent/slurm.conf: "));
    let bad = [0xffu8, 0];
    // SAFETY: as above; the string is not UTF-8.
    let rc = unsafe { smd_open(bad.as_ptr().cast(), &mut h) };
    assert_eq!(rc, ErrorCode::BadInput as c_int);
    assert_eq!(text(smd_last_error()), "slurm_conf is not UTF-8");
}

#[test]
fn texts_for_codes_states_and_kinds() {
    assert_eq!(text(smd_strerror(0)), "Success");
    assert_eq!(
        text(smd_strerror(ErrorCode::Refused as c_int)),
        "Request refused"
    );
    assert_eq!(text(smd_strerror(99)), "Unknown error");
    assert_eq!(text(smd_strerror(-1)), "Unknown error");
    assert_eq!(text(smd_node_state_name(1)), "FAILED");
    assert_eq!(text(smd_node_state_name(7)), "UNKNOWN");
    assert_eq!(text(smd_event_kind_name(3)), "REPLACED");
    assert_eq!(text(smd_event_kind_name(0)), "UNKNOWN");
}

#[test]
fn returned_structs_are_deep_copies_released_once() {
    let a = crate::model::Allocation {
        job_id: 3,
        node_list: "a,b".into(),
        cpus_per_node: "1(x2)".into(),
        nodes: ["a", "b\0c"]
            .iter()
            .map(|n| crate::model::Node {
                name: n.to_string(),
                cpus: 1,
                state: NodeState::Failing,
            })
            .collect(),
        ..Default::default()
    };
    let c = allocation_to_c(&a);
    // SAFETY: `c` was just made by `allocation_to_c` and holds `node_count` nodes.
    unsafe {
        let nodes = std::slice::from_raw_parts((*c).nodes, (*c).node_count);
        assert_eq!(text((*c).node_list), "a,b");
        assert_eq!(text(nodes[1].name), "bc");
        assert_eq!(nodes[0].state, 2);
        smd_free_allocation(c);
    }
}
