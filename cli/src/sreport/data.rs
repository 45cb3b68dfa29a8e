//! The usage data reports are rendered from, converted from the wire once, and the merge of a
//! federation's clusters into one `FED:<name>` cluster (Slurm's `_merge_cluster_recs` and
//! friends: seconds add up; a cluster's TRES count is the clusters' average, so that count
//! times the summed window is the federation's capacity).

use std::collections::BTreeMap;

use sluice_wire::proto;

/// One cluster's usage of one TRES over the window, in TRES-seconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterTres {
    pub cluster: String,
    pub tres: String,
    /// The TRES count (e.g. CPUs).
    pub count: u64,
    pub alloc: u64,
    pub down: u64,
    pub pdown: u64,
    pub idle: u64,
    pub plan: u64,
    pub over: u64,
    /// Capacity over the window (count x seconds, as nodes came and went).
    pub total: u64,
}

impl ClusterTres {
    /// Slurm's "reported" time: everything but overcommit.
    pub fn reported(&self) -> u64 {
        self.alloc + self.down + self.pdown + self.idle + self.plan
    }
}

impl From<proto::ClusterUsage> for ClusterTres {
    fn from(u: proto::ClusterUsage) -> Self {
        Self {
            cluster: u.cluster,
            tres: u.tres,
            count: u.count,
            alloc: u.alloc_secs,
            down: u.down_secs,
            pdown: u.pdown_secs,
            idle: u.idle_secs,
            plan: u.plan_secs,
            over: u.over_secs,
            total: u.total_secs,
        }
    }
}

/// One association's (account, or user in an account) allocated TRES-seconds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssocTres {
    pub cluster: String,
    pub account: String,
    /// Empty for the account's own line (its whole sub-tree's usage).
    pub user: String,
    pub parent: String,
    pub tres: String,
    pub alloc: u64,
}

impl From<proto::AssocUsage> for AssocTres {
    fn from(u: proto::AssocUsage) -> Self {
        Self {
            cluster: u.cluster,
            account: u.account,
            user: u.user,
            parent: u.parent_account,
            tres: u.tres,
            alloc: u.alloc_secs,
        }
    }
}

/// One account's job usage per size bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeRow {
    pub cluster: String,
    pub account: String,
    pub parent: String,
    /// TRES-seconds per bucket.
    pub secs: Vec<u64>,
    /// Jobs per bucket.
    pub jobs: Vec<u64>,
}

impl From<proto::JobSizesRow> for SizeRow {
    fn from(r: proto::JobSizesRow) -> Self {
        Self {
            cluster: r.cluster,
            account: r.account,
            parent: r.parent_account,
            secs: r.bucket_secs,
            jobs: r.bucket_jobs,
        }
    }
}

/// The name a merged federation shows under.
pub fn fed_label(fed: &str) -> String {
    format!("FED:{fed}")
}

/// Merges every cluster's rows into one cluster named `label`, per TRES; the count is the
/// clusters' average. Fewer than two clusters are left as they are, as in Slurm.
pub fn merge_clusters(rows: Vec<ClusterTres>, label: &str) -> Vec<ClusterTres> {
    if cluster_count(rows.iter().map(|r| r.cluster.as_str())) < 2 {
        return rows;
    }
    let mut by_tres: BTreeMap<String, (ClusterTres, u64)> = BTreeMap::new();
    for r in rows {
        let (m, n) = by_tres.entry(r.tres.clone()).or_insert_with(|| {
            let empty = ClusterTres {
                cluster: label.to_string(),
                tres: r.tres.clone(),
                ..Default::default()
            };
            (empty, 0)
        });
        m.count += r.count;
        m.alloc += r.alloc;
        m.down += r.down;
        m.pdown += r.pdown;
        m.idle += r.idle;
        m.plan += r.plan;
        m.over += r.over;
        m.total += r.total;
        *n += 1;
    }
    by_tres
        .into_values()
        .map(|(mut m, n)| {
            m.count /= n.max(1);
            m
        })
        .collect()
}

/// Merges association rows of several clusters into `label`: the same account (and user)
/// adds up.
pub fn merge_assocs(rows: Vec<AssocTres>, label: &str) -> Vec<AssocTres> {
    if cluster_count(rows.iter().map(|r| r.cluster.as_str())) < 2 {
        return rows;
    }
    let mut merged: Vec<AssocTres> = Vec::new();
    let mut index: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in rows {
        let key = (r.account.clone(), r.user.clone(), r.tres.clone());
        match index.get(&key) {
            Some(&i) => merged[i].alloc += r.alloc,
            None => {
                index.insert(key, merged.len());
                merged.push(AssocTres {
                    cluster: label.to_string(),
                    ..r
                });
            }
        }
    }
    merged
}

/// Merges job-size rows of several clusters into `label`, account by account.
pub fn merge_sizes(rows: Vec<SizeRow>, label: &str) -> Vec<SizeRow> {
    if cluster_count(rows.iter().map(|r| r.cluster.as_str())) < 2 {
        return rows;
    }
    let mut merged: Vec<SizeRow> = Vec::new();
    for r in rows {
        match merged.iter_mut().find(|m| m.account == r.account) {
            Some(m) => {
                add_into(&mut m.secs, &r.secs);
                add_into(&mut m.jobs, &r.jobs);
            }
            None => merged.push(SizeRow {
                cluster: label.to_string(),
                ..r
            }),
        }
    }
    merged
}

/// Adds `b` into `a` element by element, growing `a` if `b` is longer.
pub fn add_into(a: &mut Vec<u64>, b: &[u64]) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

fn cluster_count<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    let mut seen: Vec<&str> = names.collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ct(cluster: &str, count: u64, alloc: u64, total: u64) -> ClusterTres {
        ClusterTres {
            cluster: cluster.into(),
            tres: "cpu".into(),
            count,
            alloc,
            idle: total - alloc,
            total,
            ..Default::default()
        }
    }

    #[test]
    fn federation_rows_add_up_and_counts_average() {
        let m = merge_clusters(
            vec![ct("a", 100, 10, 360_000), ct("b", 50, 20, 180_000)],
            "FED:f",
        );
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].cluster.as_str(), m[0].count), ("FED:f", 75));
        assert_eq!(
            (m[0].alloc, m[0].total, m[0].reported()),
            (30, 540_000, 540_000)
        );
        let one = merge_clusters(vec![ct("a", 1, 1, 10)], "FED:f");
        assert_eq!(one[0].cluster, "a", "a single cluster keeps its name");
    }

    #[test]
    fn assoc_and_size_rows_merge_by_account() {
        let a = |c: &str, acct: &str, user: &str, alloc| AssocTres {
            cluster: c.into(),
            account: acct.into(),
            user: user.into(),
            tres: "cpu".into(),
            alloc,
            ..Default::default()
        };
        let m = merge_assocs(
            vec![a("x", "p", "", 5), a("y", "p", "", 7), a("y", "p", "u", 7)],
            "F",
        );
        assert_eq!(m, vec![a("F", "p", "", 12), a("F", "p", "u", 7)]);
        let s = |c: &str, acct: &str| SizeRow {
            cluster: c.into(),
            account: acct.into(),
            secs: vec![1, 2],
            jobs: vec![1],
            ..Default::default()
        };
        let m = merge_sizes(vec![s("x", "p"), s("y", "p"), s("y", "q")], "F");
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].secs.as_slice(), m[0].jobs.as_slice()),
            (&[2, 4][..], &[2][..])
        );
    }
}
