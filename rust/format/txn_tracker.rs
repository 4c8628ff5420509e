//! Transactions followed batch by batch, as a broker follows them when it appends or recovers
//! (`ProducerStateManager`'s `ProducerAppendInfo`): a producer's first transactional data batch
//! opens its transaction, its COMMIT or ABORT marker closes it, and an ABORT of a transaction
//! with data is the `.txnindex` entry ([`AbortedTxn`]) for it (docs/format.md §4, §5.8).

use crate::format::control::ControlType;
use crate::format::index::AbortedTxn;
use std::collections::BTreeMap;

/// Follows transactions batch by batch, as a broker does when it appends or recovers: the
/// first transactional data batch of a producer opens its transaction, its marker closes it.
/// An ABORT marker for a transaction with data yields the `.txnindex` entry for it.
#[derive(Clone, Debug, Default)]
pub struct TxnTracker {
    /// producer id -> first offset of its open transaction.
    open: BTreeMap<i64, i64>,
}

impl TxnTracker {
    /// A tracker that starts with these transactions open: (producer id, first offset).
    pub fn with_open(open: impl IntoIterator<Item = (i64, i64)>) -> Self {
        TxnTracker {
            open: open.into_iter().collect(),
        }
    }

    /// Takes in one batch; returns the aborted transaction an ABORT marker closes.
    pub fn on_batch(
        &mut self,
        producer_id: i64,
        is_transactional: bool,
        control: Option<ControlType>,
        base_offset: i64,
        last_offset: i64,
    ) -> Option<AbortedTxn> {
        if producer_id < 0 || !is_transactional {
            return None;
        }
        match control {
            Some(kind @ (ControlType::Abort | ControlType::Commit)) => {
                let first_offset = self.open.remove(&producer_id)?;
                (kind == ControlType::Abort).then(|| AbortedTxn {
                    version: 0,
                    producer_id,
                    first_offset,
                    last_offset,
                    // The first offset of the earliest transaction still open, else the next.
                    last_stable_offset: self
                        .open
                        .values()
                        .copied()
                        .min()
                        .unwrap_or(last_offset + 1),
                })
            }
            Some(_) => None,
            None => {
                self.open.entry(producer_id).or_insert(base_offset);
                None
            }
        }
    }

    /// The last stable offset: the first offset of the earliest transaction still open.
    pub fn last_stable_offset(&self) -> Option<i64> {
        self.open.values().copied().min()
    }
}
