//! `scontrol show federation`: the local cluster's federation as Slurm's
//! `slurm_print_federation` prints it: a `Federation:` line, the `Self:` line, then one
//! `Sibling:` line per other member by name, labels padded to `strlen("Federation:")`.
//! Nothing is printed when the cluster is in no federation. The view comes from the
//! accounting daemon, which arbitrates the federation.

use sluice_wire::proto::{FedClusterRequest, FedMember, FederationView};

use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};

/// The label column's width.
const LABEL: usize = "Federation:".len();

fn address(m: &FedMember) -> String {
    // IPv6 addresses are printed in brackets, as Slurm does.
    let host = if m.control_host.contains(':') {
        format!("[{}]", m.control_host)
    } else {
        m.control_host.clone()
    };
    format!(
        "{}:{host}:{} ID:{} FedState:{} Features:{}",
        m.name,
        m.control_port,
        m.fed_id,
        m.fed_state_name,
        m.features.join(",")
    )
}

fn yes(b: bool) -> &'static str {
    if b { "Yes" } else { "No" }
}

/// The text of `scontrol show federation` for `view`.
pub fn render(view: &FederationView) -> String {
    if view.federation.is_empty() {
        return String::new();
    }
    let mut out = format!("{:<LABEL$} {}\n", "Federation:", view.federation);
    if let Some(me) = &view.self_ {
        out.push_str(&format!("{:<LABEL$} {}\n", "Self:", address(me)));
    }
    let mut siblings: Vec<&FedMember> = view.siblings.iter().collect();
    siblings.sort_by(|a, b| a.name.cmp(&b.name));
    for s in siblings {
        // A sibling connected to the arbiter both sends and receives, and is in sync.
        out.push_str(&format!(
            "{:<LABEL$} {} PersistConnSend/Recv:{}/{} Synced:{}\n",
            "Sibling:",
            address(s),
            yes(s.connected),
            yes(s.connected),
            yes(s.connected)
        ));
    }
    out
}

/// Fetches the local cluster's (`ClusterName`) view from the accounting daemon.
pub async fn fetch(conf: &SlurmConf) -> Result<FederationView, String> {
    let Some(cluster) = conf.cluster_name.clone() else {
        return Ok(FederationView::default());
    };
    let mut client = conf.connect_fed_arbiter().await.map_err(|e| match e {
        CliError::Connect { .. } => {
            format!("slurm_load_federation error: {CONNECT_FAILURE}")
        }
        other => format!("scontrol: error: {other}"),
    })?;
    client
        .get_federation_view(FedClusterRequest { cluster })
        .await
        .map(tonic::Response::into_inner)
        .map_err(|s| {
            format!(
                "slurm_load_federation error: {}",
                status_text(&s, Asker::Views)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str, id: u32, state: &str, features: &[&str], up: bool) -> FedMember {
        FedMember {
            name: name.into(),
            fed_id: id,
            fed_state_name: state.into(),
            features: features.iter().map(|f| f.to_string()).collect(),
            control_host: "127.0.0.1".into(),
            control_port: 6817 + id,
            connected: up,
            ..Default::default()
        }
    }

    #[test]
    fn self_then_siblings_by_name() {
        let view = FederationView {
            cluster: "c1".into(),
            federation: "fed1".into(),
            self_: Some(member("c1", 1, "ACTIVE", &["a", "b"], true)),
            siblings: vec![
                member("c3", 3, "DRAIN", &[], false),
                member("c2", 2, "ACTIVE", &["gpu"], true),
            ],
        };
        assert_eq!(
            render(&view),
            "Federation: fed1\n\
             Self:       c1:127.0.0.1:6818 ID:1 FedState:ACTIVE Features:a,b\n\
             Sibling:    c2:127.0.0.1:6819 ID:2 FedState:ACTIVE Features:gpu PersistConnSend/Recv:Yes/Yes Synced:Yes\n\
             Sibling:    c3:127.0.0.1:6820 ID:3 FedState:DRAIN Features: PersistConnSend/Recv:No/No Synced:No\n"
        );
    }

    #[test]
    fn nothing_outside_a_federation_and_ipv6_in_brackets() {
        assert_eq!(render(&FederationView::default()), "");
        let mut me = member("c1", 1, "ACTIVE", &[], true);
        me.control_host = "::1".into();
        let view = FederationView {
            federation: "f".into(),
            self_: Some(me),
            ..Default::default()
        };
        assert_eq!(
            render(&view),
            "Federation: f\nSelf:       c1:[::1]:6818 ID:1 FedState:ACTIVE Features:\n"
        );
    }
}
