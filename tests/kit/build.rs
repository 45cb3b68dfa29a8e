//! Generates the fake servers: the wire protocol's services once more, server side only, with
//! every method answering `Unimplemented` unless a test overrides it. The messages are not
//! generated again: they are `sluice_wire::proto`'s.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from("../../schema/wire/proto");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "proto"));
    files.sort();
    let fds = protox::compile(&files, [&dir])?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .generate_default_stubs(true)
        .extern_path(".sluice.v1", "::sluice_wire::proto")
        .compile_fds(fds)?;
    println!("cargo:rerun-if-changed=../../schema/wire/proto");
    Ok(())
}
