//! `sreport`: see `sluice_cli::sreport`.

fn main() {
    std::process::exit(sluice_cli::sreport::main());
}
