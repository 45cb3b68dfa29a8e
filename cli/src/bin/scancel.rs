//! `scancel`: Slurm's command of the same name (see `sluice_cli::scancel`).

fn main() {
    std::process::exit(sluice_cli::scancel::main());
}
