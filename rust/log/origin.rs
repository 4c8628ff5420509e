//! Where records come from: the topic and partition a segment file belongs to, which fill the
//! `topic` and `partition` columns of every record read from it.

/// The per-file constants of the `topic` and `partition` columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The topic, from the partition directory's name `<topic>-<partition>`; `None` when the
    /// file is not in one (the column is then null).
    pub topic: Option<String>,
    /// The partition number, from the same directory name.
    pub partition: Option<i32>,
}
