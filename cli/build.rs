//! Links the commands' unwinder statically, as GCC's `-static-libgcc` does (rustc has no such
//! switch: on `*-linux-gnu` it always asks for `-lgcc_s`).
//!
//! Why: every command is a short process, and loading `libgcc_s.so.1` runs its CPU-model probe
//! (`__cpu_indicator_init`, several `cpuid` instructions) before `main`. Where `cpuid` traps to
//! the hypervisor (measured ~28 us each on our machines) that probe alone was 0.1-0.2 ms of a
//! ~2 ms command. `libgcc_eh.a` holds the same unwinder without the probe: a directory holding
//! it under the name `libgcc_s.a`, searched before the system's, makes the linker take it. A
//! toolchain without `libgcc_eh.a` (or a `crt-static` build, which links it already) keeps the
//! default.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    let target = std::env::var("TARGET").unwrap_or_default();
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|f| f.split(',').any(|x| x == "crt-static"));
    if !target.ends_with("-linux-gnu") || crt_static {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let Ok(out) = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    // Without the library the compiler echoes the bare name back.
    let eh = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !eh.is_absolute() || !eh.is_file() {
        return;
    }
    let Some(out_dir) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let dir = PathBuf::from(out_dir).join("static-libgcc");
    let lib = dir.join("libgcc_s.a");
    if std::fs::create_dir_all(&dir).is_err() || std::fs::copy(&eh, &lib).is_err() {
        return;
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
}
