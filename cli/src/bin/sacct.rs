//! `sacct`: see `sluice_cli::sacct`.

fn main() {
    sluice_cli::cmdutil::run("sacct", sluice_cli::sacct::main);
}
