//! memforest-tree: MemTree node pages, a time-ordered B+ tree with per-level dirty sets, and
//! the cross-tree summary refresh plan (MemForest paper, "MemTree" and Algorithm 1).
//!
//! - [`MemTree`]: insert, delete, time-range query and neighbours in O(log_k N) node pages;
//!   each change dirties only its path.
//! - [`refresh`]: the refresh plan (dirty nodes of many trees, grouped by level, bottom-up),
//!   summary inputs with a stable hash, and stamp-checked `apply_summary`.
//! - [`page`]: the checksummed node page codec (`docs/format/tree-page.md`).
//! - [`store`]: the [`NodeStore`] seam the engine implements, and [`MemNodeStore`].
//!
//! Pure data structure: no threads, no I/O of its own, no LLM.

pub mod config;
pub mod cost;
mod delete;
pub mod dirty;
mod error;
pub mod hash;
mod idhash;
mod insert;
pub mod key;
pub mod kind;
pub mod meta;
pub mod node;
pub mod page;
mod query;
pub mod refresh;
pub mod store;
mod tree;
mod verify;

pub use config::{Branching, ConfigError, TreeConfig};
pub use error::TreeError;
pub use key::{LeafKey, Payload, PayloadKind, TimeRange};
pub use kind::{TreeKind, USER_ENTITY};
pub use node::{ChildRef, LeafEntry, Node, NodeBody, NodeId, Summary, TreeId};
pub use query::Neighbours;
pub use store::{MemNodeStore, NodeStore, PageBatch, PageKey, StoreError};
pub use tree::MemTree;
pub use verify::TreeShape;
