//! What a usage sample's `/proc` scan costs (issue 14: the node daemon spent a third of its CPU
//! reading every process's `stat` at each sample). Times a scan for this process's group by a
//! scanner that knows nothing, which reads every process of the host as each sample did before
//! the scanner remembered groups, against the node's one scanner used again, as the samples of
//! all the node's tasks use it now. Run with
//! `cargo bench -p sluice-noded --bench proc_scan [-- SCANS]`.

use std::collections::HashSet;
use std::time::Instant;

use sluice_noded::acct::proc::Scanner;

fn main() {
    let scans: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000);
    let group = HashSet::from([nix::unistd::getpgrp().as_raw()]);
    let processes = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.parse::<u32>().is_ok())
                })
                .count()
        })
        .unwrap_or(0);
    let per_scan = |f: &mut dyn FnMut() -> usize| {
        let start = Instant::now();
        let mut found = 0;
        for _ in 0..scans {
            found += f();
        }
        assert!(found > 0, "this process is in its own group");
        start.elapsed().as_secs_f64() * 1e6 / f64::from(scans)
    };
    let cold = per_scan(&mut || Scanner::new("/proc").scan(&group, Instant::now()).len());
    let shared = Scanner::new("/proc");
    let warm = per_scan(&mut || shared.scan(&group, Instant::now()).len());
    println!(
        "{processes} processes on the host, {scans} scans each: every stat read {cold:.1} us, \
         the shared scanner {warm:.1} us per scan ({:.1}x)",
        cold / warm
    );
}
