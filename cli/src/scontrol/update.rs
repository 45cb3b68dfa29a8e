//! `scontrol update` and the job actions (`hold`, `release`, `requeue`, ...): turning words
//! into requests, with Slurm's messages for what is refused before anything is sent.

use sluice_wire::proto::{
    EnvVar, JobAction, SuspendExcKey, UpdateJobRequest, UpdateMode, UpdateNodeRequest,
    UpdatePartitionRequest, UpdateSuspendExcRequest,
};

use crate::words::is_keyword;

/// What an `update` line asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// `update jobid=N key=value ...`.
    Job(UpdateJobRequest),
    /// `update nodename=X state=... reason=...`.
    Node(UpdateNodeRequest),
    /// `update partitionname=X state=UP|DOWN|DRAIN|INACTIVE`.
    Partition(UpdatePartitionRequest),
    /// `update SuspendExcNodes|SuspendExcParts|SuspendExcStates[+-]=value` (Slurm 23.02+).
    SuspendExc(UpdateSuspendExcRequest),
}

/// The node states `scontrol update` takes.
const NODE_STATES: &[&str] = &[
    "DRAIN",
    "DOWN",
    "RESUME",
    "UNDRAIN",
    "IDLE",
    "POWER_DOWN",
    "POWER_UP",
    "POWER_DOWN_ASAP",
    "POWER_DOWN_FORCE",
];

/// Parses the words after `update`; the error is the text for stderr.
pub fn parse_update(words: &[String]) -> Result<Update, String> {
    let pairs: Vec<(String, String)> = words
        .iter()
        .map(|w| match w.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (w.clone(), String::new()),
        })
        .collect();
    let is = |k: &str, names: &[&str]| names.iter().any(|n| k.eq_ignore_ascii_case(n));
    if pairs
        .iter()
        .any(|(k, _)| is(k, &["JobId", "Job", "JobName"]))
    {
        let mut req = UpdateJobRequest::default();
        for (k, v) in pairs {
            if is(&k, &["JobId", "Job"]) {
                req.jobs
                    .extend(v.split(',').filter(|s| !s.is_empty()).map(String::from));
            } else {
                // Federation: the canonical names the controller matches.
                let name = if is(&k, &["Name"]) {
                    "JobName".to_string()
                } else if is(&k, &["Clusters", "Cluster"]) {
                    "Clusters".to_string()
                } else if is(&k, &["ClusterFeatures", "ClusterFeature"]) {
                    "ClusterFeatures".to_string()
                } else {
                    k
                };
                req.settings.push(EnvVar { name, value: v });
            }
        }
        if req.settings.is_empty() {
            return Err("No changes specified".into());
        }
        return Ok(Update::Job(req));
    }
    if pairs.iter().any(|(k, _)| is(k, &["NodeName", "Node"])) {
        let mut req = UpdateNodeRequest::default();
        let mut changes = 0;
        for (k, v) in pairs {
            if is(&k, &["NodeName", "Node"]) {
                req.nodes.push(v);
            } else if is(&k, &["State"]) {
                let st = NODE_STATES.iter().find(|s| s.eq_ignore_ascii_case(&v)).ok_or_else(|| {
                    format!(
                        "Invalid input: State={v}\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN"
                    )
                })?;
                req.state = Some((*st).to_string());
                changes += 1;
            } else if is(&k, &["Reason"]) {
                req.reason = Some(v);
                changes += 1;
            } else if is(&k, &["NodeAddr"]) {
                req.node_addr = Some(v);
                changes += 1;
            } else if is(&k, &["NodeHostName"]) {
                req.node_hostname = Some(v);
                changes += 1;
            } else if is(&k, &["Weight"]) {
                let w = v
                    .parse()
                    .map_err(|_| format!("Invalid weight: {v}\nRequest aborted"))?;
                req.weight = Some(w);
                changes += 1;
            } else if is(&k, &["Features", "AvailableFeatures", "ActiveFeatures"]) {
                req.features = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                changes += 1;
            } else {
                return Err(format!(
                    "Update of this parameter is not supported: {k}={v}\nRequest aborted"
                ));
            }
        }
        let needs_reason = matches!(req.state.as_deref(), Some("DRAIN" | "DOWN"));
        if needs_reason && req.reason.as_deref().is_none_or(str::is_empty) {
            return Err(
                "You must specify a reason when DOWNING or DRAINING a node. Request denied".into(),
            );
        }
        if changes == 0 {
            return Err("No changes specified".into());
        }
        return Ok(Update::Node(req));
    }
    if pairs
        .iter()
        .any(|(k, _)| is(k, &["PartitionName", "Partition"]))
    {
        let mut req = UpdatePartitionRequest::default();
        let mut changes = 0;
        for (k, v) in pairs {
            if is(&k, &["PartitionName", "Partition"]) {
                req.partition = v;
            } else if is(&k, &["State"]) {
                let st = ["UP", "DOWN", "DRAIN", "INACTIVE"]
                    .into_iter()
                    .find(|s| s.eq_ignore_ascii_case(&v))
                    .ok_or_else(|| {
                        format!(
                            "Invalid input: State={v}\nRequest aborted\nAcceptable State values are UP, DOWN, DRAIN and INACTIVE"
                        )
                    })?;
                req.state = st.to_string();
                changes += 1;
            } else {
                return Err(format!(
                    "Update of this parameter is not supported: {k}={v}\nRequest aborted"
                ));
            }
        }
        if changes == 0 {
            return Err("No changes specified".into());
        }
        return Ok(Update::Partition(req));
    }
    if let Some(req) = suspend_exc(words)? {
        return Ok(Update::SuspendExc(req));
    }
    Err("No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", \"Reservation=<reservation_name>\", or \"JobId\"".into())
}

