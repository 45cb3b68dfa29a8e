//! `sprio`: see `sluice_cli::sprio`.

fn main() {
    sluice_cli::cmdutil::run("sprio", sluice_cli::sprio::main);
}
