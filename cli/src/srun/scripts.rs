//! srun's own programs around its step (`--prolog`/`--epilog`, else `SrunProlog`/`SrunEpilog`
//! of slurm.conf; `none` runs nothing): run by srun itself on the host it runs on, before the
//! tasks are launched and after the step ended, with the step's command line as arguments and
//! srun's environment plus the step's ids (`SLURM_SCRIPT_CONTEXT` is `prolog_srun` or
//! `epilog_srun`). A prolog that fails aborts the step before any task starts, as Slurm's
//! srun does (its message gives the raw wait status, as Slurm's does: 256 for exit code 1).

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use super::args::SrunOpts;
use super::step_opts::StepOpts;
use crate::jobspec;
use crate::slurm_conf::SlurmConf;

/// The programs of one step and what they run with.
#[derive(Debug, Clone)]
pub struct Scripts {
    prolog: Option<String>,
    epilog: Option<String>,
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

impl Scripts {
    /// The programs for step `ids` (job, step) on `node_list`.
    pub fn new(
        opts: &SrunOpts,
        conf: &SlurmConf,
        environ: &[(String, String)],
        ids: (u32, u32),
        node_list: &str,
    ) -> Self {
        let prolog = StepOpts::program(opts.step.prolog.as_deref(), conf.srun.prolog.as_deref())
            .map(String::from);
        let epilog = StepOpts::program(opts.step.epilog.as_deref(), conf.srun.epilog.as_deref())
            .map(String::from);
        let mut env: Vec<(String, String)> = environ.to_vec();
        let (job, step) = (ids.0.to_string(), ids.1.to_string());
        for (name, value) in [
            ("SLURM_JOB_ID", job.as_str()),
            ("SLURM_JOBID", job.as_str()),
            ("SLURM_STEP_ID", step.as_str()),
            ("SLURM_STEPID", step.as_str()),
            ("SLURM_STEP_NODELIST", node_list),
        ] {
            env.retain(|(k, _)| k != name);
            env.push((name.to_string(), value.to_string()));
        }
        Self {
            prolog,
            epilog,
            argv: opts.command.clone(),
            env,
        }
    }

    /// Runs the prolog, if any; `Err` is srun's exit code once it said the step is aborted.
    pub async fn prolog(&self, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), i32> {
        let Some(program) = &self.prolog else {
            return Ok(());
        };
        match self.run(program, "prolog_srun", out, err).await {
            0 => Ok(()),
            rc => {
                let msg = format!("srun prolog failed rc = {rc}. Aborting step.");
                jobspec::print_error(err, "srun", &msg);
                Err(1)
            }
        }
    }

    /// Runs the epilog, if any (a failure is reported; srun's exit code stays the tasks').
    pub async fn epilog(&self, out: &mut dyn Write, err: &mut dyn Write) {
        let Some(program) = &self.epilog else {
            return;
        };
        let rc = self.run(program, "epilog_srun", out, err).await;
        if rc != 0 {
            jobspec::print_error(err, "srun", &format!("srun epilog failed rc = {rc}"));
        }
    }

    /// Runs `program` and passes its output on; returns its raw wait status (0: success).
    async fn run(
        &self,
        program: &str,
        context: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> i32 {
        let ran = tokio::process::Command::new(program)
            .args(&self.argv)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("SLURM_SCRIPT_CONTEXT", context)
            .stdin(Stdio::null())
            .output()
            .await;
        match ran {
            Ok(o) => {
                let _ = out.write_all(&o.stdout);
                let _ = err.write_all(&o.stderr);
                o.status.into_raw()
            }
            Err(e) => {
                jobspec::print_error(err, "srun", &format!("{program}: {e}"));
                // What the shell reports for a program it cannot run.
                127 << 8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(prolog: &str, epilog: &str) -> Scripts {
        Scripts {
            prolog: Some(prolog.to_string()),
            epilog: Some(epilog.to_string()),
            argv: vec!["hostname".into()],
            env: vec![("SLURM_JOB_ID".into(), "5".into())],
        }
    }

    #[tokio::test]
    async fn a_failed_prolog_aborts_the_step_with_its_wait_status() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("p.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\necho \"$SLURM_SCRIPT_CONTEXT $SLURM_JOB_ID $1\"\nexit $FAIL\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = script.display().to_string();
        let mut s = scripts(&path, &path);
        s.env.push(("FAIL".into(), "0".into()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(s.prolog(&mut out, &mut err).await, Ok(()));
        s.epilog(&mut out, &mut err).await;
        assert_eq!(
            String::from_utf8_lossy(&out),
            "prolog_srun 5 hostname\nepilog_srun 5 hostname\n"
        );
        s.env.push(("FAIL".into(), "1".into()));
        let mut err = Vec::new();
        assert_eq!(s.prolog(&mut Vec::new(), &mut err).await, Err(1));
        assert_eq!(
            String::from_utf8_lossy(&err),
            "srun: error: srun prolog failed rc = 256. Aborting step.\n"
        );
    }
}