/// The exclusion a key names: Slurm takes any spelling from 11 characters on
/// (`SuspendExcN...`), case-insensitively.
fn suspend_exc_key(key: &str) -> Option<SuspendExcKey> {
    [
        ("SuspendExcNodes", SuspendExcKey::Nodes),
        ("SuspendExcParts", SuspendExcKey::Parts),
        ("SuspendExcStates", SuspendExcKey::States),
    ]
    .into_iter()
    .find(|(name, _)| is_keyword(key, name, 11))
    .map(|(_, k)| k)
}

/// A word's key without its `+`/`-` and the update mode that sign asks for.
fn key_and_mode(word: &str) -> (&str, UpdateMode) {
    let key = word.split_once('=').map_or(word, |(k, _)| k);
    match (key.strip_suffix('+'), key.strip_suffix('-')) {
        (Some(k), _) => (k, UpdateMode::Add),
        (None, Some(k)) => (k, UpdateMode::Remove),
        (None, None) => (key, UpdateMode::Set),
    }
}

/// `SuspendExcNodes=v`, `SuspendExcParts+=v`, `SuspendExcStates-=v`: one such word per line;
/// `None` when the line names no exclusion.
fn suspend_exc(words: &[String]) -> Result<Option<UpdateSuspendExcRequest>, String> {
    if !words
        .iter()
        .any(|w| suspend_exc_key(key_and_mode(w).0).is_some())
    {
        return Ok(None);
    }
    let [word] = words else {
        let other = words
            .iter()
            .find(|w| suspend_exc_key(key_and_mode(w).0).is_none())
            .unwrap_or(&words[0]);
        return Err(format!(
            "Update of this parameter is not supported: {other}\nRequest aborted"
        ));
    };
    let (name, mode) = key_and_mode(word);
    let (Some(key), Some((_, value))) = (suspend_exc_key(name), word.split_once('=')) else {
        return Err(format!("Invalid input: {word}\nRequest aborted"));
    };
    if key == SuspendExcKey::Nodes && mode != UpdateMode::Set && value.contains(':') {
        // Slurm's client refuses this before sending anything.
        return Err(
            "scontrol: error: Append and remove from SuspendExcNodes with ':' is not \
                    supported. Please use direct assignment instead.\n\
                    slurm_update error: Invalid node name specified"
                .into(),
        );
    }
    Ok(Some(UpdateSuspendExcRequest {
        key: key as i32,
        mode: mode as i32,
        value: value.to_string(),
    }))
}

/// The job action a command word names (`hold`, `uhold`, `release`, ...), Slurm's prefixes.
pub fn job_action(word: &str) -> Option<JobAction> {
    let w = word.to_ascii_lowercase();
    if is_keyword(&w, "requeuehold", 8) {
        Some(JobAction::RequeueHold)
    } else if is_keyword(&w, "requeue", 3) {
        Some(JobAction::Requeue)
    } else if w.starts_with("uhold") || w.starts_with("holdu") {
        Some(JobAction::Uhold)
    } else if w.starts_with("hold") {
        Some(JobAction::Hold)
    } else if is_keyword(&w, "release", 3) {
        Some(JobAction::Release)
    } else if is_keyword(&w, "suspend", 2) {
        Some(JobAction::Suspend)
    } else if is_keyword(&w, "resume", 3) {
        Some(JobAction::Resume)
    } else {
        None
    }
}

