//! `--mail-type`: the job events mail is sent for, with Slurm's names. Parsed by the commands
//! (to refuse a bad list before anything is sent) and by the controller (which sends the mail).

/// A set of mail events (bits below).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MailTypes(pub u16);

impl MailTypes {
    /// The job started.
    pub const BEGIN: u16 = 1 << 0;
    /// The job ended (any state).
    pub const END: u16 = 1 << 1;
    /// The job failed (FAILED, TIMEOUT, NODE_FAIL, DEADLINE, OUT_OF_MEMORY, ...).
    pub const FAIL: u16 = 1 << 2;
    /// The job was requeued.
    pub const REQUEUE: u16 = 1 << 3;
    /// The job reached its time limit.
    pub const TIME_LIMIT: u16 = 1 << 4;
    /// 90% of the time limit.
    pub const TIME_LIMIT_90: u16 = 1 << 5;
    /// 80% of the time limit.
    pub const TIME_LIMIT_80: u16 = 1 << 6;
    /// 50% of the time limit.
    pub const TIME_LIMIT_50: u16 = 1 << 7;
    /// Each array task mails on its own rather than the array as a whole.
    pub const ARRAY_TASKS: u16 = 1 << 8;
    /// A dependency can never be met (and the job is cancelled for it).
    pub const INVALID_DEPEND: u16 = 1 << 9;
    /// Burst buffer stage out done: there are no burst buffers here, so it is never sent,
    /// as in Slurm without a burst buffer plugin.
    pub const STAGE_OUT: u16 = 1 << 10;

    /// `ALL` (Slurm's: not the time limit percentages nor ARRAY_TASKS).
    pub const ALL: u16 = Self::BEGIN
        | Self::END
        | Self::FAIL
        | Self::REQUEUE
        | Self::INVALID_DEPEND
        | Self::STAGE_OUT;

    /// Parses a comma-separated list of Slurm's names (any case); `None` when a name is
    /// unknown. `NONE` clears what came before it.
    pub fn parse(text: &str) -> Option<Self> {
        let mut bits = 0u16;
        for name in text.split(',') {
            let bit = match name.trim().to_ascii_uppercase().as_str() {
                "NONE" => {
                    bits = 0;
                    continue;
                }
                "BEGIN" => Self::BEGIN,
                "END" => Self::END,
                "FAIL" => Self::FAIL,
                "REQUEUE" => Self::REQUEUE,
                "ALL" => Self::ALL,
                "TIME_LIMIT" => Self::TIME_LIMIT,
                "TIME_LIMIT_90" => Self::TIME_LIMIT_90,
                "TIME_LIMIT_80" => Self::TIME_LIMIT_80,
                "TIME_LIMIT_50" => Self::TIME_LIMIT_50,
                "ARRAY_TASKS" => Self::ARRAY_TASKS,
                "INVALID_DEPEND" => Self::INVALID_DEPEND,
                "STAGE_OUT" => Self::STAGE_OUT,
                _ => return None,
            };
            bits |= bit;
        }
        Some(Self(bits))
    }

    /// Whether `bit` is in the set.
    pub fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }

    /// Slurm's `MailType=` text (`BEGIN,END`), `NONE` for the empty set.
    pub fn names(self) -> String {
        const NAMES: [(u16, &str); 11] = [
            (MailTypes::BEGIN, "BEGIN"),
            (MailTypes::END, "END"),
            (MailTypes::FAIL, "FAIL"),
            (MailTypes::REQUEUE, "REQUEUE"),
            (MailTypes::TIME_LIMIT, "TIME_LIMIT"),
            (MailTypes::TIME_LIMIT_90, "TIME_LIMIT_90"),
            (MailTypes::TIME_LIMIT_80, "TIME_LIMIT_80"),
            (MailTypes::TIME_LIMIT_50, "TIME_LIMIT_50"),
            (MailTypes::ARRAY_TASKS, "ARRAY_TASKS"),
            (MailTypes::INVALID_DEPEND, "INVALID_DEPEND"),
            (MailTypes::STAGE_OUT, "STAGE_OUT"),
        ];
        let names: Vec<&str> = NAMES
            .iter()
            .filter(|(bit, _)| self.has(*bit))
            .map(|(_, n)| *n)
            .collect();
        if names.is_empty() {
            "NONE".to_string()
        } else {
            names.join(",")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        let t = MailTypes::parse("begin,End").unwrap();
        assert!(t.has(MailTypes::BEGIN) && t.has(MailTypes::END) && !t.has(MailTypes::FAIL));
        assert_eq!(t.names(), "BEGIN,END");
        let all = MailTypes::parse("ALL").unwrap();
        assert_eq!(
            all.names(),
            "BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT"
        );
        assert_eq!(MailTypes::parse("END,NONE").unwrap(), MailTypes(0));
        assert_eq!(MailTypes(0).names(), "NONE");
        assert_eq!(
            MailTypes::parse("TIME_LIMIT_80").unwrap().0,
            MailTypes::TIME_LIMIT_80
        );
        assert_eq!(MailTypes::parse("SOMETIMES"), None);
        assert_eq!(MailTypes::parse(""), None);
    }
}
