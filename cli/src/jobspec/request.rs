//! Who submits, and the [`SubmitJobRequest`] built from the options.

use std::path::Path;

use nix::unistd::{Gid, User, getgid, getgroups, getuid};
use sluice_wire::proto::{JobShare, JobSignalSpec, SubmitJobRequest};

use super::JobOpts;

/// The submitting user and place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitter {
    /// Login name.
    pub user: String,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Every group the user is in (for `AllowGroups`).
    pub groups: Vec<u32>,
    /// This host's name (`SLURM_SUBMIT_HOST`).
    pub host: String,
    /// The current directory (`SLURM_SUBMIT_DIR`, the default working directory).
    pub cwd: String,
}

impl Submitter {
    /// The user running this process, on this host, in its current directory.
    pub fn current() -> Self {
        let uid = getuid();
        let gid = getgid();
        let user = User::from_uid(uid)
            .ok()
            .flatten()
            .map_or_else(|| uid.as_raw().to_string(), |u| u.name);
        let mut groups: Vec<u32> = getgroups()
            .unwrap_or_default()
            .into_iter()
            .map(Gid::as_raw)
            .collect();
        if !groups.contains(&gid.as_raw()) {
            groups.push(gid.as_raw());
        }
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        let cwd = std::env::current_dir()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "/".to_string());
        Self {
            user,
            uid: uid.as_raw(),
            gid: gid.as_raw(),
            groups,
            host,
            cwd,
        }
    }
}

/// An absolute working directory: `-D` relative to the submit directory, else the latter.
pub fn workdir(chdir: Option<&str>, cwd: &str) -> String {
    match chdir {
        Some(dir) if Path::new(dir).is_absolute() => dir.to_string(),
        Some(dir) => Path::new(cwd).join(dir).display().to_string(),
        None => cwd.to_string(),
    }
}

impl JobOpts {
    /// The request for these options. `name` is the job's name when `-J` was not given;
    /// `script` is the batch script ("" for srun); `environ` is the submitting environment.
    pub fn to_request(
        &self,
        name: &str,
        script: String,
        who: &Submitter,
        environ: &[(String, String)],
    ) -> SubmitJobRequest {
        SubmitJobRequest {
            name: self.job_name.clone().unwrap_or_else(|| name.to_string()),
            partition: self.partition.clone(),
            min_nodes: self.nodes.map(|n| n.min),
            max_nodes: self.nodes.map(|n| n.max),
            ntasks: self.ntasks,
            cpus_per_task: self.cpus_per_task,
            mem_mb: self.mem_mb,
            time_limit: self.time.clone(),
            constraint: self.constraint.clone(),
            dependency: self.dependency.clone(),
            array: self.array.clone(),
            hold: self.hold,
            requeue: self.requeue,
            no_kill: self.no_kill,
            share: self.share.unwrap_or(JobShare::Unset).into(),
            script,
            workdir: workdir(self.chdir.as_deref(), &who.cwd),
            env: self.export().apply(environ),
            stdout: self.output.clone(),
            stderr: self.error.clone(),
            account: self.account.clone().unwrap_or_default(),
            comment: self.comment.clone().unwrap_or_default(),
            submit_host: who.host.clone(),
            gid: who.gid,
            groups: who.groups.clone(),
            user: who.user.clone(),
            clusters: self
                .clusters
                .as_deref()
                .map(|c| {
                    c.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            cluster_constraint: self.cluster_constraint.clone().unwrap_or_default(),
            ntasks_per_node: self.ntasks_per_node,
            mincpus: self.mincpus,
            nodelist: self.nodelist.join(","),
            exclude: self.exclude.join(","),
            begin: self.begin.unwrap_or(0),
            nice: self.nice,
            open_append: self.open_append,
            wckey: self.wckey.clone().unwrap_or_default(),
            qos: self.qos.clone().unwrap_or_default(),
            deadline: self.deadline.unwrap_or(0),
            mail_type: self.mail_type.clone().unwrap_or_default(),
            mail_user: self.mail_user.clone().unwrap_or_default(),
            kill_invalid_dep: self.kill_invalid_dep,
            priority: self.priority,
            signal: self.signal.map(|s| JobSignalSpec {
                signal: s.signal,
                before_secs: s.before_secs,
                batch_only: s.batch_only,
            }),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobspec::Opt;

    fn who() -> Submitter {
        Submitter {
            user: "alice".into(),
            uid: 1000,
            gid: 100,
            groups: vec![100, 27],
            host: "login1".into(),
            cwd: "/home/alice/run".into(),
        }
    }

    #[test]
    fn options_map_onto_the_request() {
        let mut o = JobOpts::default();
        for (opt, v) in [
            (Opt::Nodes, "2-3"),
            (Opt::Ntasks, "4"),
            (Opt::Mem, "1G"),
            (Opt::Time, "1:00:00"),
            (Opt::Chdir, "sub"),
            (Opt::Export, "NONE,A=1"),
            (Opt::Clusters, "c1,c2"),
            (Opt::ClusterConstraint, "!highmem"),
        ] {
            o.apply(opt, Some(v.into())).unwrap();
        }
        let env = vec![("PATH".to_string(), "/bin".to_string())];
        let r = o.to_request("job.sh", "#!/bin/sh\n".into(), &who(), &env);
        assert_eq!(r.name, "job.sh");
        assert_eq!(
            (r.min_nodes, r.max_nodes, r.ntasks),
            (Some(2), Some(3), Some(4))
        );
        assert_eq!(r.mem_mb, Some(1024));
        assert_eq!(r.time_limit.as_deref(), Some("1:00:00"));
        assert_eq!(r.workdir, "/home/alice/run/sub");
        assert_eq!(r.env.len(), 1);
        assert_eq!(
            (r.env[0].name.as_str(), r.env[0].value.as_str()),
            ("A", "1")
        );
        assert_eq!(r.clusters, vec!["c1", "c2"]);
        assert_eq!(r.cluster_constraint, "!highmem");
        assert_eq!(
            (r.user.as_str(), r.gid, r.submit_host.as_str()),
            ("alice", 100, "login1")
        );
    }

    #[test]
    fn absolute_workdir_is_kept() {
        assert_eq!(workdir(Some("/tmp"), "/home"), "/tmp");
        assert_eq!(workdir(None, "/home"), "/home");
    }
}
