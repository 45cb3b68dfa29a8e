//! `salloc`: Slurm's command of the same name (see `sluice_cli::salloc`).

fn main() {
    sluice_cli::cmdutil::run("salloc", sluice_cli::salloc::main);
}
