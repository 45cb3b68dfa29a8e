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
fn tasks_sum_into_totals_with_the_largest_task_named() {
    let u = StepUsage::from_tasks(&[task(0, 0, 500, 4096), task(1, 1, 100, 8192)]).unwrap();
    assert_eq!((u.tasks, u.user_cpu_ms, u.sys_cpu_ms), (2, 600, 20));
    assert_eq!(u.total_cpu_ms(), 620);
    let i = &u.usage_in;
    assert_eq!(i.tot.get(TRES_MEM), Some(12288));
    assert_eq!(i.max.get(TRES_MEM), Some(8192));
    assert_eq!(i.max_task.get(TRES_MEM), Some(1));
    assert_eq!(i.max_node.get(TRES_MEM), Some(1));
    assert_eq!(i.max.get(TRES_CPU), Some(510));
    assert_eq!(i.max_task.get(TRES_CPU), Some(0));
    assert_eq!(i.min.get(TRES_CPU), Some(110));
    assert_eq!(
        (i.min_task.get(TRES_CPU), i.min_node.get(TRES_CPU)),
        (Some(1), Some(1))
    );
    assert_eq!(
        (i.min_task.get(TRES_MEM), i.min_node.get(TRES_MEM)),
        (Some(0), Some(0))
    );
    assert_eq!(i.ave.get(TRES_CPU), Some(310));
    assert_eq!(u.usage_out.tot.get(TRES_FS_DISK), Some(7));
    assert_eq!(u.usage_out.max_task.get(TRES_FS_DISK), Some(1));
    assert_eq!(StepUsage::from_tasks(&[]), None);
}
