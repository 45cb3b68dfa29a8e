//! `sstat`: see `sluice_cli::sstat`.

fn main() {
    sluice_cli::cmdutil::run("sstat", sluice_cli::sstat::main);
}
