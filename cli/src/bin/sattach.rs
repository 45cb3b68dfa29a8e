//! `sattach`: Slurm's command of the same name (see `sluice_cli::sattach`).

fn main() {
    sluice_cli::cmdutil::run("sattach", sluice_cli::sattach::main);
}
