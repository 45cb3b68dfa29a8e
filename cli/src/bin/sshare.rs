//! `sshare`: see `sluice_cli::sshare`.

fn main() {
    sluice_cli::cmdutil::run("sshare", sluice_cli::sshare::main);
}
