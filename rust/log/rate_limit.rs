//! Spark Kafka's `maxOffsetsPerTrigger`: a micro-batch's budget of offsets shared among
//! partitions by their backlog. It is Spark's meaning of an option rather than a rule of Kafka's
//! files, and lives here once so that both Spark sources (the Python one,
//! `python/kafkalog/spark/streaming.py`, and the JVM one, `jvm/.../KafkaLogStream.java`) cut the
//! same micro-batches from the same offsets.

/// Each partition's end offset for one micro-batch of at most `limit` offsets in all.
///
/// `ranges` holds each partition's `(start, latest)`: the next offset to read and the latest
/// offset there is, in the caller's order. Where the backlogs (`latest - start`, those above
/// zero) add up to at most `limit`, every partition reads to its latest offset. Otherwise each
/// partition with a backlog gets `limit * backlog / total` offsets (rounded down, and at least
/// one, as Spark's Kafka source rounds shares below one up); what the rounded-up shares take
/// beyond `limit` is taken back from the largest shares first (in `ranges`' order among equal
/// ones). A partition without a backlog ends at its `latest`.
pub fn rate_limit(ranges: &[(i64, i64)], limit: u64) -> Vec<i64> {
    let backlog: Vec<i128> = ranges
        .iter()
        .map(|&(start, latest)| (i128::from(latest) - i128::from(start)).max(0))
        .collect();
    let total: i128 = backlog.iter().sum();
    let limit = i128::from(limit);
    if total <= limit {
        return ranges.iter().map(|&(_, latest)| latest).collect();
    }
    // The exact quotient rounded down (limit * size fits in i128: both are below 2^64).
    let mut share: Vec<i128> = backlog
        .iter()
        .map(|&size| {
            if size == 0 {
                0
            } else {
                (limit * size / total).max(1)
            }
        })
        .collect();
    let mut over = share.iter().sum::<i128>() - limit;
    let mut largest: Vec<usize> = (0..share.len()).filter(|&k| backlog[k] > 0).collect();
    largest.sort_by(|&a, &b| share[b].cmp(&share[a])); // stable: ties keep their order
    for k in largest {
        if over <= 0 {
            break;
        }
        let take = over.min(share[k]);
        share[k] -= take;
        over -= take;
    }
    ranges
        .iter()
        .zip(backlog.iter().zip(share))
        .map(|(&(start, latest), (&size, share))| {
            if size > 0 {
                // start + share <= latest: a share never exceeds its backlog.
                (i128::from(start) + share) as i64
            } else {
                latest
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rate_limit;

    #[test]
    fn everything_when_the_backlog_fits() {
        assert_eq!(rate_limit(&[(0, 5), (3, 3), (2, 9)], 12), vec![5, 3, 9]);
        assert_eq!(rate_limit(&[], 10), Vec::<i64>::new());
    }

    #[test]
    fn shares_by_backlog_rounded_down() {
        // Backlogs 30 and 10 of a budget of 8: 6 and 2.
        assert_eq!(rate_limit(&[(100, 130), (0, 10)], 8), vec![106, 2]);
        // 7 * 10 / 30 = 2.33 -> 2 each, 6 in all (never more than the limit).
        assert_eq!(rate_limit(&[(0, 10), (0, 10), (0, 10)], 7), vec![2, 2, 2]);
    }

    #[test]
    fn small_shares_round_up_and_the_largest_give_it_back() {
        // Backlogs 1000, 1, 1 with a budget of 10: shares 9, 1, 1 (the small ones rounded up
        // from 0.01), one too many, taken back from the largest.
        let got = rate_limit(&[(0, 1000), (0, 1), (0, 1)], 10);
        assert_eq!(got, vec![8, 1, 1]);
        // More partitions with a backlog than offsets in the budget: shares of one, taken back
        // from the first (in order among equal shares).
        let got = rate_limit(&[(0, 1), (0, 1), (0, 1), (5, 6)], 2);
        assert_eq!(got, vec![0, 0, 1, 6]);
    }

    #[test]
    fn never_past_latest_nor_before_start() {
        let ranges = [(7, 3), (0, 50), (10, 10), (1, 2)];
        for limit in 1..60 {
            let got = rate_limit(&ranges, limit);
            let mut read = 0;
            for (&(start, latest), &end) in ranges.iter().zip(&got) {
                if latest > start {
                    assert!(start <= end && end <= latest, "{limit}: {got:?}");
                    read += end - start;
                } else {
                    assert_eq!(end, latest);
                }
            }
            assert!(read <= limit as i64, "{limit}: {got:?}");
        }
    }

    #[test]
    fn huge_offsets_do_not_overflow() {
        let got = rate_limit(&[(0, i64::MAX), (0, i64::MAX / 2)], u64::MAX >> 1);
        assert!(got[0] > 0 && got[1] > 0);
    }
}
