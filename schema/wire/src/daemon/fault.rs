//! Fault episodes: a daemon whose store keeps failing (disk full, read-only, I/O errors) logs
//! the first failure of a run of them, stays quiet while the same fault repeats, and logs once
//! more when a write succeeds again, with how many failed in between. A different fault within
//! the episode is logged when it first appears.

use std::time::{Duration, Instant};

/// The failures of one kind of operation (e.g. "state commit"), grouped into episodes.
#[derive(Debug)]
pub struct FaultEpisodes {
    what: &'static str,
    current: Option<Episode>,
}

#[derive(Debug)]
struct Episode {
    since: Instant,
    failures: u64,
    reason: String,
}

impl FaultEpisodes {
    /// No episode yet; `what` names the operation in the log lines.
    pub fn new(what: &'static str) -> Self {
        Self {
            what,
            current: None,
        }
    }

    /// Whether the last attempt failed (an episode is going on).
    pub fn failing(&self) -> bool {
        self.current.is_some()
    }

    /// Records a failure at `now`; returns the line to log when it starts an episode or is a
    /// different fault from the episode's last one, `None` when it only repeats.
    pub fn failed(&mut self, reason: &str, now: Instant) -> Option<String> {
        let what = self.what;
        match &mut self.current {
            Some(ep) => {
                ep.failures += 1;
                if ep.reason == reason {
                    return None;
                }
                ep.reason = reason.to_string();
                Some(format!(
                    "{what} failing differently now: {reason} (further failures are not logged \
                     until it succeeds again)"
                ))
            }
            None => {
                self.current = Some(Episode {
                    since: now,
                    failures: 1,
                    reason: reason.to_string(),
                });
                Some(format!(
                    "{what} failed: {reason} (further failures are not logged until it \
                     succeeds again)"
                ))
            }
        }
    }

    /// Records a success at `now`; returns the line to log when it ends an episode.
    pub fn succeeded(&mut self, now: Instant) -> Option<String> {
        let ep = self.current.take()?;
        let secs = now.saturating_duration_since(ep.since).as_secs();
        Some(format!(
            "{} works again after {} failed attempt{} over {}",
            self.what,
            ep.failures,
            if ep.failures == 1 { "" } else { "s" },
            span(Duration::from_secs(secs)),
        ))
    }
}

fn span(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else {
        format!("{} min", s / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_is_logged_when_it_starts_changes_and_ends() {
        let t0 = Instant::now();
        let mut f = FaultEpisodes::new("state commit");
        assert!(!f.failing());
        assert_eq!(f.succeeded(t0), None, "no episode, nothing to say");
        let first = f.failed("database or disk is full", t0).unwrap();
        assert!(first.starts_with("state commit failed: database or disk is full"));
        assert!(f.failing());
        for i in 1..100 {
            let at = t0 + Duration::from_secs(i);
            assert_eq!(f.failed("database or disk is full", at), None);
        }
        let other = f.failed("attempt to write a readonly database", t0);
        assert!(other.unwrap().contains("readonly"), "a new fault is news");
        assert_eq!(f.failed("attempt to write a readonly database", t0), None);
        let end = f.succeeded(t0 + Duration::from_secs(300)).unwrap();
        assert_eq!(
            end,
            "state commit works again after 102 failed attempts over 5 min"
        );
        assert!(!f.failing());
        assert_eq!(f.succeeded(t0), None);
        // The next fault starts a new episode.
        assert!(f.failed("disk I/O error", t0).is_some());
        assert_eq!(
            f.succeeded(t0 + Duration::from_secs(3)).unwrap(),
            "state commit works again after 1 failed attempt over 3 s"
        );
    }
}
