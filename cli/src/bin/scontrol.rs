//! `scontrol`: see `sluice_cli::scontrol`.

fn main() {
    std::process::exit(sluice_cli::scontrol::main());
}
