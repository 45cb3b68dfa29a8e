//! Usage of one TRES over a period, and Slurm's rules for settling the raw sums of an hour.

/// Seconds of each kind over a period, for one cluster and TRES (TRES-seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct UsageSecs {
    /// The TRES count at the end of the period.
    pub count: u64,
    /// Capacity over the period (Slurm's "reported").
    pub total: u64,
    pub alloc: u64,
    pub down: u64,
    pub pdown: u64,
    pub idle: u64,
    pub plan: u64,
    pub over: u64,
}

impl UsageSecs {
    /// Settles raw sums with Slurm's rules (see [`crate::rollup`]); `clipped` is whether
    /// allocated + down + planned down exceeded the total.
    pub fn settle(
        count: u64,
        total: u64,
        alloc: u64,
        down: u64,
        pdown: u64,
        plan: u64,
    ) -> (Self, bool) {
        let clipped = alloc.saturating_add(down).saturating_add(pdown) > total;
        let alloc = alloc.min(total);
        let down = down.min(total - alloc);
        let pdown = pdown.min(total - alloc - down);
        let free = total - alloc - down - pdown;
        let over = plan.saturating_sub(free);
        let plan = plan - over;
        let usage = Self {
            count,
            total,
            alloc,
            down,
            pdown,
            idle: free - plan,
            plan,
            over,
        };
        (usage, clipped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_down_and_planned_down_are_clipped_in_that_order() {
        let (u, clipped) = UsageSecs::settle(1, 100, 70, 20, 30, 5);
        assert!(clipped);
        assert_eq!(
            (u.alloc, u.down, u.pdown, u.idle, u.plan, u.over),
            (70, 20, 10, 0, 0, 5)
        );
        let (u, clipped) = UsageSecs::settle(1, 100, 150, 20, 0, 0);
        assert!(clipped);
        assert_eq!((u.alloc, u.down, u.idle), (100, 0, 0));
        let (u, clipped) = UsageSecs::settle(1, 100, 10, 10, 10, 30);
        assert!(!clipped);
        assert_eq!((u.idle, u.plan, u.over, u.total), (40, 30, 0, 100));
    }
}
