//! Loopback ports reserved across the test processes running at the same time (nextest runs
//! each test in its own process), so two clusters starting together never pick the same port:
//! a port is ours while `/tmp/sluice-test-ports/<port>` names our process.

use std::io::Write;
use std::path::PathBuf;

use sluice_tool::up::UpError;
use sluice_tool::up::ports::free_ports;

/// The reservations of one test cluster; released on drop.
#[derive(Debug, Default)]
pub struct Reserved(Vec<u16>);

fn dir() -> PathBuf {
    std::env::temp_dir().join("sluice-test-ports")
}

impl Reserved {
    /// Reserves `n` more free ports and returns them.
    pub fn take(&mut self, n: usize) -> Result<Vec<u16>, UpError> {
        let dir = dir();
        std::fs::create_dir_all(&dir).map_err(|source| UpError::Dir {
            path: dir.clone(),
            source,
        })?;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            for port in free_ports(n - got.len())? {
                if claim(port) {
                    got.push(port);
                    self.0.push(port);
                }
            }
        }
        Ok(got)
    }
}

/// Creates the reservation file of `port` unless a live process holds it.
fn claim(port: u16) -> bool {
    let path = dir().join(port.to_string());
    for _ in 0..2 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                let _ = writeln!(file, "{}", std::process::id());
                return true;
            }
            Err(_) => {
                let owner: Option<u32> = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
                let alive = owner.is_some_and(|pid| PathBuf::from(format!("/proc/{pid}")).exists());
                // A file being written (no pid yet) or held by a live test is not ours.
                if owner.is_none() || alive {
                    return false;
                }
                // Left by a test process that died: take it over.
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    false
}

impl Drop for Reserved {
    fn drop(&mut self) {
        for port in &self.0 {
            let _ = std::fs::remove_file(dir().join(port.to_string()));
        }
    }
}
