//! Which TRES a report covers (`-T/--tres`, `SREPORT_TRES`): CPU unless told otherwise.
//!
//! Reports print one line per TRES in Slurm's TRES-id order (cpu, mem, energy, node, billing,
//! fs/disk, vmem, pages, then the typed ones by name), whatever order `-T` lists them in.
//! Naming any TRES, even `cpu`, adds a `TRES Name` column to the default formats and makes the
//! headers say `TRES` instead of `CPU` (unless it is `cpu` alone). Sluice accounts cpu, mem and
//! node; other names are skipped, as Slurm skips TRES it has no record of.

/// Slurm's built-in TRES, in id order.
const BUILT_IN: &[&str] = &[
    "cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages",
];

/// The TRES Sluice accounts, which `-T ALL` selects.
const ACCOUNTED: &[&str] = &["cpu", "mem", "node"];

/// The TRES a report covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TresSel {
    given: Option<String>,
    names: Vec<String>,
}

impl Default for TresSel {
    fn default() -> Self {
        Self {
            given: None,
            names: vec!["cpu".to_string()],
        }
    }
}

impl TresSel {
    /// The selection for a `-T` value (`None`: CPU only). Unknown names are skipped, as
    /// Slurm skips TRES it has no record of; `Err` when nothing valid remains.
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        let Some(value) = value else {
            return Ok(Self::default());
        };
        let mut names: Vec<String> = Vec::new();
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let item = item.to_ascii_lowercase();
            let picked: Vec<String> = if item == "all" {
                ACCOUNTED.iter().map(|s| s.to_string()).collect()
            } else if known(&item) {
                vec![item]
            } else {
                Vec::new()
            };
            for n in picked {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        if names.is_empty() {
            return Err(format!("sreport: error: No valid TRES given in '{value}'"));
        }
        names.sort_by_key(|n| order_key(n));
        Ok(Self {
            given: Some(value.to_string()),
            names,
        })
    }

    /// The TRES to report, in print order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether `-T` (or `SREPORT_TRES`) was given at all.
    pub fn is_given(&self) -> bool {
        self.given.is_some()
    }

    /// The `-T` value as typed (job reports print it: `TRES type is ...`).
    pub fn given(&self) -> Option<&str> {
        self.given.as_deref()
    }

    /// The word in "Usage reported in CPU Minutes": `CPU` for CPU alone, else `TRES`.
    pub fn usage_word(&self) -> &'static str {
        match &self.given {
            None => "CPU",
            Some(g) if g.eq_ignore_ascii_case("cpu") => "CPU",
            Some(_) => "TRES",
        }
    }

    /// The unit of job-size buckets: `CPUs` for CPU alone, else `TRES`.
    pub fn size_word(&self) -> &'static str {
        if self.usage_word() == "CPU" {
            "CPUs"
        } else {
            "TRES"
        }
    }
}

fn known(name: &str) -> bool {
    ACCOUNTED.contains(&name)
}

fn order_key(name: &str) -> (usize, String) {
    let rank = BUILT_IN
        .iter()
        .position(|b| *b == name)
        .unwrap_or(BUILT_IN.len());
    (rank, name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_cpu() {
        let t = TresSel::parse(None).unwrap();
        assert_eq!(t.names(), ["cpu"]);
        assert!(!t.is_given());
        assert_eq!((t.usage_word(), t.size_word()), ("CPU", "CPUs"));
    }

    #[test]
    fn names_follow_tres_id_order() {
        let t = TresSel::parse(Some("gres/gpu,node,MEM,cpu,bogus,mem,energy")).unwrap();
        assert_eq!(
            t.names(),
            ["cpu", "mem", "node"],
            "what Sluice accounts, in id order"
        );
        assert_eq!(t.usage_word(), "TRES");
        assert!(t.is_given());
        let c = TresSel::parse(Some("CPU")).unwrap();
        assert_eq!((c.usage_word(), c.names().len()), ("CPU", 1));
        assert_eq!(TresSel::parse(Some("all")).unwrap().names(), ACCOUNTED);
    }

    #[test]
    fn nothing_valid_is_an_error() {
        assert!(TresSel::parse(Some("bogus,gres/gpu,energy")).is_err());
    }
}
