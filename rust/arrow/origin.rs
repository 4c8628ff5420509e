//! Where records come from: the topic and partition a segment file belongs to, which fill the
//! `topic` and `partition` columns of every record read from it.

/// The per-file constants of the `topic` and `partition` columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    pub topic: Option<String>,
    pub partition: Option<i32>,
}
