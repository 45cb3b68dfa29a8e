//! Tells the tests whether they are built by root: tests that need root (switching users) are
//! compiled as ignored otherwise, so the test runner reports them as skipped, never as passed.
//! Tests are run by the user who builds them; a root-built binary run by another user fails the
//! test with the operating system's error rather than passing it.

use std::os::unix::fs::MetadataExt;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(test_as_root)");
    println!("cargo::rerun-if-env-changed=USER");
    println!("cargo::rerun-if-env-changed=SUDO_USER");
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if root {
        println!("cargo::rustc-cfg=test_as_root");
    }
}
