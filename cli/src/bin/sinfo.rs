//! `sinfo`: see `sluice_cli::sinfo`.

fn main() {
    std::process::exit(sluice_cli::sinfo::main());
}
