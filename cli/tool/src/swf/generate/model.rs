//! The synthetic workload: who submits, what they ask for, and how their jobs end.
//!
//! * users have Zipf-like activity (user k submits about 1/k^1.1 of the top user's jobs) and
//!   habits: a home account (accounts are Zipf-like too, so a few are big), a home partition,
//!   a typical job size and a typical time limit, a few applications;
//! * sizes are heavy-tailed around the user's habit, powers of two favoured (4 in 5 jobs),
//!   capped at the machine;
//! * requested times are the usual round limits (5 minutes to 2 days); run times are
//!   log-normal fractions of them, by outcome: most complete well within their limit, some
//!   fail early, some hit the limit (status 0: the format has no timeout), some are cancelled
//!   while running, and a few cancelled while queued (run time 0, nothing allocated);
//! * wait times are log-normal, longer for bigger and longer jobs.

use rand::rngs::StdRng;

use super::sample::{Weighted, log_normal, normal, unit};
use crate::swf::format::Status;

/// The usual requested time limits, in seconds.
const LIMITS: [i64; 10] = [
    300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200, 86_400, 172_800,
];

/// One user's habits.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// Group (account) numbers: home first, an occasional second.
    pub groups: Vec<u32>,
    /// Home partition number.
    pub partition: u32,
    /// Typical log2 of the job size.
    pub size_log2: f64,
    /// Typical index into the requested-time limits.
    pub limit_idx: f64,
    /// First application number; the user runs a few from here.
    pub app_base: u32,
    /// Applications the user runs.
    pub apps: u32,
    /// Memory requested per processor, KB (`None` = the user never says).
    pub mem_kb: Option<u64>,
}

/// Who submits, with their habits.
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    /// Users by number - 1.
    pub users: Vec<User>,
    activity: Weighted,
    partitions: Weighted,
    /// The machine's processors.
    pub procs: u64,
}

impl Population {
    /// `users` users over `accounts` accounts and `partitions` partitions of a machine of
    /// `procs` processors (every count at least 1).
    pub fn new(rng: &mut StdRng, users: u32, accounts: u32, partitions: u32, procs: u64) -> Self {
        let accounts_by_size = Weighted::zipf(accounts.max(1) as usize, 0.9);
        let partition_use = Weighted::zipf(partitions.max(1) as usize, 1.3);
        let memory = [
            None,
            Some(524_288),
            Some(1_048_576),
            Some(2_097_152),
            Some(4_194_304),
        ];
        let users = (0..users.max(1))
            .map(|k| {
                let home = group_number(accounts_by_size.pick(rng));
                let mut groups = vec![home];
                if unit(rng) < 0.2 {
                    let other = group_number(accounts_by_size.pick(rng));
                    if other != home {
                        groups.push(other);
                    }
                }
                // The busiest users run small jobs (many of them); the occasional
                // capability user is among the less active ones.
                let size_cap = (2.0 + 1.5 * f64::from(k + 1).log2()).min(11.0);
                User {
                    groups,
                    partition: group_number(partition_use.pick(rng)),
                    size_log2: (-2.2 * (1.0 - unit(rng)).ln()).min(size_cap),
                    limit_idx: 1.0 + 6.5 * unit(rng),
                    app_base: k * 8 + 1,
                    apps: 1 + (unit(rng) * 4.0) as u32,
                    mem_kb: memory[(unit(rng) * memory.len() as f64) as usize % memory.len()],
                }
            })
            .collect::<Vec<_>>();
        Self {
            activity: Weighted::zipf(users.len(), 1.1),
            users,
            partitions: partition_use,
            procs: procs.max(1),
        }
    }

    /// Draws one job submitted by a random user; times are scaled by `scale`.
    pub fn job(&self, rng: &mut StdRng, scale: f64) -> Job {
        let user_idx = self.activity.pick(rng);
        self.job_of(rng, user_idx, scale)
    }

    /// The mean CPU-seconds of a job at scale 1, estimated user by user (`per_user` draws
    /// each, weighted by activity), so which users a small sample happens to pick does not
    /// sway it.
    pub fn mean_cpu_secs(&self, rng: &mut StdRng, per_user: usize) -> f64 {
        let per_user = per_user.max(1);
        (0..self.users.len())
            .map(|u| {
                let sum: f64 = (0..per_user)
                    .map(|_| self.job_of(rng, u, 1.0).cpu_secs())
                    .sum();
                self.activity.probability(u) * sum / per_user as f64
            })
            .sum()
    }

