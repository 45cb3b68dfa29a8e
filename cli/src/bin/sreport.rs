//! `sreport`: see `sluice_cli::sreport`.

fn main() {
    sluice_cli::cmdutil::run("sreport", sluice_cli::sreport::main);
}
