//! `sacctmgr`: Slurm's accounting manager command (see `sluice_cli::sacctmgr`).

fn main() {
    std::process::exit(sluice_cli::sacctmgr::main());
}
