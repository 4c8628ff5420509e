//! Which remote segment serves each offset of a partition.
//!
//! A bucket can hold the same offsets in two segments (KAFKA-15168, KAFKA-16511): a leader
//! uploads a segment, leadership moves before the upload is recorded, and the new leader
//! uploads its own segment over the same offsets, perhaps with other boundaries; or a replica
//! that was later truncated uploaded records the new leader never had. The broker serves a
//! fetch from the segment whose leader epochs match its leader-epoch lineage. Without the
//! `__remote_log_metadata` topic, kafkalog rebuilds that lineage from the segments
//! themselves (the heuristic, documented here):
//!
//! 1. The lineage: for each leader epoch, the lowest start offset any segment gives it.
//!    Epoch `e` then owns offsets from its start up to the start of the next higher epoch.
//! 2. A segment's records are valid while its own epochs agree with the lineage: the first
//!    offset where the segment says epoch `e` but a higher epoch already started is where it
//!    diverged (a replica's log, once divergent, stays so); the segment is valid before that.
//! 3. Among valid ranges, in order of start offset (the longest first on a tie), each offset
//!    is served once: a range inside one already kept is a duplicate and dropped; one that
//!    overlaps the previous kept range cuts that range short at its own start (records at
//!    the same offset and epoch are the same records on every replica, so either copy
//!    serves).

/// One segment, as its manifest (or name and checkpoint) describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The segment's first offset.
    pub base_offset: i64,
    /// Last offset (inclusive), when known.
    pub end_offset: Option<i64>,
    /// `(epoch, start offset)` of the epochs in the segment, by epoch.
    pub leader_epochs: Vec<(i32, i64)>,
}

/// What to do with a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Serve it: every offset, or up to `last` (inclusive) when `Some`.
    Keep {
        /// The last offset to serve from it (inclusive); `None`: all of them.
        last: Option<i64>,
    },
    /// Its records diverge from the lineage from its first offset.
    Diverged,
    /// Every offset it holds is served by another segment.
    Duplicate,
}

fn lineage(candidates: &[Candidate]) -> Vec<(i32, i64)> {
    let mut starts: std::collections::BTreeMap<i32, i64> = Default::default();
    for c in candidates {
        for &(epoch, start) in &c.leader_epochs {
            let s = starts.entry(epoch).or_insert(start);
            *s = (*s).min(start);
        }
    }
    starts.into_iter().collect()
}

/// The last offset (inclusive) of `c` that agrees with `lineage`; `None`: no end known and no
/// divergence.
fn valid_end(c: &Candidate, lineage: &[(i32, i64)]) -> Option<i64> {
    for (i, &(epoch, start)) in c.leader_epochs.iter().enumerate() {
        let own_next = c.leader_epochs.get(i + 1).map(|e| e.1);
        // Where a higher epoch starts, by the lineage.
        let taken_over = lineage
            .iter()
            .filter(|(e, _)| *e > epoch)
            .map(|(_, s)| *s)
            .min();
        let own_until = match (own_next, c.end_offset) {
            (Some(n), _) => Some(n),
            (None, Some(end)) => Some(end.saturating_add(1)),
            (None, None) => None,
        };
        if let Some(t) = taken_over {
            if own_until.is_none_or(|u| t < u) {
                return Some(t.max(start).max(c.base_offset) - 1);
            }
        }
    }
    c.end_offset
}

