//! MemForest: durable long-term memory for AI agents.
//!
//! Conversation turns and the canonical facts extracted from them go through the
//! `memforest-engine` LSM (write-ahead log, memtable, checksummed segment files); each
//! scope (a session, an entity such as the user, a scene) owns a MemTree, a time-ordered
//! B+ tree whose leaves are facts and whose internal nodes carry summaries, regenerated in
//! the background so no model call is on the write path. A query recalls the best trees
//! and browses down to facts with time tags. Open a store with [`Memory::open`].
#![deny(clippy::indexing_slicing)]

pub mod api;
mod builder;
pub mod filter_scope;
mod handle;
pub mod lifecycle;
pub mod memory;
pub mod node_store;
pub mod recall;
pub mod schema;
mod verify;

pub use api::{
    Added, BadMemoryId, Deleted, Hit, ListOptions, MemoryId, MemoryRecord, Message, SearchOptions,
    Source, Version,
};
pub use builder::MemoryBuilder;
pub use handle::{Memory, Options};
pub use memory::session::Role;
pub use memory::{MemoryError, MemoryOptions};
pub use node_store::{EngineNodeStore, SnapshotNodeStore, StagedNodeStore};
pub use recall::Profile;
pub use verify::MemoryVerifyReport;
