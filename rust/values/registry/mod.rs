//! Schema Registry's storage topic (`_schemas`): folded into the registry that typed keys and
//! values are read with, and written as the registry writes it. The registry itself
//! ([`Registry`] and what it holds) is named from here, wherever it was folded.
//!
//! | file | what |
//! |---|---|
//! | `fold.rs` | Schema Registry's schemas folded from its storage topic, or given directly; lookups by id, GUID, subject and version; the registry as a table |
//! | `records.rs` | the storage topic's records written as the registry writes them (versions, ids, references, deletes by its rules), and the registry exported as its REST API imports it |

mod fold;
pub mod records;

pub use fold::{context_of, Reference, Registered, Registry, RegistrySchemas};
