//! `sacct`: see `sluice_cli::sacct`.

fn main() {
    std::process::exit(sluice_cli::sacct::main());
}
