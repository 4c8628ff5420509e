//! What a read passed over without failing ([`Issue`]): torn or preallocated tails, skipped or
//! stopping corrupt batches, unusable indexes; the way `kafka-dump-log` reports invalid bytes at
//! the end of a segment instead of failing.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The kinds of [`Issue`], one spelling each (see [`IssueKind::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssueKind {
    /// Bytes at the end that do not form a complete entry: a torn write or a copy of a live
    /// segment. Not an error; Kafka reports the same as "invalid bytes at the end".
    TornTail,
    /// Zero bytes at the end: space preallocated (`log.preallocate`) and never written.
    ZeroTail,
    /// A corrupt batch was left out (`on_corrupt="skip"`).
    SkippedBatch,
    /// Reading stopped at a corrupt batch (`on_corrupt="stop"`, or "skip" where the size of
    /// an entry is itself broken).
    Stopped,
    /// An index file could not be used for a seek (missing, stale or corrupt): the segment was
    /// scanned instead. The records are the same; only speed suffers.
    IndexIgnored,
}

impl IssueKind {
    /// The issue's name in snake case, as errors' kinds and `verify`'s findings are spelled.
    pub fn name(self) -> &'static str {
        match self {
            IssueKind::TornTail => "torn_tail",
            IssueKind::ZeroTail => "zero_tail",
            IssueKind::SkippedBatch => "skipped_batch",
            IssueKind::Stopped => "stopped",
            IssueKind::IndexIgnored => "index_not_used",
        }
    }
}

/// Something the reader passed over without failing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// What was passed over.
    pub kind: IssueKind,
    /// A sentence for people, saying what happened and what was kept.
    pub message: String,
    /// The segment file, when the bytes came from one.
    pub path: Option<PathBuf>,
    /// Byte position in the file (or buffer) where the passed-over bytes start.
    pub position: u64,
    /// The offset of the batch there, when its header could be read (a batch's base offset).
    pub offset: Option<i64>,
    /// Bytes passed over.
    pub bytes: u64,
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}: ", p.display())?;
        }
        write!(f, "{}", self.message)
    }
}

/// What to do with a batch that fails to decode (bad CRC, bad size, corrupt records, ...):
/// the one policy of every reader, fold and rewrite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnCorrupt {
    /// Raise the error, naming file, position and offset (the default).
    #[default]
    Error,
    /// Leave the batch out, note it, and go on with the next one. Where the entry's size itself
    /// is broken there is no next one to find, and reading stops there.
    Skip,
    /// Stop at the first bad batch and keep what came before, as Kafka's log recovery does.
    Stop,
}

impl OnCorrupt {
    /// Every policy.
    pub const ALL: [OnCorrupt; 3] = [OnCorrupt::Error, OnCorrupt::Skip, OnCorrupt::Stop];

    /// The policy's name, as the Python API spells it.
    pub fn name(self) -> &'static str {
        match self {
            OnCorrupt::Error => "error",
            OnCorrupt::Skip => "skip",
            OnCorrupt::Stop => "stop",
        }
    }

    /// The policy named `error` (or `raise`), `skip` or `stop`, as the Python API spells it.
    pub fn from_name(name: &str) -> Result<Self> {
        Self::from_name_among(name, &Self::ALL)
    }

    /// The policy named `name`, which must be one of `allowed` (an operation that cannot stop
    /// part-way, such as a rewrite, allows only `error` and `skip`).
    pub fn from_name_among(name: &str, allowed: &[OnCorrupt]) -> Result<Self> {
        let found = match name {
            "error" | "raise" => Some(OnCorrupt::Error),
            "skip" => Some(OnCorrupt::Skip),
            "stop" => Some(OnCorrupt::Stop),
            _ => None,
        };
        match found {
            Some(policy) if allowed.contains(&policy) => Ok(policy),
            _ => {
                let names: Vec<String> =
                    allowed.iter().map(|p| format!("{:?}", p.name())).collect();
                let list = match names.split_last() {
                    Some((last, [])) => last.clone(),
                    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                    None => String::new(),
                };
                Err(Error::invalid_argument(format!(
                    "on_corrupt must be {list}, not {name:?}"
                )))
            }
        }
    }
}
