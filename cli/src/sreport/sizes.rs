//! `job SizesByAccount`: time (or, with `PrintJobCount`, jobs) per account and job-size
//! bucket (Slurm's `job_sizes_grouped_by_top_acct`).
//!
//! Buckets come from `Grouping=` (default `50,250,500,1000`): `0-49 CPUs`, ..., `>= 1000 CPUs`;
//! with `Grouping=individual`, one column per CPU count the jobs had (`4 CPUs`), as the dbd
//! found them.
//! Without `FlatView` accounts are rolled up to the level below `root` (or, with
//! `AcctAsParent`, below the `Accounts=` given; with `Accounts=` alone, to those accounts);
//! jobs charged to a parent itself show under the parent's name. Bucket values are shares of
//! the account's total; `% of cluster` is the account's share of the cluster's jobs shown.
//!
//! The dbd sends a row per account that ran jobs and one (possibly empty) per ancestor, each
//! with its parent, so the account tree comes with the data.

use std::collections::BTreeMap;

use crate::output::{Column, width};

use super::data::{SizeRow, add_into};
use super::fields::{Chosen, Field, atoi};
use super::render::{Style, columns};
use super::units::TimeFormat;
use super::window::Window;

/// Slurm's default size groups.
pub const DEFAULT_GROUPING: &str = "50,250,500,1000";

/// The fields printed without `format=`.
pub const DEFAULT_FORMAT: &str = "Cl,a";

/// How the report groups and counts.
#[derive(Debug, Clone, Default)]
pub struct SizesOpts {
    /// `Grouping=` items as typed (`50`, `250%15`).
    pub grouping: Vec<String>,
    pub print_job_count: bool,
    pub flat_view: bool,
    pub acct_as_parent: bool,
    /// `Accounts=`.
    pub accounts: Vec<String>,
    /// `Grouping=individual`: one bucket per size in `sizes`.
    pub individual: bool,
    /// With `individual`, each bucket's TRES count, ascending (from the dbd).
    pub sizes: Vec<u64>,
}

impl SizesOpts {
    /// The bucket lower bounds after 0, as the dbd takes them.
    pub fn bounds(&self) -> Vec<u32> {
        self.grouping
            .iter()
            .map(|g| u32::try_from(atoi(g)).unwrap_or(0))
            .collect()
    }
}

/// The bucket columns: `<lo>-<hi> CPUs` per group, then `>= <last> CPUs`; with
/// `individual`, `<size> CPUs` per size.
pub fn bucket_columns(style: &Style, opts: &SizesOpts) -> Vec<Column> {
    let word = style.tres.size_word();
    let width = if style.time.is_per() { 20 } else { 13 };
    if opts.individual {
        return opts
            .sizes
            .iter()
            .map(|size| Column::new(format!("{size} {word}"), width))
            .collect();
    }
    let with_width = |item: &str| match item.split_once('%').map(|(_, w)| width::parse_signed(w)) {
        Some(w) if w != 0 => w,
        _ => width,
    };
    let mut cols = Vec::new();
    let mut last: u32 = 0;
    for item in &opts.grouping {
        let size = u32::try_from(atoi(item)).unwrap_or(0);
        let header = format!("{last}-{} {word}", size.wrapping_sub(1));
        cols.push(Column::new(header, with_width(item)));
        last = size;
    }
    if last != 0 {
        let item = opts.grouping.last().map_or("", String::as_str);
        cols.push(Column::new(format!(">= {last} {word}"), with_width(item)));
    }
    cols
}

/// One printed line: an account group's sums.
#[derive(Debug, Default)]
struct Group {
    secs: Vec<u64>,
    jobs: Vec<u64>,
}

/// Renders the report.
pub fn render(
    style: &Style,
    win: &Window,
    fields: &[Chosen],
    opts: &SizesOpts,
    rows: &[SizeRow],
) -> String {
    let mut out = String::new();
    let mut lines = Vec::new();
    if let Some(t) = style.tres.given() {
        lines.push(format!("TRES type is {t}"));
    }
    lines.push(if opts.print_job_count {
        "Units are in number of jobs ran".to_string()
    } else {
        format!("Time reported in {}", style.time.label())
    });
    style.banner(
        &mut out,
        &style.window_title("Job Sizes", win, true),
        &lines,
    );

    let buckets = bucket_columns(style, opts);
    // cluster -> account -> parent
    let mut trees: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for r in rows {
        let tree = trees.entry(r.cluster.as_str()).or_default();
        tree.insert(r.account.as_str(), r.parent.as_str());
    }
    let mut groups: BTreeMap<(&str, String), Group> = BTreeMap::new();
    for r in rows {
        let tree = trees.get(r.cluster.as_str());
        let parent_of = |a: &str| {
            tree.and_then(|t| t.get(a))
                .map(|p| p.to_string())
                .unwrap_or_default()
        };
        let Some(name) = group_of(opts, &r.account, &parent_of) else {
            continue;
        };
        let g = groups.entry((r.cluster.as_str(), name)).or_default();
        add_into(&mut g.secs, &r.secs);
        add_into(&mut g.jobs, &r.jobs);
    }
    // Lines come from jobs: an ancestor that only places its children shows nothing.
    groups.retain(|_, g| g.jobs.iter().any(|j| *j > 0));
    let mut cluster_total: BTreeMap<&str, u64> = BTreeMap::new();
    for ((cluster, _), g) in &groups {
        *cluster_total.entry(cluster).or_insert(0) += total(opts, g);
    }

    let mut cols = columns(fields);
    cols.extend(buckets.iter().cloned());
    cols.push(Column::new("Total Count", 13));
    cols.push(Column::new("% of cluster", 12));
    let mut table = Vec::new();
    for ((cluster, account), g) in &groups {
        let acct_secs: u64 = g.secs.iter().sum();
        let mut row: Vec<String> = fields
            .iter()
            .map(|f| match f.field {
                Field::Cluster => cluster.to_string(),
                Field::Account => account.clone(),
                _ => String::new(),
            })
            .collect();
        for i in 0..buckets.len() {
            row.push(if opts.print_job_count {
                g.jobs.get(i).copied().unwrap_or(0).to_string()
            } else {
                style.value(g.secs.get(i).copied().unwrap_or(0), acct_secs)
            });
        }
        row.push(g.jobs.iter().sum::<u64>().to_string());
        let of_cluster = cluster_total.get(cluster).copied().unwrap_or(0);
        row.push(TimeFormat::Percent.value(total(opts, g), of_cluster));
        table.push(row);
    }
    style.table(&mut out, cols, &table);
    out
}

