//! Option values checked the way Slurm's commands check them before anything is sent:
//! counts, node ranges, memory sizes, time limits and flag-like environment variables.

use sluice_vocab::cluster_conf::parse_time_limit;
use sluice_wire::proto::JobShare;

use super::OptError;

/// `-N min[-max]`: the node count range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeCount {
    /// Fewest nodes the job accepts.
    pub min: u32,
    /// Most nodes the job accepts (equal to `min` for a single number).
    pub max: u32,
}

/// A strictly positive count (`-n`, `-c`): `Invalid numeric value "x" for --ntasks.`
pub fn positive(value: &str, option: &'static str) -> Result<u32, OptError> {
    let invalid = || OptError::InvalidNumeric {
        value: value.to_string(),
        option,
    };
    let n: i64 = value.parse().map_err(|_| invalid())?;
    if n <= 0 {
        return Err(invalid());
    }
    u32::try_from(n)
        .ok()
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or(OptError::TooLarge { value: n, option })
}

/// `--exclusive[=exclusive|oversubscribe]` (Slurm's `arg_set_exclusive`; `user`, `mcs` and
/// `topo` are Slurm's too but not supported here).
pub fn exclusive(value: Option<&str>) -> Result<JobShare, OptError> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("exclusive") => Ok(JobShare::Exclusive),
        Some("oversubscribe") => Ok(JobShare::Oversubscribe),
        Some(v @ ("user" | "mcs" | "topo")) => Err(OptError::ExclusiveUnsupported(v.to_string())),
        Some(_) => Err(OptError::Exclusive),
    }
}

/// One side of a node range: a number with an optional `k` (x1024) or `m` (x1048576) suffix.
fn nodes_number(text: &str) -> Result<u32, OptError> {
    let bad = || OptError::NodeCount(text.to_string());
    let trimmed = text.trim();
    let (digits, mult) = match trimmed.char_indices().last() {
        Some((i, 'k' | 'K')) => (&trimmed[..i], 1024u64),
        Some((i, 'm' | 'M')) => (&trimmed[..i], 1_048_576u64),
        _ => (trimmed, 1),
    };
    if digits.is_empty() {
        return if trimmed.is_empty() {
            Ok(0)
        } else {
            Err(bad())
        };
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(bad)
}

/// `-N`: `n` or `min-max` (a range's minimum of 0 means 1).
pub fn node_count(value: &str) -> Result<NodeCount, OptError> {
    match value.split_once('-') {
        Some((lo, hi)) => {
            let min = nodes_number(lo)?.max(1);
            let max = nodes_number(hi)?;
            if max < min {
                return Err(OptError::NodeRange { min, max });
            }
            Ok(NodeCount { min, max })
        }
        None => {
            let n = nodes_number(value)?;
            Ok(NodeCount { min: n, max: n })
        }
    }
}

/// `--mem`: a whole number with an optional `K`, `M`, `G` or `T` suffix, which may be followed by
/// `B` (`1GB`, as Slurm accepts); megabytes by default. Kilobytes round up to the next megabyte.
pub fn mem_mb(value: &str) -> Result<u64, OptError> {
    let bad = || OptError::Mem;
    let v = value.trim();
    let v = match v.strip_suffix(['B', 'b']) {
        Some(rest) if rest.ends_with(|c: char| "KkMmGgTt".contains(c)) => rest,
        _ => v,
    };
    let (digits, unit) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], c.to_ascii_uppercase()),
        _ => (v, 'M'),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let mb = match unit {
        'K' => Some(n.div_ceil(1024)),
        'M' => Some(n),
        'G' => n.checked_mul(1024),
        'T' => n.checked_mul(1024 * 1024),
        _ => None,
    };
    mb.ok_or_else(bad)
}

/// What a job asks of its nodes' sockets, cores and threads (`None`: not asked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Topo {
    /// `-B S` / `--sockets-per-node`.
    pub sockets_per_node: Option<u32>,
    /// `-B S:C` / `--cores-per-socket`.
    pub cores_per_socket: Option<u32>,
    /// `-B S:C:T` / `--threads-per-core`.
    pub threads_per_core: Option<u32>,
    /// `--ntasks-per-core`.
    pub ntasks_per_core: Option<u32>,
    /// `--ntasks-per-socket`.
    pub ntasks_per_socket: Option<u32>,
}

