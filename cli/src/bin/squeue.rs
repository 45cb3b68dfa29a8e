//! `squeue`: see `sluice_cli::squeue`.

fn main() {
    sluice_cli::cmdutil::run("squeue", sluice_cli::squeue::main);
}
