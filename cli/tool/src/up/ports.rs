//! Free loopback ports for the daemons of a new directory, chosen once and written into the
//! configuration files.

use std::net::TcpListener;

use super::UpError;

/// Ports below the kernel's ephemeral range when `/proc` does not say where it starts.
const EPHEMERAL_START: u16 = 32768;
/// The lowest port `up` picks.
const LOWEST_PORT: u16 = 10000;
/// Random candidates tried before falling back to ports the kernel picks.
const CANDIDATES: usize = 1000;

/// `n` distinct loopback ports nothing listens on right now, chosen once per directory.
///
/// They are picked at random below the kernel's ephemeral range, where outgoing connections
/// take their source ports: a port from that range, free now, could be some connection's
/// source port by the time (or the next boot) its daemon binds it. All are held while
/// choosing, so they differ.
pub fn free_ports(n: usize) -> Result<Vec<u16>, UpError> {
    let err = |source| UpError::NoPort { source };
    let top = ephemeral_start().max(LOWEST_PORT + 1);
    let mut held: Vec<TcpListener> = Vec::with_capacity(n);
    let mut random = RandomPorts::new(LOWEST_PORT, top);
    for _ in 0..CANDIDATES {
        if held.len() == n {
            break;
        }
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", random.next_port())) {
            held.push(listener);
        }
    }
    while held.len() < n {
        held.push(TcpListener::bind("127.0.0.1:0").map_err(err)?);
    }
    held.iter()
        .map(|l| l.local_addr().map(|a| a.port()).map_err(err))
        .collect()
}

/// Where the kernel's ephemeral port range starts (`ip_local_port_range`).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(EPHEMERAL_START)
}

/// Pseudo-random ports in `low..high`, seeded differently in every process.
struct RandomPorts {
    state: u64,
    low: u16,
    span: u64,
}

impl RandomPorts {
    fn new(low: u16, high: u16) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut seed = std::collections::hash_map::RandomState::new().build_hasher();
        seed.write_u32(std::process::id());
        Self {
            state: seed.finish() | 1,
            low,
            span: u64::from(high.saturating_sub(low).max(1)),
        }
    }

    /// xorshift64*: plenty for spreading ports.
    fn next_port(&mut self) -> u16 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let r = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        self.low + u16::try_from((r >> 32) % self.span).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct_and_below_the_ephemeral_range() {
        let ports = free_ports(50).unwrap();
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 50);
        let top = ephemeral_start();
        assert!(
            ports.iter().all(|p| (LOWEST_PORT..top).contains(p)),
            "{ports:?}"
        );
        let mut random = RandomPorts::new(10, 20);
        assert!(
            (0..1000)
                .map(|_| random.next_port())
                .all(|p| (10..20).contains(&p))
        );
    }
}