impl Topo {
    /// `-B/--extra-node-info=S[:C[:T]]`, each a count, a range (its minimum counts) or `*`.
    pub fn extra_node_info(&mut self, value: &str) -> Result<(), OptError> {
        const NAME: &str = "extra-node-info";
        let parts: Vec<&str> = value.split(':').collect();
        if parts.len() > 3 {
            return Err(OptError::Spec(NAME));
        }
        let mut counts = [None; 3];
        for (slot, part) in counts.iter_mut().zip(&parts) {
            *slot = layout_count(part, NAME)?;
        }
        self.sockets_per_node = counts[0];
        if parts.len() > 1 {
            self.cores_per_socket = counts[1];
        }
        if parts.len() > 2 {
            self.threads_per_core = counts[2];
        }
        Ok(())
    }
}

/// A socket, core or thread count: `N`, `min-max` (the minimum is what nodes must have) or
/// `*` (anything: `None`).
pub fn layout_count(value: &str, option: &'static str) -> Result<Option<u32>, OptError> {
    let v = value.trim();
    if v == "*" {
        return Ok(None);
    }
    let min = v.split_once('-').map_or(v, |(lo, _)| lo);
    match min.parse::<u32>() {
        Ok(n) if n > 0 && i32::try_from(n).is_ok() => Ok(Some(n)),
        _ => Err(OptError::Spec(option)),
    }
}

/// `-t`: checked here so a bad value never leaves the command; the controller parses it again.
pub fn time_limit(value: &str) -> Result<String, OptError> {
    parse_time_limit(value).map_err(|_| OptError::Time)?;
    Ok(value.trim().to_string())
}

/// Whether a flag set through an environment variable is on: empty, `yes`, or a non-zero
/// number (Slurm's rule for options without a value).
pub fn env_flag_on(value: &str) -> bool {
    let v = value.trim();
    v.is_empty() || v.eq_ignore_ascii_case("yes") || v.parse::<i64>().is_ok_and(|n| n != 0)
}

/// `-w/--nodelist` or `-x/--exclude`: a hostlist expression (`n[1-3],m1`), expanded;
/// `None` when it is not one or names no host.
pub fn hostlist(value: &str) -> Option<Vec<String>> {
    sluice_vocab::hostlist::expand(value.trim())
        .ok()
        .filter(|h| !h.is_empty())
}

/// `--begin`: one of Slurm's time forms, as unix seconds, read now in the local zone.
pub fn begin(value: &str) -> Result<i64, OptError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    begin_at(value, now, crate::timefmt::Zone::Local)
}

/// [`begin`] at `now` in `zone`. A time of day without a date (`16:00`, `noon`, `teatime`)
/// that has already passed today means tomorrow, as Slurm reads times that lie ahead.
pub fn begin_at(value: &str, now: i64, zone: crate::timefmt::Zone) -> Result<i64, OptError> {
    let t = crate::timespec::parse(value, now, zone).map_err(|_| OptError::Begin)?;
    let text = value.trim().to_ascii_lowercase();
    let time_of_day =
        matches!(
            text.as_str(),
            "midnight" | "noon" | "elevenses" | "fika" | "teatime"
        ) || (text.contains(':') && !text.contains(['-', '/', '.']) && !text.starts_with("now"));
    Ok(if time_of_day && t < now {
        t + 86_400
    } else {
        t
    })
}

/// Slurm's `NO_VAL`: `--priority` must stay below it.
pub const PRIORITY_NO_VAL: u64 = 0xffff_fffe;

/// `--priority=N|TOP` (`TOP`: the highest priority, `NO_VAL - 1`).
pub fn priority(value: &str) -> Result<u32, OptError> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("top") {
        return Ok(0xffff_fffd);
    }
    let n: i64 = v.parse().map_err(|_| OptError::InvalidNumeric {
        value: value.to_string(),
        option: "--priority",
    })?;
    if n < 0 {
        return Err(OptError::PriorityNegative);
    }
    u32::try_from(n)
        .ok()
        .filter(|n| u64::from(*n) < PRIORITY_NO_VAL)
        .ok_or(OptError::PriorityTooLarge)
}

/// `--wait-all-nodes=N`: whether to wait for every node (any number but 0), read as Slurm's
/// commands read it: the value must start with a digit, and its leading digits count.
pub fn wait_all_nodes(value: &str) -> Result<bool, OptError> {
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return Err(OptError::WaitAllNodes(value.to_string()));
    }
    Ok(digits.chars().any(|c| c != '0'))
}

/// `--kill-on-invalid-dep=yes|no`.
pub fn yes_no(value: &str) -> Result<bool, OptError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(OptError::KillOnInvalidDep),
    }
}

/// Slurm's bound on `--nice` (`NICE_OFFSET - 3`).
pub const NICE_MAX: i64 = 2_147_483_645;

/// `--nice[=N]`: 100 without a value.
pub fn nice(value: Option<&str>) -> Result<i32, OptError> {
    let Some(v) = value else {
        return Ok(100);
    };
    let n: i64 = v
        .trim()
        .parse()
        .map_err(|_| OptError::Nice(v.to_string()))?;
    if n.abs() > NICE_MAX {
        return Err(OptError::NiceRange);
    }
    i32::try_from(n).map_err(|_| OptError::NiceRange)
}