    /// Draws one job of user `user_idx` (from 0).
    fn job_of(&self, rng: &mut StdRng, user_idx: usize, scale: f64) -> Job {
        let user_idx = user_idx.min(self.users.len() - 1);
        let user = &self.users[user_idx];
        let group = if user.groups.len() > 1 && unit(rng) < 0.25 {
            user.groups[1]
        } else {
            user.groups[0]
        };
        let partition = if unit(rng) < 0.85 {
            user.partition
        } else {
            group_number(self.partitions.pick(rng))
        };
        let procs = self.size(rng, user);
        let idx = (user.limit_idx + 1.2 * normal(rng)).round();
        let limit = LIMITS[idx.clamp(0.0, (LIMITS.len() - 1) as f64) as usize];
        let req_time = ((limit as f64 * scale).round() as i64).max(60);
        let (status, run) = outcome(rng, req_time);
        let ran = !(status == Status::Cancelled && run == 0);
        let size_log2 = (procs as f64).log2();
        let wait_median = 20.0 * (1.0 + size_log2) * (req_time as f64 / 3600.0).powf(0.3);
        let wait = log_normal(rng, wait_median, 1.6).min(7.0 * 86_400.0) as i64;
        let used_mem = user.mem_kb.map_or(65_536.0 + unit(rng) * 2e6, |m| {
            m as f64 * (0.1 + 0.8 * unit(rng))
        });
        Job {
            user: user_idx as u32 + 1,
            group,
            partition,
            app: user.app_base + (unit(rng) * f64::from(user.apps)) as u32,
            procs,
            req_time,
            status,
            run,
            wait,
            alloc: ran.then_some(procs),
            avg_cpu: ran.then(|| (run as f64 * (0.3 + 0.7 * unit(rng))) as i64),
            used_mem_kb: ran.then_some(used_mem as u64),
            req_mem_kb: user.mem_kb,
        }
    }

    /// A job size: heavy-tailed around the user's habit, powers of two favoured.
    fn size(&self, rng: &mut StdRng, user: &User) -> u64 {
        let max_log2 = 63 - self.procs.leading_zeros();
        let k = (user.size_log2 + 1.5 * normal(rng))
            .round()
            .clamp(0.0, f64::from(max_log2)) as u32;
        let pow = 1u64 << k;
        let size = if k == 0 || unit(rng) < 0.8 {
            pow
        } else {
            // Between the neighbouring powers of two.
            pow / 2 + 1 + (unit(rng) * (pow + pow / 2 - 1) as f64) as u64
        };
        size.clamp(1, self.procs)
    }
}

fn group_number(idx: usize) -> u32 {
    u32::try_from(idx + 1).unwrap_or(u32::MAX)
}

/// How a job with limit `req_time` ends: its status and run time.
fn outcome(rng: &mut StdRng, req_time: i64) -> (Status, i64) {
    let limit = req_time as f64;
    let fraction = |rng: &mut StdRng, median: f64, sigma: f64| {
        (log_normal(rng, median, sigma).min(0.98) * limit).round() as i64
    };
    let u = unit(rng);
    if u < 0.04 {
        (Status::Cancelled, 0)
    } else if u < 0.08 {
        (Status::Cancelled, fraction(rng, 0.2, 1.0).max(1))
    } else if u < 0.14 {
        (Status::Failed, fraction(rng, 0.02, 1.5))
    } else if u < 0.19 {
        // Killed at the limit, a little past it.
        (Status::Failed, req_time + (unit(rng) * 60.0) as i64)
    } else {
        (Status::Completed, fraction(rng, 0.3, 1.0))
    }
}

/// One generated job (without its times of submission and number).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub user: u32,
    pub group: u32,
    pub partition: u32,
    pub app: u32,
    /// Requested processors.
    pub procs: u64,
    pub req_time: i64,
    pub status: Status,
    pub run: i64,
    pub wait: i64,
    /// Allocated processors; `None` when it never ran.
    pub alloc: Option<u64>,
    pub avg_cpu: Option<i64>,
    pub used_mem_kb: Option<u64>,
    pub req_mem_kb: Option<u64>,
}

impl Job {
    /// CPU-seconds the job allocates.
    pub fn cpu_secs(&self) -> f64 {
        self.alloc.unwrap_or(0) as f64 * self.run as f64
    }
}
