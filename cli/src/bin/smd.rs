//! `smd`: the failure management command (see `sluice_cli::smd`).

fn main() {
    sluice_cli::cmdutil::run("smd", sluice_cli::smd::main);
}
