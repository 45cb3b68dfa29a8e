//! `sbatch`: Slurm's command of the same name (see `sluice_cli::sbatch`).

fn main() {
    sluice_cli::cmdutil::run("sbatch", sluice_cli::sbatch::main);
}
