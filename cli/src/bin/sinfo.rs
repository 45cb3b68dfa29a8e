//! `sinfo`: see `sluice_cli::sinfo`.

fn main() {
    sluice_cli::cmdutil::run("sinfo", sluice_cli::sinfo::main);
}
