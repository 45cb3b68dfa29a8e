//! `sluice`: starts and stops a local federation (`sluice up`, `sluice down`) and measures it
//! (`sluice bench`), soaks it under faults (`sluice soak`), and loads or writes workload traces (`sluice import swf`, `sluice gen swf`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use sluice_tool::bench::{self, BenchArgs};
use sluice_tool::soak::{self, SoakArgs};
use sluice_tool::swf::{self, GenArgs, ImportArgs};
use sluice_tool::up::{self, DownArgs, UpArgs};

/// Command line of `sluice`.
#[derive(Debug, Parser)]
#[command(
    name = "sluice",
    version,
    about = "Sluice: a Slurm-compatible workload manager"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start a local federation in a directory (configs, key, database, daemons on loopback).
    Up(UpArgs),
    /// Stop the daemons a `sluice up` started in a directory.
    Down(DownArgs),
    /// Measure Sluice against its speed targets on daemons started in a temporary directory.
    Bench(BenchArgs),
    /// Inject faults into a local site under a stream of jobs and check every job ended once, with its true exit code.
    Soak(SoakArgs),
    /// Load a workload trace into the accounting database as finished jobs.
    Import(ImportArgs),
    /// Write a synthetic workload trace.
    Gen(GenArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("sluice: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result: Result<(), Box<dyn std::error::Error>> = runtime.block_on(async {
        match &cli.command {
            Command::Up(args) => up::up(args).await.map_err(Into::into),
            Command::Down(args) => up::down(args).await.map_err(Into::into),
            Command::Bench(args) => bench::run(args).await.map_err(Into::into),
            Command::Soak(args) => soak::run(args).map_err(Into::into),
            Command::Import(args) => swf::run_import(args).await.map_err(Into::into),
            Command::Gen(args) => swf::run_gen(args).map_err(Into::into),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sluice: error: {e}");
            ExitCode::FAILURE
        }
    }
}
