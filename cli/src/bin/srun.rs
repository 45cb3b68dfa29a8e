//! `srun`: Slurm's command of the same name (see `sluice_cli::srun`).

fn main() {
    std::process::exit(sluice_cli::srun::main());
}
