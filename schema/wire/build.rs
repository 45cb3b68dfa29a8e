//! Compiles the wire protocol (one `.proto` file per service under `proto/`) with protox (pure
//! Rust), so no system `protoc` is needed, and links libmunge (found by pkg-config).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("proto")?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "proto"));
    files.sort();
    let fds = protox::compile(&files, ["proto"])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    println!("cargo:rerun-if-changed=proto");
    // libmunge, for `AuthType=auth/munge` (Debian: libmunge-dev; `.ci/deps` installs it).
    pkg_config::Config::new().probe("munge")?;
    Ok(())
}
