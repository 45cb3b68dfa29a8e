//! Who submits, and the [`SubmitJobRequest`] built from the options.

use std::path::Path;

use nix::unistd::{Gid, Group, Uid, User, getgid, getgroups, getuid};
use sluice_wire::proto::{JobShare, JobSignalSpec, SubmitJobRequest};

use super::{JobOpts, OptError};

/// The job variable asking the batch host to load the user's login environment
/// (`--get-user-env`), as Slurm's sbatch sets it.
pub const GET_USER_ENV: &str = "SLURM_GET_USER_ENV";

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

/// The user `--uid` names (root only), whom the job is submitted for and runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// Their user id.
    pub uid: u32,
    /// Their primary group (the job's group unless `--gid` is given).
    pub gid: u32,
    /// Their login name.
    pub name: String,
}

impl RunAs {
    /// `--uid=user`: a login name or a user id, as Slurm's `uid_from_string`; only root may.
    pub fn of(value: &str) -> Result<Self, OptError> {
        if !getuid().is_root() {
            return Err(OptError::UidNotRoot);
        }
        let value = value.trim();
        let user = match value.parse::<u32>() {
            Ok(n) => User::from_uid(Uid::from_raw(n)),
            Err(_) => User::from_name(value),
        };
        let user = user.ok().flatten().ok_or(OptError::Uid)?;
        Ok(Self {
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            name: user.name,
        })
    }
}

/// `--gid=group`: a group name or id; only root may.
pub fn gid_of(value: &str) -> Result<u32, OptError> {
    if !getuid().is_root() {
        return Err(OptError::GidNotRoot);
    }
    let value = value.trim();
    let group = match value.parse::<u32>() {
        Ok(n) => Group::from_gid(Gid::from_raw(n)),
        Err(_) => Group::from_name(value),
    };
    group
        .ok()
        .flatten()
        .map(|g| g.gid.as_raw())
        .ok_or(OptError::Gid)
}

impl JobOpts {
    /// The environment the job gets: the `--export` selection, and the output variables of
    /// the socket, core and thread options (Slurm's commands set them for the job).
    fn job_env(&self, environ: &[(String, String)]) -> Vec<sluice_wire::proto::EnvVar> {
        // `--export-file` definitions join the submitting environment (overriding it), and
        // the `--export` selection applies to both: on Slurm 22.05, `--export=NONE` drops
        // them and `--export=NAME=v` overrides one of them.
        let mut merged;
        let environ = if self.export_file.is_empty() {
            environ
        } else {
            merged = environ.to_vec();
            for (name, value) in &self.export_file {
                merged.retain(|(n, _)| n != name);
                merged.push((name.clone(), value.clone()));
            }
            merged.as_slice()
        };
        let mut env = self.export().apply(environ);
        if self.get_user_env {
            env.retain(|e| e.name != GET_USER_ENV);
            env.push(sluice_wire::proto::EnvVar {
                name: GET_USER_ENV.to_string(),
                value: "1".to_string(),
            });
        }
        let topo = self
            .topo_vars()
            .into_iter()
            .map(|(n, v)| (n, v.to_string()));
        for (name, value) in topo.chain(self.placement_vars()) {
            env.retain(|e| e.name != name);
            env.push(sluice_wire::proto::EnvVar {
                name: name.to_string(),
                value,
            });
        }
        env
    }

    /// `--hint` once every source was applied (`cli`: the options given on the command
    /// line, `cpu_bind_type`: a `--cpu-bind` type was given there): dropped when
    /// `--ntasks-per-core`, `--threads-per-core` or a binding type takes its place, as
    /// Slurm's srun drops it; else its threads per core become the job's. Returns what the
    /// hint stands for, when it stays.
    pub fn settle_hint(
        &mut self,
        cli: &[super::Opt],
        cpu_bind_type: bool,
    ) -> Option<sluice_vocab::hint::HintEffect> {
        use super::Opt;
        let replaced = cpu_bind_type
            || cli
                .iter()
                .any(|o| matches!(o, Opt::NtasksPerCore | Opt::ThreadsPerCore));
        if replaced {
            self.hint = None;
        }
        let effect = self.hint.as_ref()?.effect();
        if let Some(t) = effect.threads_per_core {
            self.topo.threads_per_core = Some(t);
        }
        Some(effect)
    }

