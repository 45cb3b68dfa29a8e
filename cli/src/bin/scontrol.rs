//! `scontrol`: see `sluice_cli::scontrol`.

fn main() {
    sluice_cli::cmdutil::run("scontrol", sluice_cli::scontrol::main);
}
