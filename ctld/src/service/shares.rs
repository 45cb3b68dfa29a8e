//! `sshare` (`ListShares`): the associations' fair-share numbers from the core
//! ([`crate::core::priority::shares`]), `PrivateData=usage` applied for the caller.

use super::ControllerService;
use crate::core::priority::shares::{self, ShareLine};
use sluice_wire::proto::{self, ListSharesReply, ListSharesRequest};
use tonic::{Request, Status};

/// `sshare`.
pub async fn list_shares(
    svc: &ControllerService,
    req: Request<ListSharesRequest>,
) -> Result<ListSharesReply, Status> {
    let caller = svc.caller(&req)?;
    let name = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(caller.uid))
        .ok()
        .flatten()
        .map(|u| u.name);
    let (cluster, lines) = svc
        .core
        .query(move |cx| {
            let lines = shares::lines(cx.core, caller, name.as_deref(), cx.now);
            (cx.core.conf().cluster_name.clone(), lines)
        })
        .await?;
    Ok(ListSharesReply {
        cluster,
        lines: lines.into_iter().map(line).collect(),
    })
}

fn line(l: ShareLine) -> proto::ShareLine {
    let r = l.row;
    proto::ShareLine {
        account: r.account,
        user: r.user,
        depth: u32::try_from(r.depth).unwrap_or(u32::MAX),
        shares: r.shares.map(|s| s.to_raw()),
        norm_shares: r.norm_shares,
        raw_usage: r.raw_usage,
        norm_usage: r.norm_usage,
        effective_usage: r.effective_usage,
        fairshare: r.fairshare,
        level_fs: r.level_fs,
        id: l.id,
        run_cpu_mins: l.run_cpu_mins,
    }
}
