//! `sbatch`: Slurm's command of the same name (see `sluice_cli::sbatch`).

fn main() {
    std::process::exit(sluice_cli::sbatch::main());
}
