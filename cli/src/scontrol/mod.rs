//! `scontrol`: show and change jobs, nodes and partitions, with Slurm's words, layouts and
//! messages. Without a command on the line it reads commands from stdin.
//!
//! * [`show`]: the `Key=Value` records; [`update`]: `update` and the job actions.
//! * [`federation`]: `show federation`, from the accounting daemon.

pub mod federation;
pub mod show;
pub mod update;

#[cfg(test)]
mod fed_render_tests;
#[cfg(test)]
mod render_tests;

use std::io::Write;

use sluice_wire::client::{CtldAdminClient, CtldClient};
use sluice_wire::proto::{
    ControlJobRequest, GetConfigRequest, JobAction, JobError, ListJobsRequest, ListNodesRequest,
    ListPartitionsRequest, ReconfigureRequest,
};

use crate::cmdutil;
use crate::getopt::{self, Ambiguity, HasArg, Mode, OptSpec};
use crate::prompt::{Input, Read};
use crate::rpc_error::{Asker, CONNECT_FAILURE, status_text};
use crate::slurm_conf::{CliError, SlurmConf};
use crate::timefmt::Zone;
use crate::words::{is_keyword, split_line};
use update::Update;

const USAGE: &str = "Usage: scontrol [<OPTION>] [<COMMAND>]\n\
    Valid <COMMAND> values are: show job|node|partition|config|hostnames, update, hold, uhold,\n\
    release, requeue, requeuehold, suspend, resume, reconfigure, quit\n";

/// An scontrol option (all are flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScOpt {
    All,
    Details,
    Help,
    OneLiner,
    Quiet,
    Verbose,
    Version,
}

const fn spec(short: Option<char>, long: &'static str, id: ScOpt) -> OptSpec<ScOpt> {
    OptSpec {
        long,
        short,
        arg: HasArg::No,
        id,
    }
}

const SPECS: &[OptSpec<ScOpt>] = &[
    spec(Some('a'), "all", ScOpt::All),
    spec(Some('d'), "details", ScOpt::Details),
    spec(Some('h'), "help", ScOpt::Help),
    spec(None, "usage", ScOpt::Help),
    spec(Some('o'), "oneliner", ScOpt::OneLiner),
    spec(Some('Q'), "quiet", ScOpt::Quiet),
    spec(Some('v'), "verbose", ScOpt::Verbose),
    spec(Some('V'), "version", ScOpt::Version),
];

/// One scontrol session: its options, output streams and (once needed) controller client.
struct Session<'a> {
    one_liner: bool,
    quiet: bool,
    zone: Zone,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    client: Option<CtldClient>,
    admin: Option<CtldAdminClient>,
}

impl Session<'_> {
    fn fail(&mut self, text: &str) -> i32 {
        if !self.quiet {
            let _ = writeln!(self.err, "{text}");
        }
        1
    }

    async fn client(&mut self) -> Result<&mut CtldClient, String> {
        if self.client.is_none() {
            let conf = SlurmConf::from_env().map_err(|e| format!("scontrol: error: {e}"))?;
            let c = conf.connect_ctld().await.map_err(|e| match e {
                CliError::Connect { .. } => CONNECT_FAILURE.to_string(),
                other => format!("scontrol: error: {other}"),
            })?;
            self.client = Some(c);
        }
        self.client
            .as_mut()
            .ok_or_else(|| CONNECT_FAILURE.to_string())
    }

    /// The controller's administration service (`reconfigure`, `update SuspendExc*`).
    async fn admin(&mut self) -> Result<&mut CtldAdminClient, String> {
        if self.admin.is_none() {
            let conf = SlurmConf::from_env().map_err(|e| format!("scontrol: error: {e}"))?;
            let c = conf.connect_ctld_admin().await.map_err(|e| match e {
                CliError::Connect { .. } => CONNECT_FAILURE.to_string(),
                other => format!("scontrol: error: {other}"),
            })?;
            self.admin = Some(c);
        }
        self.admin
            .as_mut()
            .ok_or_else(|| CONNECT_FAILURE.to_string())
    }
}

/// Runs the `scontrol` binary.
pub fn main() -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(
        &cmdutil::args(),
        Input::stdin(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )
}

