//! `scontrol reconfigure` on the running controller: `slurm.conf` is read again from the path
//! the controller started with and fully validated off the core's thread (a bad file is an
//! error naming file, line and key, and nothing changes), the `AllowGroups` names are resolved
//! there too (the system's group database may be slow), then the core applies it in one
//! request ([`on_reconfigure`]). The power save programs follow at the end of that batch.

use super::{CallError, CoreHandle};
use crate::conf::CtldConf;
use crate::core::{Caller, on_reconfigure};
use crate::error::CtldError;
use std::collections::HashMap;

/// Re-reads and applies `slurm.conf` for `caller`. The outer error: the runtime stopped or
/// could not save the change; the inner one: why nothing was applied.
pub async fn reconfigure(
    core: &CoreHandle,
    caller: Caller,
) -> Result<Result<(), CtldError>, CallError> {
    if !caller.admin {
        return Ok(Err(CtldError::AccessDenied));
    }
    let path = core.query(|cx| cx.core.conf().path.clone()).await?;
    let read = tokio::task::spawn_blocking(move || {
        let (conf, warnings) = CtldConf::load(&path)?;
        let groups: HashMap<String, u32> = conf
            .partitions
            .iter()
            .flat_map(|p| p.allow_groups.iter().flatten())
            .filter_map(|g| super::core_loop::group_id(g).map(|gid| (g.clone(), gid)))
            .collect();
        Ok::<_, CtldError>((conf, warnings, groups))
    })
    .await;
    let (conf, warnings, groups) = match read {
        Ok(Ok(read)) => read,
        Ok(Err(e)) => return Ok(Err(e)),
        // The reading task panicked or was cancelled: the runtime is going away.
        Err(_) => return Err(CallError::Gone),
    };
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let path = conf.path.display().to_string();
    let result = core
        .call(move |cx| {
            on_reconfigure(cx.core, caller, conf, &|g| groups.get(g).copied())?;
            // The configuration's partition states replace those `scontrol update` set.
            crate::core::Outbox::save(cx.out, crate::core::SaveHint::Partitions);
            Ok(())
        })
        .await?;
    match &result {
        Ok(()) => tracing::info!("reconfigured from {path}"),
        Err(e) => tracing::warn!("reconfigure from {path} refused: {e}"),
    }
    Ok(result)
}
