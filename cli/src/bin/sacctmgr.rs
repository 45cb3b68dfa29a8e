//! `sacctmgr`: Slurm's accounting manager command (see `sluice_cli::sacctmgr`).

fn main() {
    sluice_cli::cmdutil::run("sacctmgr", sluice_cli::sacctmgr::main);
}
