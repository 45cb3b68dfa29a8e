//! `cluster Utilization`: per cluster and TRES, allocated, down, planned-down, idle, planned
//! and reported time (Slurm's `cluster_utilization`).
//!
//! Percentages of the kinds are of the reported time (allocated + down + planned down + idle +
//! planned); the reported time itself is a percentage of the capacity over the window. Each
//! usage column is as wide as its largest value needs, across every line.

use super::data::ClusterTres;
use super::fields::{Chosen, Field};
use super::render::{Style, columns};
use super::window::Window;

/// The fields printed without `format=` (`TresName` follows the cluster when `-T` is given).
pub fn default_format(style: &Style) -> &'static str {
    if style.tres.is_given() {
        "Cl,TresName,al,d,PLNDDown,i,res,rep"
    } else {
        "Cl,al,d,PLNDDown,i,res,rep"
    }
}

/// The report title.
pub const TITLE: &str = "Cluster Utilization";

/// Renders the report: banner, header and one line per cluster and TRES (clusters by name,
/// TRES in `-T` order; TRES a cluster has no usage for are left out).
pub fn render(style: &Style, win: &Window, fields: &[Chosen], rows: &[ClusterTres]) -> String {
    let mut out = String::new();
    let title = style.window_title(TITLE, win, false);
    style.banner(&mut out, &title, &[style.usage_line()]);

    let mut clusters: Vec<&str> = rows.iter().map(|r| r.cluster.as_str()).collect();
    clusters.sort_unstable();
    clusters.dedup();
    let mut lines: Vec<&ClusterTres> = Vec::new();
    for c in &clusters {
        for t in style.tres.names() {
            if let Some(r) = rows.iter().find(|r| r.cluster == *c && r.tres == *t) {
                lines.push(r);
            }
        }
    }

    let max = |f: fn(&ClusterTres) -> u64| lines.iter().map(|r| f(r)).max().unwrap_or(0);
    let mut fields = fields.to_vec();
    for chosen in &mut fields {
        let widest = match chosen.field {
            Field::Allocated | Field::Energy => max(|r| r.alloc),
            Field::Down => max(|r| r.down),
            Field::Idle => max(|r| r.idle),
            Field::Planned => max(|r| r.plan),
            Field::Over => max(|r| r.over),
            Field::PlannedDown => max(|r| r.pdown),
            Field::Reported => max(ClusterTres::reported),
            _ => continue,
        };
        chosen.column.width = style.time.usage_width(widest);
    }

    let table: Vec<Vec<String>> = lines
        .iter()
        .map(|r| fields.iter().map(|f| value(style, f.field, r)).collect())
        .collect();
    style.table(&mut out, columns(&fields), &table);
    out
}

fn value(style: &Style, field: Field, r: &ClusterTres) -> String {
    let reported = r.reported();
    match field {
        Field::Cluster => r.cluster.clone(),
        Field::TresCount => r.count.to_string(),
        Field::TresName => r.tres.clone(),
        Field::Allocated => style.value(r.alloc, reported),
        Field::Down => style.value(r.down, reported),
        Field::PlannedDown => style.value(r.pdown, reported),
        Field::Idle => style.value(r.idle, reported),
        Field::Planned => style.value(r.plan, reported),
        Field::Over => style.value(r.over, reported),
        Field::Reported => style.value(reported, r.total),
        // Sluice accounts no energy: Slurm prints its zero count.
        Field::Energy => style.value(0, 0),
        _ => String::new(),
    }
}
