//! sprio's layout: Slurm's `%[.][size]type` formats (a `.` right-justifies), the default and
//! long formats built from the weights in force (a factor whose weight is 0 has no column),
//! the header, the `-w` weights line and one line per pending job.

use crate::output::percent::{Layout, parse_letters, render_line};

/// The `PriorityWeight*` values in force.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Weights {
    pub age: u32,
    pub fairshare: u32,
    pub job_size: u32,
    pub partition: u32,
    pub qos: u32,
    /// `PriorityWeightTRES` by TRES name (`cpu`, `mem`, `node`).
    pub tres: Vec<(String, u32)>,
    /// `PriorityWeightTRES` as the controller shows it (the `-w` line).
    pub tres_text: String,
}

impl Weights {
    /// Reads `PriorityWeightTRES` as `GetConfig` gives it (`CPU=1000,Mem=20`; `(null)`).
    pub fn parse_tres(text: &str) -> Vec<(String, u32)> {
        text.split(',')
            .filter_map(|item| {
                let (name, weight) = item.split_once('=')?;
                Some((
                    name.trim().to_ascii_lowercase(),
                    weight.trim().parse().ok()?,
                ))
            })
            .collect()
    }
}

/// One pending job's priority and its normalized factors.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PrioRow {
    pub job_id: String,
    pub partition: String,
    pub user: String,
    pub account: String,
    pub cluster: String,
    pub priority: u64,
    pub age: f64,
    pub fairshare: f64,
    pub job_size: f64,
    pub part: f64,
    pub qos: f64,
    /// The normalized factor of each weighted TRES.
    pub tres: Vec<(String, f64)>,
    pub nice: i32,
}

/// The format sprio uses without `-o`: the job and partition, the user with `-u`, the
/// priority and site factor, then each factor that has a weight.
pub fn default_format(w: &Weights, long: bool, norm: bool, users_given: bool) -> String {
    match (long, norm) {
        (true, false) => {
            return "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q %.11N %.20T"
                .into();
        }
        (true, true) => {
            return "%.15i %9r %.8u %.8o %10y %10a %10b %10f %10j %10p %10n %10q %20t".into();
        }
        _ => {}
    }
    let mut f = String::from("%.15i %9r");
    if users_given {
        f.push_str(" %.8u");
    }
    let (lead, ages) = if norm {
        (" %10y", [" %10a", " %10f", " %10j", " %10p", " %10q"])
    } else {
        (
            " %.10Y %.10S",
            [" %.10A", " %.10F", " %.10J", " %.10P", " %.10Q"],
        )
    };
    f.push_str(lead);
    let weights = [w.age, w.fairshare, w.job_size, w.partition, w.qos];
    for (col, weight) in ages.iter().zip(weights) {
        if weight > 0 {
            f.push_str(col);
        }
    }
    if !w.tres.is_empty() {
        f.push_str(if norm { " %20t" } else { " %.20T" });
    }
    f
}

/// Checks a format's letters; `Err` is Slurm's message.
pub fn parse(format: &str) -> Result<Layout, String> {
    let layout = parse_letters(format);
    for f in &layout.fields {
        if header(&f.name).is_none() {
            return Err(format!(
                "sprio: error: Invalid job format specification: {}",
                f.name
            ));
        }
    }
    Ok(layout)
}

fn header(letter: &str) -> Option<&'static str> {
    Some(match letter {
        "i" => "JOBID",
        "r" => "PARTITION",
        "u" => "USER",
        "o" => "ACCOUNT",
        "c" => "CLUSTER",
        "Y" | "y" => "PRIORITY",
        "S" => "SITE",
        "A" | "a" => "AGE",
        "B" | "b" => "ASSOC",
        "F" | "f" => "FAIRSHARE",
        "J" | "j" => "JOBSIZE",
        "P" | "p" => "PARTITION",
        "Q" | "q" => "QOS",
        "n" => "QOSNAME",
        "N" => "NICE",
        "T" | "t" => "TRES",
        _ => return None,
    })
}

fn norm(x: f64) -> String {
    format!("{x:.7}")
}

fn weighted(x: f64, weight: u32) -> String {
    format!("{:.0}", x * f64::from(weight))
}

/// A job's value for a field letter.
fn value(letter: &str, r: &PrioRow, w: &Weights) -> String {
    match letter {
        "i" => r.job_id.clone(),
        "r" => r.partition.clone(),
        "u" => r.user.clone(),
        "o" => r.account.clone(),
        "c" => r.cluster.clone(),
        "Y" => r.priority.to_string(),
        "y" => norm(r.priority as f64 / f64::from(u32::MAX)),
        // No site factor plugin: every job's site factor is 0.
        "S" => "0".into(),
        "A" => weighted(r.age, w.age),
        "a" => norm(r.age),
        // No association priorities (PriorityWeightAssoc is not implemented).
        "B" => "0".into(),
        "b" => norm(0.0),
        "F" => weighted(r.fairshare, w.fairshare),
        "f" => norm(r.fairshare),
        "J" => weighted(r.job_size, w.job_size),
        "j" => norm(r.job_size),
        "P" => weighted(r.part, w.partition),
        "p" => norm(r.part),
        "Q" => weighted(r.qos, w.qos),
        "q" => norm(r.qos),
        "N" => r.nice.to_string(),
        "T" => tres_list(r, |name, x| {
            let weight = w.tres.iter().find(|t| t.0 == name).map_or(0, |t| t.1);
            format!("{:.0}", x * f64::from(weight))
        }),
        "t" => tres_list(r, |_, x| format!("{x:.2}")),
        // QOSNAME: no QOS.
        _ => String::new(),
    }
}

/// `name=value,...` over the job's weighted TRES.
fn tres_list(r: &PrioRow, value: impl Fn(&str, f64) -> String) -> String {
    r.tres
        .iter()
        .map(|(name, x)| format!("{name}={}", value(name, *x)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The `-w` line's value for a field letter: the weight of each factor.
fn weight_value(letter: &str, w: &Weights) -> String {
    match letter {
        "i" => "Weights".into(),
        "A" | "a" => w.age.to_string(),
        "F" | "f" => w.fairshare.to_string(),
        "J" | "j" => w.job_size.to_string(),
        "P" | "p" => w.partition.to_string(),
        "Q" | "q" => w.qos.to_string(),
        "T" | "t" if !w.tres.is_empty() => w.tres_text.clone(),
        _ => String::new(),
    }
}

fn line(layout: &Layout, values: Vec<String>) -> String {
    let cells: Vec<(String, bool)> = values.into_iter().map(|v| (v, false)).collect();
    render_line(layout, &cells)
}

/// Every printed line: the header (unless `no_header`), the weights (with `weights`), then
/// one line per job.
pub fn lines(
    layout: &Layout,
    rows: &[PrioRow],
    w: &Weights,
    no_header: bool,
    weights: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    if !no_header {
        let heads = layout
            .fields
            .iter()
            .map(|f| header(&f.name).unwrap_or_default().to_string())
            .collect();
        out.push(line(layout, heads));
    }
    if weights {
        let vals = layout
            .fields
            .iter()
            .map(|f| weight_value(&f.name, w))
            .collect();
        out.push(line(layout, vals));
    }
    for r in rows {
        let vals = layout.fields.iter().map(|f| value(&f.name, r, w)).collect();
        out.push(line(layout, vals));
    }
    out
}
