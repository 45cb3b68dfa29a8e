//! `srun`: Slurm's command of the same name (see `sluice_cli::srun`).

fn main() {
    sluice_cli::cmdutil::run("srun", sluice_cli::srun::main);
}