/// The job ids of an action's words: `12`, `12_3`, `jobid=12`, `12,13`.
pub fn action_jobs(words: &[String]) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            let lower = w.to_ascii_lowercase();
            if lower.starts_with("jobid=") {
                w[6..].to_string()
            } else if lower.starts_with("job=") {
                w[4..].to_string()
            } else {
                w.clone()
            }
        })
        .flat_map(|w| {
            w.split(',')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn job_updates_carry_ids_and_settings() {
        let Update::Job(r) = parse_update(&words("JobId=5,6 TimeLimit=10 name=x")).unwrap() else {
            panic!("not a job update")
        };
        assert_eq!(r.jobs, vec!["5".to_string(), "6".to_string()]);
        assert_eq!(
            r.settings,
            vec![
                EnvVar {
                    name: "TimeLimit".into(),
                    value: "10".into()
                },
                EnvVar {
                    name: "JobName".into(),
                    value: "x".into()
                }
            ]
        );
        assert_eq!(
            parse_update(&words("jobid=5")).unwrap_err(),
            "No changes specified"
        );
    }

    #[test]
    fn node_updates_need_a_reason_to_drain() {
        assert_eq!(
            parse_update(&words("NodeName=n1 State=DRAIN")).unwrap_err(),
            "You must specify a reason when DOWNING or DRAINING a node. Request denied"
        );
        let Update::Node(r) = parse_update(&[
            "nodename=n[1-2]".into(),
            "state=drain".into(),
            "reason=disk bad".into(),
        ])
        .unwrap() else {
            panic!("not a node update")
        };
        assert_eq!(
            (r.state.as_deref(), r.reason.as_deref()),
            (Some("DRAIN"), Some("disk bad"))
        );
        assert!(
            parse_update(&words("NodeName=n1 State=bogus"))
                .unwrap_err()
                .starts_with("Invalid input: State=bogus\nRequest aborted")
        );
        assert!(
            parse_update(&words("NodeName=n1 Color=red"))
                .unwrap_err()
                .contains("not supported")
        );
        assert!(
            parse_update(&words("foo=bar"))
                .unwrap_err()
                .starts_with("No valid entity")
        );
    }

    fn exc(line: &str) -> UpdateSuspendExcRequest {
        match parse_update(&words(line)) {
            Ok(Update::SuspendExc(r)) => r,
            other => panic!("{line}: not an exclusion update: {other:?}"),
        }
    }

    #[test]
    fn partition_updates_take_slurms_four_states() {
        let Update::Partition(r) = parse_update(&words("PartitionName=debug State=down")).unwrap()
        else {
            panic!("not a partition update")
        };
        assert_eq!((r.partition.as_str(), r.state.as_str()), ("debug", "DOWN"));
        assert_eq!(
            parse_update(&words("PartitionName=debug State=busy")).unwrap_err(),
            "Invalid input: State=busy\nRequest aborted\nAcceptable State values are UP, DOWN, DRAIN and INACTIVE"
        );
        assert_eq!(
            parse_update(&words("PartitionName=debug")).unwrap_err(),
            "No changes specified"
        );
        assert!(
            parse_update(&words("PartitionName=debug MaxTime=5"))
                .unwrap_err()
                .starts_with("Update of this parameter is not supported: MaxTime=5")
        );
    }

    #[test]
    fn suspend_exc_updates_take_slurms_keys_and_signs() {
        let r = exc("SuspendExcNodes=n[1-4]:2,n9");
        assert_eq!(
            (r.key, r.mode, r.value.as_str()),
            (
                SuspendExcKey::Nodes as i32,
                UpdateMode::Set as i32,
                "n[1-4]:2,n9"
            )
        );
        let r = exc("suspendexcparts+=debug");
        assert_eq!(
            (r.key, r.mode),
            (SuspendExcKey::Parts as i32, UpdateMode::Add as i32)
        );
        // Any spelling from 11 characters on, as Slurm matches it.
        let r = exc("SuspendExcS-=down");
        assert_eq!(
            (r.key, r.mode),
            (SuspendExcKey::States as i32, UpdateMode::Remove as i32)
        );
        assert_eq!(exc("SuspendExcNodes=").value, "");
        assert!(
            parse_update(&words("SuspendExcNodes+=n[1-4]:2"))
                .unwrap_err()
                .contains("Append and remove from SuspendExcNodes with ':' is not supported")
        );
        assert!(
            parse_update(&words("SuspendExcNodes=n1 Weight=2"))
                .unwrap_err()
                .starts_with("Update of this parameter is not supported: Weight=2")
        );
        assert!(
            parse_update(&words("SuspendExc=n1"))
                .unwrap_err()
                .starts_with("No valid entity")
        );
    }

    #[test]
    fn actions_match_slurm_prefixes() {
        assert_eq!(job_action("hold"), Some(JobAction::Hold));
        assert_eq!(job_action("uhold"), Some(JobAction::Uhold));
        assert_eq!(job_action("rel"), Some(JobAction::Release));
        assert_eq!(job_action("requeuehold"), Some(JobAction::RequeueHold));
        assert_eq!(job_action("requeue"), Some(JobAction::Requeue));
        assert_eq!(job_action("suspend"), Some(JobAction::Suspend));
        assert_eq!(job_action("resume"), Some(JobAction::Resume));
        assert_eq!(job_action("show"), None);
        assert_eq!(action_jobs(&words("jobid=5 6,7_2")), vec!["5", "6", "7_2"]);
    }
}
