//! What `sluice up` prints once everything answers: a status table and what to type next.

use std::path::Path;

use comfy_table::{Table, presets};

use super::layout::shell_quote;

/// One running daemon as shown in the status table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// e.g. `sluice-dbd`, `sluice-ctld [cluster]`.
    pub component: String,
    /// Its process id.
    pub pid: i32,
    /// Where it listens, `host:port`.
    pub address: String,
    /// How it is doing (a node's state as sinfo shows it; empty for others).
    pub state: String,
    /// Its log file.
    pub log: String,
    /// Whether this run started it (else it was already running).
    pub started: bool,
}

/// The status table, in a light style.
pub fn table(rows: &[Row]) -> String {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_header(["daemon", "pid", "address", "state", "log"]);
    for row in rows {
        let pid = if row.started {
            row.pid.to_string()
        } else {
            format!("{} (already running)", row.pid)
        };
        table.add_row([
            row.component.clone(),
            pid,
            row.address.clone(),
            row.state.clone(),
            row.log.clone(),
        ]);
    }
    table.to_string()
}

/// What the report describes besides the table.
#[derive(Debug, Clone)]
pub struct Summary<'a> {
    /// The directory.
    pub dir: &'a Path,
    /// Its `env.sh`.
    pub env_sh: &'a Path,
    /// The clusters, first is the one `env.sh` points at, with their node counts.
    pub clusters: &'a [(String, usize)],
    /// The federation they were put in by this run, if any.
    pub federation: Option<&'a str>,
    /// Only the dbd runs.
    pub dbd_only: bool,
    /// `up` returns instead of staying in the foreground.
    pub detached: bool,
}

/// The whole report: headline, table and next steps.
pub fn report(s: &Summary<'_>, rows: &[Row]) -> String {
    let dir_arg = shell_quote(&s.dir.display().to_string());
    let stop = if s.detached {
        format!("Stop it with:  sluice down --dir {dir_arg}")
    } else {
        format!("Stop it with Ctrl-C here, or from another shell:  sluice down --dir {dir_arg}")
    };
    let what: Vec<String> = s
        .clusters
        .iter()
        .map(|(name, nodes)| {
            let plural = if *nodes == 1 { "" } else { "s" };
            format!("cluster {name} with {nodes} node{plural}")
        })
        .collect();
    let mut headline = format!("Sluice is up in {} ({}", s.dir.display(), what.join(", "));
    if let Some(fed) = s.federation {
        headline.push_str(&format!(", federation {fed}"));
    }
    headline.push_str(if s.dbd_only {
        "; accounting daemon only)."
    } else {
        ")."
    });
    let env = shell_quote(&s.env_sh.display().to_string());
    let next = if s.dbd_only {
        format!("  . {env}\n  sacctmgr show cluster\n")
    } else {
        format!(
            "  . {env}\n  sinfo\n  sbatch --wrap 'hostname'\n  squeue\n  sacct\n  srun -N2 hostname\n"
        )
    };
    let mut others = String::new();
    for (name, _) in s.clusters.iter().skip(1) {
        let conf = s.dir.join(name).join("slurm.conf");
        others.push_str(&format!(
            "Cluster {name}: SLURM_CONF={} sinfo\n",
            shell_quote(&conf.display().to_string())
        ));
    }
    if !others.is_empty() {
        others.insert_str(0, "\nenv.sh points at the first cluster; for the others:\n");
    }
    format!(
        "{headline}\n\n{table}\n\nNext, in your shell:\n{next}{others}\n{stop}\n",
        table = table(rows),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary<'a>(clusters: &'a [(String, usize)], dbd_only: bool, detached: bool) -> Summary<'a> {
        Summary {
            dir: Path::new("/f"),
            env_sh: Path::new("/f/env.sh"),
            clusters,
            federation: Some("fed"),
            dbd_only,
            detached,
        }
    }

    #[test]
    fn report_lists_daemons_and_next_steps() {
        let rows = [Row {
            component: "sluice-dbd".into(),
            pid: 4242,
            address: "127.0.0.1:6819".into(),
            state: String::new(),
            log: "/f/log/dbd.log".into(),
            started: false,
        }];
        let clusters = [("c1".to_string(), 2), ("c2".to_string(), 1)];
        let text = report(&summary(&clusters, false, true), &rows);
        for needle in [
            "cluster c1 with 2 nodes, cluster c2 with 1 node, federation fed)",
            "daemon",
            "4242 (already running)",
            "127.0.0.1:6819",
            "/f/log/dbd.log",
            ". '/f/env.sh'",
            "sbatch --wrap 'hostname'",
            "SLURM_CONF='/f/c2/slurm.conf' sinfo",
            "sluice down --dir '/f'",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        let dbd_only = report(&summary(&clusters[..1], true, false), &rows);
        assert!(dbd_only.contains("sacctmgr show cluster"), "{dbd_only}");
        assert!(!dbd_only.contains("sbatch"), "{dbd_only}");
        assert!(!dbd_only.contains("Stop it with:  "), "{dbd_only}");
        assert!(dbd_only.contains("Ctrl-C"), "{dbd_only}");
    }
}
