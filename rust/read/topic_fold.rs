//! One partition of an internal topic read into a fold: the step every loader of an internal
//! topic shares (the tables of `read/internal_topics.rs`, and the `__remote_log_metadata`
//! states `read/files.rs` applies to tiered segments).

use crate::error::Result;
use crate::internal::fold::Fold;
use crate::log::discover::SegmentFile;
use crate::log::issues::Issue;
use crate::read::reader::ReaderBuilder;
use std::path::Path;

/// `fold` fed with one partition's `files` (in offset order) as `builder` reads them; an error
/// or an issue of the fold names the file holding its record (`source` where none does).
/// Returns what the reads passed over (torn tails, skipped batches).
pub fn fold_partition(
    builder: &ReaderBuilder,
    source: &Path,
    files: Vec<SegmentFile>,
    fold: &mut Fold,
) -> Result<Vec<Issue>> {
    fold.set_files(
        files
            .iter()
            .map(|f| (f.base_offset.unwrap_or(0), f.path.clone()))
            .collect(),
    );
    let mut reader = builder.clone().build_files(files)?;
    for batch in reader.by_ref() {
        fold.feed(&batch?, Some(source))?;
    }
    Ok(reader.take_issues())
}