/// `--open-mode=append|truncate` (any leading part of either, as Slurm matches `a`/`t`):
/// whether output is appended.
pub fn open_mode(value: &str) -> Result<bool, OptError> {
    match value.trim().to_ascii_lowercase().chars().next() {
        Some('a') => Ok(true),
        Some('t') => Ok(false),
        _ => Err(OptError::OpenMode(value.to_string())),
    }
}

/// `--signal=[{R|B}:]sig[@time]`: the signal, its lead time before the time limit in seconds
/// (60 by default) and whether only the batch shell gets it (`B:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSignal {
    /// The signal number.
    pub signal: i32,
    /// Seconds before the time limit.
    pub before_secs: u32,
    /// `B:`: only the batch shell, not the steps.
    pub batch_only: bool,
}

impl JobSignal {
    /// Parses the option's value.
    pub fn parse(value: &str) -> Result<Self, OptError> {
        let v = value.trim();
        let (flags, rest) = match v.split_once(':') {
            Some((f, r)) => (f, r),
            None => ("", v),
        };
        let mut batch_only = false;
        for c in flags.chars() {
            match c.to_ascii_uppercase() {
                'B' => batch_only = true,
                'R' => {}
                _ => return Err(OptError::Signal),
            }
        }
        let (sig, time) = match rest.split_once('@') {
            Some((s, t)) => (s, Some(t)),
            None => (rest, None),
        };
        let signal = super::signals::parse(sig).ok_or(OptError::Signal)?;
        if signal == 0 {
            return Err(OptError::Signal);
        }
        let before_secs = match time {
            None => 60,
            Some(t) => t.trim().parse::<u32>().map_err(|_| OptError::Signal)?,
        };
        // Slurm keeps the lead time in 16 bits.
        if before_secs > 0xffff {
            return Err(OptError::Signal);
        }
        Ok(Self {
            signal,
            before_secs,
            batch_only,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_times_lie_ahead() {
        use crate::timefmt::Zone;
        // 2026-01-10 12:00:00 UTC.
        let now = 1_768_046_400;
        assert_eq!(begin_at("now+60", now, Zone::Utc), Ok(now + 60));
        assert_eq!(begin_at("now+2hours", now, Zone::Utc), Ok(now + 7200));
        assert_eq!(begin_at("13:00", now, Zone::Utc), Ok(now + 3600));
        assert_eq!(begin_at("11:00", now, Zone::Utc), Ok(now + 23 * 3600));
        assert_eq!(begin_at("teatime", now, Zone::Utc), Ok(now + 4 * 3600));
        assert_eq!(begin_at("midnight", now, Zone::Utc), Ok(now + 12 * 3600));
        assert_eq!(begin_at("tomorrow", now, Zone::Utc), Ok(now + 12 * 3600));
        assert_eq!(
            begin_at("2026-01-11T10:00", now, Zone::Utc),
            Ok(now + 22 * 3600)
        );
        assert_eq!(begin_at("2026-01-09", now, Zone::Utc), Ok(now - 36 * 3600));
        for bad in ["soon", "25:00", "now+", "2026-13-01"] {
            assert_eq!(begin_at(bad, now, Zone::Utc), Err(OptError::Begin), "{bad}");
        }
    }

    #[test]
    fn priorities_and_yes_no() {
        assert_eq!(priority("10"), Ok(10));
        assert_eq!(priority("top"), Ok(0xffff_fffd));
        assert!(priority("x").is_err());
        assert_eq!(
            priority("-1").unwrap_err().to_string(),
            "Priority must be >= 0"
        );
        assert_eq!(
            priority("4294967294").unwrap_err().to_string(),
            "Priority must be < 4294967294"
        );
        assert_eq!(yes_no("YES"), Ok(true));
        assert_eq!(yes_no("no"), Ok(false));
        assert_eq!(
            yes_no("maybe").unwrap_err().to_string(),
            "Invalid --kill-on-invalid-dep specification"
        );
    }

    #[test]
    fn nice_defaults_to_100_and_is_bounded() {
        assert_eq!(nice(None), Ok(100));
        assert_eq!(nice(Some("5")), Ok(5));
        assert_eq!(nice(Some("-5")), Ok(-5));
        assert_eq!(nice(Some("x")), Err(OptError::Nice("x".into())));
        assert_eq!(nice(Some("2147483646")), Err(OptError::NiceRange));
    }

    #[test]
    fn open_modes_and_signals() {
        assert_eq!(open_mode("append"), Ok(true));
        assert_eq!(open_mode("truncate"), Ok(false));
        assert!(open_mode("x").is_err());
        let s = JobSignal::parse("B:USR1@30").unwrap();
        assert_eq!((s.signal, s.before_secs, s.batch_only), (10, 30, true));
        let s = JobSignal::parse("SIGTERM").unwrap();
        assert_eq!((s.signal, s.before_secs, s.batch_only), (15, 60, false));
        let s = JobSignal::parse("R:2@5").unwrap();
        assert_eq!((s.signal, s.before_secs, s.batch_only), (2, 5, false));
        for bad in ["", "X:USR1", "NOPE", "USR1@x", "USR1@70000"] {
            assert_eq!(JobSignal::parse(bad), Err(OptError::Signal), "{bad}");
        }
    }

    #[test]
    fn positive_counts_reject_zero_negative_and_words() {
        assert_eq!(positive("4", "--ntasks"), Ok(4));
        for bad in ["0", "-1", "x", "4x", ""] {
            assert_eq!(
                positive(bad, "--ntasks").unwrap_err().to_string(),
                format!("Invalid numeric value \"{bad}\" for --ntasks.")
            );
        }
        assert!(matches!(
            positive("99999999999", "-c"),
            Err(OptError::TooLarge { .. })
        ));
    }

    #[test]
    fn node_ranges_and_suffixes() {
        assert_eq!(node_count("3"), Ok(NodeCount { min: 3, max: 3 }));
        assert_eq!(node_count("2-4"), Ok(NodeCount { min: 2, max: 4 }));
        assert_eq!(node_count("0-4"), Ok(NodeCount { min: 1, max: 4 }));
        assert_eq!(
            node_count("1k"),
            Ok(NodeCount {
                min: 1024,
                max: 1024
            })
        );
        assert_eq!(
            node_count("abc").unwrap_err().to_string(),
            "\"abc\" is not a valid node count"
        );
        assert_eq!(
            node_count("2-x").unwrap_err().to_string(),
            "\"x\" is not a valid node count"
        );
        assert_eq!(
            node_count("5-2").unwrap_err().to_string(),
            "Maximum node count 2 is less than minimum node count 5"
        );
    }

    #[test]
    fn memory_units_default_to_megabytes() {
        assert_eq!(mem_mb("100"), Ok(100));
        assert_eq!(mem_mb("100M"), Ok(100));
        assert_eq!(mem_mb("2G"), Ok(2048));
        assert_eq!(mem_mb("2g"), Ok(2048));
        assert_eq!(mem_mb("1T"), Ok(1024 * 1024));
        assert_eq!(mem_mb("1K"), Ok(1));
        assert_eq!(mem_mb("2049K"), Ok(3));
        assert_eq!(mem_mb("0"), Ok(0));
        assert_eq!(mem_mb("1GB"), Ok(1024));
        assert_eq!(mem_mb("1gb"), Ok(1024));
        assert_eq!(mem_mb("500MB"), Ok(500));
        assert_eq!(mem_mb("2048KB"), Ok(2));
        assert_eq!(mem_mb("1TB"), Ok(1024 * 1024));
        for bad in [
            "", "G", "1.5G", "-1", "10X", "ten", "100B", "GB", "1GBB", "1BG",
        ] {
            assert_eq!(mem_mb(bad), Err(OptError::Mem), "{bad}");
        }
        assert_eq!(OptError::Mem.to_string(), "Invalid --mem specification");
    }

    #[test]
    fn time_limits_in_slurm_formats() {
        for ok in [
            "10",
            "10:30",
            "1:00:00",
            "2-0",
            "2-3:4",
            "2-3:4:5",
            "UNLIMITED",
            "infinite",
        ] {
            assert_eq!(time_limit(ok).as_deref(), Ok(ok), "{ok}");
        }
        for bad in ["", "abc", "1:2:3:4", "1h"] {
            assert_eq!(time_limit(bad), Err(OptError::Time), "{bad}");
        }
        assert_eq!(OptError::Time.to_string(), "Invalid --time specification");
    }

    #[test]
    fn env_flags() {
        for on in ["", "yes", "YES", "1", "7"] {
            assert!(env_flag_on(on), "{on}");
        }
        for off in ["no", "0", "true"] {
            assert!(!env_flag_on(off), "{off}");
        }
    }

    #[test]
    fn wait_all_nodes_reads_leading_digits() {
        assert_eq!(wait_all_nodes("1"), Ok(true));
        assert_eq!(wait_all_nodes("0"), Ok(false));
        assert_eq!(wait_all_nodes("2x"), Ok(true));
        assert_eq!(
            wait_all_nodes("yes").unwrap_err().to_string(),
            "Invalid --wait-all-nodes argument: yes"
        );
    }
}
