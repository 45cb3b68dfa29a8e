//! Job-size buckets of `sreport job SizesByAccount`: a job falls in the bucket of its
//! allocated TRES count (CPUs by default). Slurm's default grouping `50,250,500,1000` gives
//! the buckets `0-49`, `50-249`, `250-499`, `500-999` and `>= 1000`.

/// Slurm's default grouping.
pub const DEFAULT_GROUPING: [u64; 4] = [50, 250, 500, 1000];

/// The lower bounds of the buckets after the first (which starts at 0): ascending, without
/// zeros or repeats; the default grouping when none is left.
pub fn normalize(grouping: &[u64]) -> Vec<u64> {
    let mut bounds: Vec<u64> = grouping.iter().copied().filter(|&b| b > 0).collect();
    bounds.sort_unstable();
    bounds.dedup();
    if bounds.is_empty() {
        DEFAULT_GROUPING.to_vec()
    } else {
        bounds
    }
}

/// The number of buckets `bounds` (normalized) makes.
pub fn bucket_count(bounds: &[u64]) -> usize {
    bounds.len() + 1
}

/// The bucket of a job of size `count`: how many bounds are at or below it.
pub fn bucket_of(count: u64, bounds: &[u64]) -> usize {
    bounds.partition_point(|&b| b <= count)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn slurms_default_buckets() {
        let b = normalize(&[]);
        assert_eq!(b, DEFAULT_GROUPING);
        assert_eq!(bucket_count(&b), 5);
        let cases = [
            (0, 0),
            (1, 0),
            (49, 0),
            (50, 1),
            (249, 1),
            (250, 2),
            (999, 3),
            (1_000, 4),
            (u64::MAX, 4),
        ];
        for (count, bucket) in cases {
            assert_eq!(bucket_of(count, &b), bucket, "{count} CPUs");
        }
        assert_eq!(normalize(&[8, 0, 2, 8]), vec![2, 8]);
    }

    proptest! {
        #[test]
        fn a_bucket_holds_its_sizes(grouping in prop::collection::vec(0u64..5_000, 0..6), count in 0u64..10_000) {
            let b = normalize(&grouping);
            let i = bucket_of(count, &b);
            prop_assert!(i < bucket_count(&b));
            if i > 0 { prop_assert!(b[i - 1] <= count); }
            if i < b.len() { prop_assert!(count < b[i]); }
        }
    }
}