/// Runs scontrol with `args` (commands from `input` when none is given); returns the exit code.
pub fn run(args: &[String], mut input: Input, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let parsed = match getopt::parse(SPECS, args, Mode::Permute)
        .map_err(|e| e.usage_text("scontrol", Ambiguity::Bare))
    {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    let mut s = Session {
        one_liner: false,
        quiet: false,
        zone: Zone::Local,
        out,
        err,
        client: None,
        admin: None,
    };
    for (id, _) in &parsed.opts {
        match *id {
            ScOpt::Help => {
                let _ = s.out.write_all(USAGE.as_bytes());
                return 0;
            }
            ScOpt::Version => {
                let _ = writeln!(s.out, "sluice {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            ScOpt::OneLiner => s.one_liner = true,
            ScOpt::Quiet => s.quiet = true,
            ScOpt::All | ScOpt::Details | ScOpt::Verbose => {}
        }
    }
    let Some(rt) = cmdutil::runtime("scontrol", s.err) else {
        return 1;
    };
    rt.block_on(async {
        if !parsed.operands.is_empty() {
            return execute(&mut s, &parsed.operands).await.unwrap_or(0);
        }
        let mut code = 0;
        loop {
            if input.is_terminal() {
                let _ = write!(s.out, "scontrol: ");
                let _ = s.out.flush();
            }
            let Read::Line(line) = input.read(None) else {
                return code;
            };
            let words = split_line(&line);
            if words.is_empty() {
                continue;
            }
            match execute(&mut s, &words).await {
                None => return code,
                Some(0) => {}
                Some(c) => code = c,
            }
        }
    })
}

/// Runs one command; `None` for `quit`/`exit`.
async fn execute(s: &mut Session<'_>, words: &[String]) -> Option<i32> {
    let (first, rest) = (words[0].as_str(), &words[1..]);
    if is_keyword(first, "quit", 4) || is_keyword(first, "exit", 4) {
        return None;
    }
    if is_keyword(first, "oneliner", 3) {
        s.one_liner = true;
        return Some(0);
    }
    if is_keyword(first, "show", 3) {
        return Some(show_cmd(s, rest).await);
    }
    if is_keyword(first, "update", 1) {
        return Some(match update::parse_update(rest) {
            Ok(u) => update_cmd(s, u).await,
            Err(text) => s.fail(&text),
        });
    }
    if is_keyword(first, "reconfigure", 3) {
        if !rest.is_empty() {
            return Some(s.fail(&format!("too many arguments for keyword:{first}")));
        }
        return Some(reconfigure_cmd(s).await);
    }
    if let Some(action) = update::job_action(first) {
        if rest.is_empty() {
            return Some(s.fail(&format!("too few arguments for keyword:{first}")));
        }
        return Some(action_cmd(s, action, &update::action_jobs(rest)).await);
    }
    Some(s.fail(&format!("invalid keyword: {first}")))
}

async fn show_cmd(s: &mut Session<'_>, words: &[String]) -> i32 {
    let Some(entity) = words.first() else {
        return s.fail("too few arguments for keyword:show");
    };
    if is_keyword(entity, "hostnames", 5) {
        // Slurm: the hostlist argument, else SLURM_JOB_NODELIST; one name per line.
        let list = words
            .get(1)
            .cloned()
            .or_else(|| std::env::var("SLURM_JOB_NODELIST").ok());
        let Some(list) = list else {
            return s.fail("scontrol: error: host list is empty");
        };
        return match sluice_vocab::hostlist::expand(&list) {
            Ok(hosts) => {
                for host in hosts {
                    let _ = writeln!(s.out, "{host}");
                }
                0
            }
            Err(e) => s.fail(&format!("scontrol: error: {e}")),
        };
    }
    if is_keyword(entity, "federation", 3) {
        let view = match SlurmConf::from_env() {
            Ok(conf) => federation::fetch(&conf).await,
            Err(e) => Err(format!("scontrol: error: {e}")),
        };
        return match view {
            Ok(v) => {
                let _ = s.out.write_all(federation::render(&v).as_bytes());
                0
            }
            Err(text) => s.fail(&text),
        };
    }
    let name = words.get(1).cloned();
    let (one, zone) = (s.one_liner, s.zone);
    // `123+1`: one component of heterogeneous job 123.
    let (name, het_offset) = match name.as_deref().and_then(|n| n.split_once('+')) {
        Some((id, k)) if k.parse::<u32>().is_ok() => (Some(id.to_string()), k.parse::<u32>().ok()),
        _ => (name, None),
    };
    let ids: Vec<u32> = match name.as_deref().map(str::parse::<u32>) {
        Some(Ok(id)) => vec![id],
        Some(Err(_)) if is_keyword(entity, "jobs", 1) => {
            return s.fail("slurm_load_jobs error: Invalid job id specified");
        }
        _ => Vec::new(),
    };
    let client = match s.client().await {
        Ok(c) => c,
        Err(text) => return s.fail(&text),
    };
    let text: Result<String, String> = if is_keyword(entity, "jobs", 1) {
        let req = ListJobsRequest {
            job_ids: ids.clone(),
            include_finished: true,
            ..Default::default()
        };
        match client.list_jobs(req).await {
            Err(st) => Err(format!(
                "slurm_load_jobs error: {}",
                status_text(&st, Asker::Views)
            )),
            Ok(r) => {
                let mut jobs = r.into_inner().jobs;
                if let Some(k) = het_offset {
                    jobs.retain(|j| j.het_job_id != 0 && j.het_job_offset == k);
                }
                jobs.sort_by_key(|j| (j.array_job_id.max(j.job_id), j.array_task_id, j.job_id));
                match (jobs.is_empty(), ids.is_empty()) {
                    (true, true) => Ok("No jobs in the system\n".to_string()),
                    (true, false) => Err("slurm_load_jobs error: Invalid job id specified".into()),
                    _ => Ok(jobs.iter().map(|j| show::job(j, one, zone)).collect()),
                }
            }
        }
    } else if is_keyword(entity, "nodes", 1) {
        let names = name.clone().into_iter().collect();
        match client.list_nodes(ListNodesRequest { names }).await {
            Err(st) => Err(format!(
                "slurm_load_node error: {}",
                status_text(&st, Asker::Views)
            )),
            Ok(r) => {
                let nodes = r.into_inner().nodes;
                match (nodes.is_empty(), &name) {
                    (true, Some(n)) => Err(format!("Node {n} not found")),
                    (true, None) => Ok("No nodes in the system\n".to_string()),
                    _ => Ok(nodes.iter().map(|n| show::node(n, one, zone)).collect()),
                }
            }
        }
    } else if is_keyword(entity, "partitions", 1) {
        let names = name.clone().into_iter().collect();
        match client
            .list_partitions(ListPartitionsRequest { names })
            .await
        {
            Err(st) => Err(format!(
                "slurm_load_partitions error: {}",
                status_text(&st, Asker::Views)
            )),
            Ok(r) => {
                let parts = r.into_inner().partitions;
                match (parts.is_empty(), &name) {
                    (true, Some(n)) => Err(format!("Partition {n} not found")),
                    (true, None) => Ok("No partitions in the system\n".to_string()),
                    _ => Ok(parts.iter().map(|p| show::partition(p, one)).collect()),
                }
            }
        }
    } else if is_keyword(entity, "config", 1) {
        match client.get_config(GetConfigRequest {}).await {
            Err(st) => Err(format!(
                "slurm_load_ctl_conf error: {}",
                status_text(&st, Asker::Views)
            )),
            Ok(r) => Ok(show::config(&r.into_inner(), zone)),
        }
    } else {
        Err(format!("invalid entity:{entity} for keyword:show"))
    };
    match text {
        Ok(t) => {
            let _ = s.out.write_all(t.as_bytes());
            0
        }
        Err(e) => s.fail(&e),
    }
}

fn job_errors(s: &mut Session<'_>, errors: &[JobError]) -> i32 {
    let mut code = 0;
    for e in errors {
        let job = if e.job.is_empty() {
            e.job_id.to_string()
        } else {
            e.job.clone()
        };
        code = s.fail(&format!("{} for job {job}", e.message));
    }
    code
}

/// `scontrol reconfigure`: prints nothing on success, as Slurm's does.
async fn reconfigure_cmd(s: &mut Session<'_>) -> i32 {
    let admin = match s.admin().await {
        Ok(c) => c,
        Err(text) => return s.fail(&format!("slurm_reconfigure error: {text}")),
    };
    match admin.reconfigure(ReconfigureRequest {}).await {
        Ok(_) => 0,
        Err(st) => s.fail(&format!(
            "slurm_reconfigure error: {}",
            status_text(&st, Asker::Views)
        )),
    }
}

async fn update_cmd(s: &mut Session<'_>, u: Update) -> i32 {
    let sent = match u {
        Update::SuspendExc(req) => match s.admin().await {
            Ok(admin) => admin.update_suspend_exc(req).await.map(|_| Vec::new()),
            Err(text) => return s.fail(&format!("slurm_update error: {text}")),
        },
        Update::Job(req) => match s.client().await {
            Ok(client) => client.update_job(req).await.map(|r| r.into_inner().errors),
            Err(text) => return s.fail(&format!("slurm_update error: {text}")),
        },
        Update::Node(req) => match s.client().await {
            Ok(client) => client.update_node(req).await.map(|_| Vec::new()),
            Err(text) => return s.fail(&format!("slurm_update error: {text}")),
        },
        Update::Partition(req) => match s.client().await {
            Ok(client) => client.update_partition(req).await.map(|_| Vec::new()),
            Err(text) => return s.fail(&format!("slurm_update error: {text}")),
        },
    };
    match sent {
        Ok(errors) => job_errors(s, &errors),
        Err(st) => s.fail(&format!(
            "slurm_update error: {}",
            status_text(&st, Asker::Views)
        )),
    }
}

async fn action_cmd(s: &mut Session<'_>, action: JobAction, jobs: &[String]) -> i32 {
    if let Some(bad) = jobs.iter().find(|j| !valid_job_id(j)) {
        return s.fail(&format!("Invalid job id specified for job {bad}"));
    }
    let client = match s.client().await {
        Ok(c) => c,
        Err(text) => return s.fail(&text),
    };
    let req = ControlJobRequest {
        action: action as i32,
        jobs: jobs.to_vec(),
    };
    match client.control_job(req).await {
        Ok(r) => job_errors(s, &r.into_inner().errors),
        Err(st) => {
            let text = status_text(&st, Asker::Views);
            s.fail(&format!("{text} for job {}", jobs.join(",")))
        }
    }
}

/// `12` or `12_3`.
fn valid_job_id(s: &str) -> bool {
    let (id, task) = match s.split_once('_') {
        Some((id, t)) => (id, Some(t)),
        None => (s, None),
    };
    id.parse::<u32>().is_ok_and(|n| n > 0) && task.is_none_or(|t| t.parse::<u32>().is_ok())
}
