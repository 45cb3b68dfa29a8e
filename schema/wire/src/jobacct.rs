//! The wire form of a step's usage ([`StepUsage`]): TRES maps travel as Slurm's `id=value`
//! strings, so the accounting daemon can store them as they come.

use sluice_vocab::jobacct::{StepUsage, TresMap, UsageSide};

use crate::proto;

/// Converts [`StepUsage`] to and from its protobuf message.
pub trait StepUsageWire: Sized {
    /// The wire form.
    fn to_proto(&self) -> proto::StepUsage;
    /// From the wire form; `None` when a TRES string is malformed.
    fn from_proto(p: &proto::StepUsage) -> Option<Self>;
}

impl StepUsageWire for StepUsage {
    fn to_proto(&self) -> proto::StepUsage {
        let side = |s: &UsageSide| proto::UsageSide {
            tot: s.tot.to_string(),
            max: s.max.to_string(),
            max_task: s.max_task.to_string(),
            max_node: s.max_node.to_string(),
            min: s.min.to_string(),
            ave: s.ave.to_string(),
            min_task: s.min_task.to_string(),
            min_node: s.min_node.to_string(),
        };
        proto::StepUsage {
            tasks: self.tasks,
            user_cpu_ms: self.user_cpu_ms,
            sys_cpu_ms: self.sys_cpu_ms,
            usage_in: Some(side(&self.usage_in)),
            usage_out: Some(side(&self.usage_out)),
        }
    }

    fn from_proto(p: &proto::StepUsage) -> Option<Self> {
        let side = |s: &Option<proto::UsageSide>| -> Option<UsageSide> {
            let Some(s) = s else {
                return Some(UsageSide::default());
            };
            Some(UsageSide {
                tot: TresMap::parse(&s.tot)?,
                max: TresMap::parse(&s.max)?,
                max_task: TresMap::parse(&s.max_task)?,
                max_node: TresMap::parse(&s.max_node)?,
                min: TresMap::parse(&s.min)?,
                min_task: TresMap::parse(&s.min_task)?,
                min_node: TresMap::parse(&s.min_node)?,
                ave: TresMap::parse(&s.ave)?,
            })
        };
        Some(Self {
            tasks: p.tasks,
            user_cpu_ms: p.user_cpu_ms,
            sys_cpu_ms: p.sys_cpu_ms,
            usage_in: side(&p.usage_in)?,
            usage_out: side(&p.usage_out)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use sluice_vocab::jobacct::TaskUsage;

    use super::*;

    fn task(task: u32, node: u32, cpu: u64, rss: u64) -> TaskUsage {
        TaskUsage {
            task,
            node,
            user_ms: cpu,
            sys_ms: 10,
            rss,
            vmem: rss * 2,
            pages: 1,
            read: 100,
            write: 7 * u64::from(task),
        }
    }

    #[test]
    fn the_wire_form_round_trips_and_bad_strings_are_refused() {
        let u = StepUsage::from_tasks(&[task(0, 0, 5, 1024), task(3, 2, 9, 2048)]).unwrap();
        let p = u.to_proto();
        assert_eq!(
            p.usage_in.as_ref().unwrap().max,
            "1=19,2=2048,6=100,7=4096,8=1"
        );
        assert_eq!(StepUsage::from_proto(&p), Some(u));
        let mut bad = p;
        bad.usage_in.as_mut().unwrap().tot = "cpu=1".into();
        assert_eq!(StepUsage::from_proto(&bad), None);
        assert_eq!(TresMap::parse(""), Some(TresMap::default()));
        assert_eq!(TresMap::parse("1=2,x"), None);
    }
}
