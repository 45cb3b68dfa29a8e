//! `squeue`: see `sluice_cli::squeue`.

fn main() {
    std::process::exit(sluice_cli::squeue::main());
}
