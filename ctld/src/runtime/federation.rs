//! The runtime's port to a federation client. The runtime does not know how the federation is
//! reached: with a dbd it hands out one [`FederationPort`] (what the core asks, after each
//! commit, and a handle to feed the answers back), and holds the [`FederationClient`] that the
//! server's wiring connected to it, so that the client stops before the core does.

use super::CoreHandle;
use crate::core::SimTime;
use crate::core::federation::FedRequest;
use tokio::sync::mpsc::UnboundedReceiver;

/// What a federation client gets from the runtime.
pub struct FederationPort {
    /// What the core asks the federation (the start lock, run ends, offers, withdrawals), sent
    /// once the batch that asked is committed.
    pub requests: UnboundedReceiver<FedRequest>,
    /// The core, for the answers.
    pub core: CoreHandle,
    /// When this controller started (its restore time): a new value releases the start locks
    /// an earlier process held.
    pub started: SimTime,
    /// `host:port` where this controller is reached (registered, shown to siblings).
    pub control_addr: String,
}

impl FederationPort {
    /// The host and port of [`FederationPort::control_addr`] (port 0 when missing).
    pub fn control_host_port(&self) -> (String, u32) {
        match self.control_addr.rsplit_once(':') {
            Some((host, port)) => (host.to_string(), port.parse().unwrap_or(0)),
            None => (self.control_addr.clone(), 0),
        }
    }
}

/// A running federation client, as the runtime holds it.
pub trait FederationClient: Send {
    /// Stops the client: nothing it asks may reach a stopping core.
    fn stop(&mut self);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(addr: &str) -> FederationPort {
        let (_, requests) = tokio::sync::mpsc::unbounded_channel();
        let (tx, _) = std::sync::mpsc::channel();
        FederationPort {
            requests,
            core: CoreHandle { tx },
            started: SimTime::from_secs(1),
            control_addr: addr.to_string(),
        }
    }

    #[test]
    fn control_address_splits_into_host_and_port() {
        assert_eq!(
            port("ctl1:6817").control_host_port(),
            ("ctl1".to_string(), 6817)
        );
        assert_eq!(port("ctl1").control_host_port(), ("ctl1".to_string(), 0));
        assert_eq!(port("ctl1:x").control_host_port(), ("ctl1".to_string(), 0));
    }
}
