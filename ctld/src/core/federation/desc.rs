//! The description of a federated job that siblings recreate it from: the submission as the
//! user asked it (not as the origin resolved it, so each sibling applies its own default
//! partition and limits, as Slurm's `_prepare_submit_siblings` clears the defaulted values),
//! plus who submitted it and when. The dbd stores and forwards it as opaque bytes; only
//! controllers read it, as JSON.
//!
//! Dependencies and holds stay on the origin: a sibling copy has neither.

use super::super::jobs::{Job, LaunchSpec};
use super::super::request::{JobShare, PlaceOpts, SubmitRequest};
use crate::conf::TimeLimit;
use serde::{Deserialize, Serialize};

/// What the origin asked for, beyond what the job record keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Asked {
    /// `-p` was given.
    pub partition: bool,
    /// `-t` was given.
    pub time_limit: bool,
    /// `-N min-max`'s max, as given.
    pub max_nodes: Option<u32>,
}

impl Asked {
    /// What `req` asked for.
    pub fn of(req: &SubmitRequest) -> Self {
        Self {
            partition: req.partition.is_some(),
            time_limit: req.time_limit.is_some(),
            max_nodes: req.max_nodes,
        }
    }
}

/// A federated job's description, as siblings receive it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FedDesc {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub name: String,
    /// The partition asked for (`None`: the sibling's default).
    pub partition: Option<String>,
    pub min_nodes: u32,
    pub max_nodes: Option<u32>,
    pub ntasks: u32,
    pub cpus_per_task: u32,
    pub mem_per_node_mb: u64,
    pub constraint: Option<String>,
    /// Minutes asked for (`Some(0)`: no limit; `None`: the sibling partition's MaxTime).
    pub time_limit_min: Option<u32>,
    pub requeue: bool,
    /// `--no-kill` (absent from descriptions sent before it: not asked).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_kill: bool,
    /// `--oversubscribe`/`--exclusive` (absent from descriptions sent before them: neither).
    #[serde(skip_serializing_if = "JobShare::is_unset")]
    pub share: JobShare,
    /// `--ntasks-per-node`, `--mincpus`, `-w`, `-x`, `--begin`, `--nice`, `--signal`.
    #[serde(skip_serializing_if = "is_default_place")]
    pub place: PlaceOpts,
    /// The origin's submission time (seconds), kept by every copy.
    pub submit_time: u64,
    pub launch: LaunchSpec,
}

impl FedDesc {
    /// The description of `job` (of partition `partition`), submitted with `asked`.
    pub fn of(job: &Job, partition: &str, asked: &Asked, groups: &[u32]) -> Self {
        Self {
            uid: job.uid,
            gid: job.gid,
            groups: groups.to_vec(),
            name: job.name.clone(),
            partition: asked.partition.then(|| partition.to_string()),
            min_nodes: job.req.min_nodes,
            max_nodes: asked.max_nodes,
            ntasks: job.req.ntasks,
            cpus_per_task: job.req.cpus_per_task,
            mem_per_node_mb: job.req.mem_per_node_mb,
            constraint: job.req.constraint.clone(),
            time_limit_min: asked.time_limit.then_some(match job.req.time_limit {
                TimeLimit::Minutes(m) => m,
                TimeLimit::Unlimited => 0,
            }),
            requeue: job.requeue,
            no_kill: job.no_kill,
            share: job.req.share,
            place: job.req.place.clone(),
            submit_time: job.submit_time.secs(),
            launch: (*job.launch).clone(),
        }
    }

    /// The bytes the dbd carries.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A description from the dbd (`None` when unreadable).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// The submission a sibling makes of it: no dependency, no hold, no array.
    pub fn to_request(&self) -> SubmitRequest {
        SubmitRequest {
            uid: self.uid,
            gid: self.gid,
            groups: self.groups.clone(),
            name: self.name.clone(),
            partition: self.partition.clone(),
            min_nodes: Some(self.min_nodes),
            max_nodes: self.max_nodes,
            ntasks: Some(self.ntasks),
            cpus_per_task: Some(self.cpus_per_task),
            mem_per_node_mb: (self.mem_per_node_mb > 0).then_some(self.mem_per_node_mb),
            time_limit: self.time_limit_min.map(TimeLimit::Minutes),
            constraint: self.constraint.clone(),
            dependency: None,
            array: None,
            hold: false,
            requeue: Some(self.requeue),
            no_kill: self.no_kill,
            share: self.share,
            place: self.place.clone(),
            // The origin checked who may give a negative --nice.
            admin: true,
            // A sibling applies its own AllowGroups to the origin's groups (root's included).
            root_or_slurm_user: false,
            launch: self.launch.clone(),
        }
    }
}

fn is_default_place(p: &PlaceOpts) -> bool {
    *p == PlaceOpts::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_round_trips_and_drops_what_stays_on_the_origin() {
        let desc = FedDesc {
            uid: 1000,
            gid: 100,
            groups: vec![100, 5],
            name: "sim".into(),
            partition: None,
            min_nodes: 2,
            max_nodes: Some(4),
            ntasks: 4,
            cpus_per_task: 2,
            mem_per_node_mb: 0,
            constraint: Some("gpu".into()),
            time_limit_min: Some(0),
            requeue: false,
            no_kill: true,
            share: JobShare::Exclusive,
            place: PlaceOpts::default(),
            submit_time: 1_700_000_000,
            launch: LaunchSpec {
                script: "#!/bin/sh\necho hi\n".into(),
                ..LaunchSpec::default()
            },
        };
        let back = FedDesc::decode(&desc.encode()).unwrap();
        assert_eq!(back, desc);
        let req = back.to_request();
        assert_eq!(req.time_limit, Some(TimeLimit::Minutes(0)));
        assert_eq!((req.partition, req.mem_per_node_mb), (None, None));
        assert_eq!((req.dependency, req.array, req.hold), (None, None, false));
        assert_eq!(req.requeue, Some(false));
        assert!(req.no_kill, "--no-kill reaches the siblings");
        assert_eq!(req.share, JobShare::Exclusive);
        assert!(FedDesc::decode(b"not json").is_none());
        let older = FedDesc::decode(br#"{"uid":5,"name":"old"}"#).unwrap();
        assert_eq!(older.to_request().share, JobShare::Unset);
        assert!(!older.to_request().no_kill);
    }
}