fn total(opts: &SizesOpts, g: &Group) -> u64 {
    if opts.print_job_count {
        g.jobs.iter().sum()
    } else {
        g.secs.iter().sum()
    }
}

/// The line an account's jobs are shown under, or `None` when outside the report.
fn group_of(opts: &SizesOpts, account: &str, parent_of: &dyn Fn(&str) -> String) -> Option<String> {
    let listed = |a: &str| opts.accounts.iter().any(|x| x == a);
    if opts.flat_view {
        return (opts.accounts.is_empty() || listed(account)).then(|| account.to_string());
    }
    let display_listed = !opts.accounts.is_empty() && !opts.acct_as_parent;
    let is_parent = |a: &str| {
        if opts.accounts.is_empty() {
            a == "root"
        } else {
            listed(a)
        }
    };
    let mut a = account.to_string();
    // Bounded walk up the tree (a corrupt tree must not loop).
    for _ in 0..64 {
        if display_listed {
            if listed(&a) {
                return Some(a);
            }
        } else if is_parent(&a) {
            return Some(a);
        }
        let p = parent_of(&a);
        if !display_listed && is_parent(&p) {
            return Some(a);
        }
        if p.is_empty() || p == a {
            return None;
        }
        a = p;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parents() -> BTreeMap<String, String> {
        [
            ("root", ""),
            ("phys", "root"),
            ("astro", "phys"),
            ("chem", "root"),
        ]
        .into_iter()
        .map(|(a, p)| (a.to_string(), p.to_string()))
        .collect()
    }

    fn group(opts: &SizesOpts, a: &str) -> Option<String> {
        let p = parents();
        group_of(opts, a, &|x| p.get(x).cloned().unwrap_or_default())
    }

    #[test]
    fn accounts_roll_up_below_the_parents() {
        let d = SizesOpts::default();
        assert_eq!(group(&d, "astro").as_deref(), Some("phys"));
        assert_eq!(group(&d, "phys").as_deref(), Some("phys"));
        assert_eq!(group(&d, "root").as_deref(), Some("root"));
        assert_eq!(group(&d, "orphan"), None);
        let under_phys = SizesOpts {
            accounts: vec!["phys".into()],
            acct_as_parent: true,
            ..SizesOpts::default()
        };
        assert_eq!(group(&under_phys, "astro").as_deref(), Some("astro"));
        assert_eq!(group(&under_phys, "chem"), None);
        let listed = SizesOpts {
            accounts: vec!["phys".into()],
            ..SizesOpts::default()
        };
        assert_eq!(group(&listed, "astro").as_deref(), Some("phys"));
        let flat = SizesOpts {
            flat_view: true,
            ..SizesOpts::default()
        };
        assert_eq!(group(&flat, "astro").as_deref(), Some("astro"));
    }

    #[test]
    fn bucket_headers() {
        let mut o = SizesOpts {
            grouping: vec!["50".into(), "250".into(), "500".into(), "1000%9".into()],
            ..SizesOpts::default()
        };
        let cols = bucket_columns(&Style::default(), &o);
        let h: Vec<(&str, i32)> = cols.iter().map(|c| (c.header.as_str(), c.width)).collect();
        assert_eq!(
            h,
            [
                ("0-49 CPUs", 13),
                ("50-249 CPUs", 13),
                ("250-499 CPUs", 13),
                ("500-999 CPUs", 9),
                (">= 1000 CPUs", 9)
            ]
        );
        assert_eq!(o.bounds(), [50, 250, 500, 1000]);
        o.grouping = vec!["4".into()];
        let style = Style {
            time: TimeFormat::MinPer,
            tres: super::super::tres::TresSel::parse(Some("mem")).unwrap(),
            ..Style::default()
        };
        let h: Vec<String> = bucket_columns(&style, &o)
            .into_iter()
            .map(|c| format!("{}/{}", c.header, c.width))
            .collect();
        assert_eq!(h, ["0-3 TRES/20", ">= 4 TRES/20"]);
    }
}