/// One choice per candidate (all of one partition), in their order.
pub fn choose(candidates: &[Candidate]) -> Vec<Choice> {
    let lineage = lineage(candidates);
    let mut choices = vec![Choice::Duplicate; candidates.len()];
    let mut valid: Vec<(usize, Option<i64>)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let end = valid_end(c, &lineage);
        if end.is_some_and(|e| e < c.base_offset) {
            choices[i] = Choice::Diverged;
        } else {
            valid.push((i, end));
        }
    }
    // By start offset; on a tie, the longest (unknown end first) first.
    valid.sort_by_key(|&(i, end)| {
        (
            candidates[i].base_offset,
            std::cmp::Reverse(end.unwrap_or(i64::MAX)),
        )
    });
    // Kept: (candidate, last offset it serves).
    let mut kept: Vec<(usize, Option<i64>)> = Vec::new();
    for (i, end) in valid {
        let base = candidates[i].base_offset;
        if let Some((prev_i, prev_last)) = kept.last_mut() {
            match *prev_last {
                // An unknown end: it holds offsets up to the next start at least.
                None if candidates[*prev_i].base_offset == base => continue,
                None => *prev_last = Some(base - 1),
                Some(l) if end.is_some_and(|e| e <= l) => continue,
                Some(l) if base <= l => *prev_last = Some(base - 1),
                Some(_) => {}
            }
        }
        kept.push((i, end));
    }
    for (i, last) in kept {
        let c = &candidates[i];
        choices[i] = match last {
            Some(l) if l < c.base_offset => Choice::Duplicate,
            Some(l) if c.end_offset.is_none_or(|e| l < e) => Choice::Keep { last: Some(l) },
            _ => Choice::Keep { last: None },
        };
    }
    choices
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(base: i64, end: i64, epochs: &[(i32, i64)]) -> Candidate {
        Candidate {
            base_offset: base,
            end_offset: Some(end),
            leader_epochs: epochs.to_vec(),
        }
    }

    const ALL: Choice = Choice::Keep { last: None };

    #[test]
    fn disjoint_segments_are_all_kept() {
        let cs = [c(0, 99, &[(0, 0)]), c(100, 199, &[(0, 0), (1, 150)])];
        assert_eq!(choose(&cs), vec![ALL, ALL]);
    }

    #[test]
    fn a_second_upload_of_the_same_segment_is_a_duplicate() {
        let cs = [
            c(0, 99, &[(0, 0)]),
            c(0, 99, &[(0, 0)]),
            c(100, 150, &[(0, 0)]),
        ];
        assert_eq!(choose(&cs), vec![ALL, Choice::Duplicate, ALL]);
    }

    #[test]
    fn overlapping_boundaries_cut_the_earlier_segment() {
        // The new leader's segment starts inside the old leader's one: same epoch, same records.
        let cs = [c(0, 99, &[(3, 0)]), c(80, 180, &[(3, 0), (4, 120)])];
        assert_eq!(choose(&cs), vec![Choice::Keep { last: Some(79) }, ALL]);
    }

    #[test]
    fn records_of_a_truncated_replica_are_not_served() {
        // The old leader wrote 100..=149 in epoch 3 that the new leader (epoch 4 from 100) never
        // had; its segment is valid up to 99 only.
        let old = c(0, 149, &[(3, 0)]);
        let new = c(100, 199, &[(3, 0), (4, 100)]);
        assert_eq!(
            choose(&[old.clone(), new.clone()]),
            vec![Choice::Keep { last: Some(99) }, ALL]
        );
        // Wholly divergent: a segment all in an epoch that had ended before it starts.
        let stale = c(120, 149, &[(3, 120)]);
        assert_eq!(
            choose(&[c(0, 99, &[(3, 0)]), new, stale]),
            vec![ALL, ALL, Choice::Diverged]
        );
    }

    #[test]
    fn unknown_ends_stop_at_the_next_segment() {
        let a = Candidate {
            base_offset: 0,
            end_offset: None,
            leader_epochs: vec![(0, 0)],
        };
        let b = c(50, 70, &[(0, 0)]);
        assert_eq!(
            choose(&[a.clone(), b]),
            vec![Choice::Keep { last: Some(49) }, ALL]
        );
        assert_eq!(
            choose(&[a.clone(), a.clone()]),
            vec![ALL, Choice::Duplicate]
        );
    }
}
