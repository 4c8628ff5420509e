//! The one error type of kafkalog.
//!
//! Every failure carries what a person (or a program) needs to find the bad bytes: the file, the
//! byte position of the batch (log entry) in it, and the batch's offset when it could be read.
//! The format layer fills `position` and `offset`; the reader adds `path`. The Python bindings map
//! [`ErrorKind`] to the exception classes in `kafkalog.errors`, in one place.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, as a category a program can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes do not form a valid batch or record (bad size, bad varint, overrun, ...).
    Corrupt,
    /// A stored CRC does not match the bytes it covers.
    CrcMismatch,
    /// A compressed stream could not be decompressed.
    Decompression,
    /// A configured limit was reached (decompressed size, batch size, ...).
    LimitExceeded,
    /// The caller asked for something impossible (bad option, bad column, bad input table).
    InvalidArgument,
    /// The operating system failed a read or write.
    Io,
    /// Another writer holds the partition directory being written.
    Conflict,
    /// A bug in kafkalog (a panic, caught before it could reach the caller).
    Internal,
    /// A tiered-storage segment's objects disagree with each other: a manifest that does not
    /// parse, a chunk index that does not fit the object, a chunk of the wrong size.
    TieredStorage,
    /// An encrypted tiered-storage object does not decrypt: a chunk or index whose AES-GCM tag
    /// fails, or a data key that does not unwrap to an AES-256 key.
    Decryption,
    /// An encryption key given for tiered storage cannot be used: missing for a segment that
    /// needs it, not an RSA private key, or not the key the segment's data key was wrapped with.
    EncryptionKey,
    /// A record's key or value does not decode with its schema (Schema Registry framing, an
    /// unknown schema id, bytes that are not valid for the schema, text that is not UTF-8).
    Value,
    /// A file read as a segment whose first entry cannot be one Kafka wrote (an offset outside
    /// the segment's range, a magic byte other than 0-2, a size below the smallest entry): not
    /// a Kafka log at all, rather than a log with a torn tail.
    NotASegment,
}

impl ErrorKind {
    /// The kind's snake-case name, as the Python exceptions' `kind` attribute has it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::CrcMismatch => "crc_mismatch",
            ErrorKind::Decompression => "decompression",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Io => "io",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Internal => "internal",
            ErrorKind::TieredStorage => "tiered_storage",
            ErrorKind::Decryption => "decryption",
            ErrorKind::EncryptionKey => "encryption_key",
            ErrorKind::Value => "value",
            ErrorKind::NotASegment => "not_a_segment",
        }
    }
}

/// A kafkalog failure: its kind, a message, and where the bad bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// What went wrong, for a person (without the location, which [`fmt::Display`] adds).
    pub message: String,
    /// The file the bytes came from, when they came from a file.
    pub path: Option<PathBuf>,
    /// Byte position, in the file or buffer, of the log entry (batch) the error is in.
    pub position: Option<u64>,
    /// The offset of that batch as its header states it (base offset for v2, the entry's offset
    /// for v0/v1), when the header could be read.
    pub offset: Option<i64>,
    /// For [`ErrorKind::Io`]: what the operating system or the object store said went wrong
    /// (missing, refused, ...), so that callers can tell a missing file from a failing disk.
    pub io_kind: Option<std::io::ErrorKind>,
    /// The operating system's error number, for [`ErrorKind::Io`] errors that came from one.
    pub errno: Option<i32>,
}

/// kafkalog's `Result`: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of `kind`, not yet located.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            path: None,
            position: None,
            offset: None,
            io_kind: None,
            errno: None,
        }
    }

    /// Bytes that are not a valid batch or record.
    pub fn corrupt(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Corrupt, message)
    }

    /// An option or input the caller should not have given.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// An I/O error on `path`, keeping the operating system's kind and number.
    pub fn io(err: std::io::Error, path: &Path) -> Self {
        Error::io_error(err).with_path(path)
    }

    /// An I/O error not yet tied to a path.
    pub fn io_error(err: std::io::Error) -> Self {
        Error {
            io_kind: Some(err.kind()),
            errno: err.raw_os_error(),
            ..Error::new(ErrorKind::Io, err.to_string())
        }
    }

    /// Whether this is an I/O error for a file or object that is not there.
    pub fn is_not_found(&self) -> bool {
        self.io_kind == Some(std::io::ErrorKind::NotFound)
    }

    /// Sets the position unless an inner layer already set a more precise one.
    pub fn at(mut self, position: u64) -> Self {
        self.position.get_or_insert(position);
        self
    }

    /// Sets the batch's offset unless an inner layer already set it.
    pub fn with_offset(mut self, offset: i64) -> Self {
        self.offset.get_or_insert(offset);
        self
    }

    /// Sets the file unless an inner layer already set it.
    pub fn with_path(mut self, path: &Path) -> Self {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        f.write_str(&self.message)?;
        match (self.position, self.offset) {
            (Some(p), Some(o)) => write!(f, " (batch at byte position {p}, offset {o})"),
            (Some(p), None) => write!(f, " (at byte position {p})"),
            (None, Some(o)) => write!(f, " (batch offset {o})"),
            (None, None) => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

/// Runs `f`, turning a panic (a kafkalog bug) into an [`ErrorKind::Internal`] error, so that
/// no panic crosses into Python or ends a worker thread without a word.
pub fn catch_panic<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Error::new(
            ErrorKind::Internal,
            format!("internal error in kafkalog (please report it): {what}"),
        ))
    })
}

/// The name of `names` nearest to `given` (a misspelt option: `valueSubjet`), for an error's
/// "did you mean": the fewest letters inserted, removed or changed, case and `_`/`-`/`.`
/// ignored, and close enough to be the one meant (at most a third of its letters, at least
/// two, differ); `None` when none is.
pub fn nearest_name<'a>(given: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let g = fold(given);
    names
        .into_iter()
        .map(|n| (edit_distance(&g, &fold(n)), n))
        .filter(|(d, n)| *d <= (fold(n).len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein's distance: the fewest insertions, removals and changes from `a` to `b`.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod nearest_tests {
    use super::nearest_name;

    #[test]
    fn the_nearest_name_is_the_one_meant() {
        let names = ["valueSubject", "valueSubjects", "keySubject", "valueFormat"];
        assert_eq!(nearest_name("valueSubjet", names), Some("valueSubject"));
        assert_eq!(nearest_name("valuesubjet", names), Some("valueSubject"));
        assert_eq!(nearest_name("value_subjet", names), Some("valueSubject"));
        assert_eq!(nearest_name("VALUEFORMT", names), Some("valueFormat"));
        assert_eq!(
            nearest_name("startingOffset", ["startingOffsets"]),
            Some("startingOffsets")
        );
        assert_eq!(nearest_name("colour", names), None);
        assert_eq!(nearest_name("", names), None);
    }
}
