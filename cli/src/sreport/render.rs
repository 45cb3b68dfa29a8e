//! What every report's rendering shares: the print settings, the dashed banner with the
//! report's title and window, the table itself, and users' proper names.

use std::fmt::Write as _;

use crate::output::{Column, OutputMode, Printer};
use crate::timefmt::Zone;

use super::fields::Chosen;
use super::tres::TresSel;
use super::units::TimeFormat;
use super::window::Window;

/// Slurm's banner rule: 80 dashes.
const RULE: &str =
    "--------------------------------------------------------------------------------";

/// How reports print: the global options that shape output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// `-p`, `-P`, or columns.
    pub mode: OutputMode,
    /// Banner and column headers (not with `-n`).
    pub header: bool,
    /// `-t`.
    pub time: TimeFormat,
    /// `-T`.
    pub tres: TresSel,
    /// Where window times are shown.
    pub zone: Zone,
    /// `-s name`: users in name order instead of largest CPU time first.
    pub sort_by_name: bool,
}

impl Default for Style {
    fn default() -> Self {
        Self {
            mode: OutputMode::Fixed,
            header: true,
            time: TimeFormat::Minutes,
            tres: TresSel::default(),
            zone: Zone::Local,
            sort_by_name: false,
        }
    }
}

impl Style {
    /// The banner: rule, `title`, the `lines` under it, rule (nothing with `-n`).
    pub fn banner(&self, out: &mut String, title: &str, lines: &[String]) {
        if !self.header {
            return;
        }
        let _ = writeln!(out, "{RULE}");
        let _ = writeln!(out, "{title}");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = writeln!(out, "{RULE}");
    }

    /// `Usage reported in CPU Minutes` (`... in Percentage of Total` for `-t percent`).
    pub fn usage_line(&self) -> String {
        match self.time {
            TimeFormat::Percent => format!("Usage reported in {}", self.time.label()),
            t => format!("Usage reported in {} {}", self.tres.usage_word(), t.label()),
        }
    }

    /// The banner title of the cluster and user reports: `<title> <start> - <end-1>`, with
    /// ` (<n> secs)` when `secs` is set.
    pub fn window_title(&self, title: &str, win: &Window, secs: bool) -> String {
        let mut t = format!("{title} {}", win.text(self.zone));
        if secs {
            let _ = write!(t, " ({} secs)", win.secs());
        }
        t
    }

    /// A value in TRES-seconds as `-t` says, percentages of `total`.
    pub fn value(&self, secs: u64, total: u64) -> String {
        self.time.value(secs, total)
    }

    /// The column header (unless `-n`) and `rows` under `columns`.
    pub fn table(&self, out: &mut String, columns: Vec<Column>, rows: &[Vec<String>]) {
        let printer = Printer::new(self.mode, columns);
        let mut buf = Vec::new();
        if self.header {
            let _ = printer.print_header(&mut buf);
        }
        for row in rows {
            let _ = printer.print_row(&mut buf, row);
        }
        out.push_str(&String::from_utf8_lossy(&buf));
    }
}

/// The columns of the chosen fields.
pub fn columns(chosen: &[Chosen]) -> Vec<Column> {
    chosen.iter().map(|c| c.column.clone()).collect()
}

/// Looks up a user's proper name (the passwd GECOS field up to its first comma).
pub type ProperNames<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The proper name of `login` from the passwd database, as sreport prints it.
pub fn passwd_proper_name(login: &str) -> Option<String> {
    let user = nix::unistd::User::from_name(login).ok().flatten()?;
    let gecos = user.gecos.to_string_lossy().into_owned();
    Some(gecos.split(',').next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_and_usage_lines() {
        let mut s = Style {
            zone: Zone::Utc,
            ..Style::default()
        };
        let win = Window {
            start: 1_704_067_200,
            end: 1_704_153_600,
        };
        let mut out = String::new();
        let title = s.window_title("Cluster Utilization", &win, false);
        s.banner(&mut out, &title, &[s.usage_line()]);
        assert_eq!(
            out,
            format!(
                "{RULE}\nCluster Utilization 2024-01-01T00:00:00 - 2024-01-01T23:59:59\n\
                 Usage reported in CPU Minutes\n{RULE}\n"
            )
        );
        assert_eq!(
            s.window_title("Top 10 Users", &win, true),
            "Top 10 Users 2024-01-01T00:00:00 - 2024-01-01T23:59:59 (86400 secs)"
        );
        s.time = TimeFormat::Percent;
        assert_eq!(s.usage_line(), "Usage reported in Percentage of Total");
        s.time = TimeFormat::HourPer;
        s.tres = TresSel::parse(Some("mem")).unwrap();
        assert_eq!(
            s.usage_line(),
            "Usage reported in TRES Hours/Percentage of Total"
        );
        s.header = false;
        let mut none = String::new();
        s.banner(&mut none, "x", &[]);
        assert!(none.is_empty());
    }

    #[test]
    fn proper_names_come_from_gecos() {
        // root exists everywhere; its GECOS may be empty, but the lookup must not fail.
        assert!(passwd_proper_name("root").is_some());
        assert_eq!(passwd_proper_name("no-such-user-sluice"), None);
    }
}