    /// `SLURM_DISTRIBUTION` (and `SLURM_DIST_PLANESIZE`), `SLURM_HINT` (and under
    /// `--hint=multithread` `SLURM_NTASKS_PER_CORE`), `SLURM_MEM_BIND` (as given, with
    /// `SLURM_MEM_BIND_VERBOSE`), `SLURM_CPU_FREQ_REQ`, `SLURM_ACCTG_FREQ` and
    /// `SLURM_OVERCOMMIT=1`, each when its option was given, as Slurm's sbatch and salloc set them: the job's steps read them back
    /// as options.
    pub fn placement_vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = Vec::new();
        if let Some(d) = &self.distribution {
            vars.extend(d.env());
        }
        if let Some(h) = &self.hint {
            vars.push(("SLURM_HINT", h.env_value()));
            if let (Some(n), None) = (h.effect().ntasks_per_core, self.topo.ntasks_per_core) {
                vars.push(("SLURM_NTASKS_PER_CORE", n.to_string()));
            }
        }
        if let Some(m) = &self.mem_bind {
            let verbose = sluice_vocab::mem_bind::MemBind::parse(m).is_ok_and(|b| b.verbose);
            vars.push(("SLURM_MEM_BIND", m.clone()));
            let verbosity = if verbose { "verbose" } else { "quiet" };
            vars.push(("SLURM_MEM_BIND_VERBOSE", verbosity.to_string()));
        }
        if let Some(f) = &self.cpu_freq {
            vars.push(("SLURM_CPU_FREQ_REQ", f.env_value()));
        }
        if let Some(a) = &self.acctg_freq {
            vars.push(("SLURM_ACCTG_FREQ", a.clone()));
        }
        if self.overcommit {
            vars.push(("SLURM_OVERCOMMIT", "1".to_string()));
        }
        vars
    }

    /// The `SLURM_RLIMIT_*` variables carrying this process's resource limits to the job's
    /// processes (see [`sluice_wire::rlimits`]): those `--propagate` names, flagged as asked,
    /// else `conf_default` (the configuration's `PropagateResourceLimits[Except]`, all of them
    /// by default).
    pub fn rlimit_env(&self, conf_default: &[&str]) -> Vec<sluice_wire::proto::EnvVar> {
        let (names, asked) = match &self.propagate {
            Some(names) => (names.as_slice(), true),
            None => (conf_default, false),
        };
        sluice_wire::rlimits::env_of(names, asked)
            .into_iter()
            .map(|(name, value)| sluice_wire::proto::EnvVar { name, value })
            .collect()
    }

    /// `SLURM_NTASKS_PER_CORE`, `SLURM_NTASKS_PER_SOCKET` and `SLURM_THREADS_PER_CORE`, each
    /// when its option was given.
    pub fn topo_vars(&self) -> Vec<(&'static str, u32)> {
        [
            ("SLURM_NTASKS_PER_CORE", self.topo.ntasks_per_core),
            ("SLURM_NTASKS_PER_SOCKET", self.topo.ntasks_per_socket),
            ("SLURM_THREADS_PER_CORE", self.topo.threads_per_core),
        ]
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| (name, v)))
        .collect()
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
            mem_per_cpu_mb: self.mem_per_cpu_mb,
            tmp_mb: self.tmp_mb,
            contiguous: self.contiguous,
            time_min: self.time_min.clone(),
            sockets_per_node: self.topo.sockets_per_node,
            cores_per_socket: self.topo.cores_per_socket,
            threads_per_core: self.topo.threads_per_core,
            ntasks_per_core: self.topo.ntasks_per_core,
            ntasks_per_socket: self.topo.ntasks_per_socket,
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
            env: self.job_env(environ),
            stdout: self.output.clone(),
            stderr: self.error.clone(),
            stdin: self.input.clone(),
            account: self.account.clone().unwrap_or_default(),
            comment: self.comment.clone().unwrap_or_default(),
            submit_host: who.host.clone(),
            // --gid, else the --uid user's primary group, else the submitter's.
            gid: self
                .gid
                .or(self.uid.as_ref().map(|u| u.gid))
                .unwrap_or(who.gid),
            groups: who.groups.clone(),
            user: self
                .uid
                .as_ref()
                .map_or_else(|| who.user.clone(), |u| u.name.clone()),
            uid: self.uid.as_ref().map(|u| u.uid),
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
            overcommit: self.overcommit,
            use_min_nodes: self.use_min_nodes,
            spread_job: self.spread_job,
            wait_all_nodes: self.wait_all_nodes,
            batch_features: self.batch.clone().unwrap_or_default(),
            burst_buffer: self.burst_buffer.clone().unwrap_or_default(),
            reboot: self.reboot,
            container: self.container.clone().unwrap_or_default(),
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
    fn node_count_and_overcommit_options_reach_the_request_and_environment() {
        let mut o = JobOpts::default();
        for opt in [Opt::Overcommit, Opt::UseMinNodes, Opt::SpreadJob] {
            o.apply(opt, None).unwrap();
        }
        let r = o.to_request("j", String::new(), &who(), &[]);
        assert!(r.overcommit && r.use_min_nodes && r.spread_job);
        let over = r.env.iter().find(|e| e.name == "SLURM_OVERCOMMIT");
        assert_eq!(over.map(|e| e.value.as_str()), Some("1"));
        let plain = JobOpts::default().to_request("j", String::new(), &who(), &[]);
        assert!(!plain.overcommit && !plain.use_min_nodes && !plain.spread_job);
        assert!(plain.env.iter().all(|e| e.name != "SLURM_OVERCOMMIT"));
    }

    #[test]
    fn absolute_workdir_is_kept() {
        assert_eq!(workdir(Some("/tmp"), "/home"), "/tmp");
        assert_eq!(workdir(None, "/home"), "/home");
    }
}
