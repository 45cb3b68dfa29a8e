//! `scancel`: Slurm's command of the same name (see `sluice_cli::scancel`).

fn main() {
    sluice_cli::cmdutil::run("scancel", sluice_cli::scancel::main);
}
