//! MemForest: durable long-term memory for AI agents.
//!
//! Conversation turns and the canonical facts extracted from them go through the
//! `memforest-engine` LSM (write-ahead log, memtable, checksummed segment files); each
//! scope (a session, an entity such as the user, a scene) owns a MemTree, a time-ordered
//! B+ tree whose leaves are facts and whose internal nodes carry summaries, regenerated in
//! the background so no model call is on the write path. A query recalls the best trees
//! and browses down to facts with time tags. Open a store with [`Memory::open`].
//!
//! Everything a user names is at the crate root, so a crate that depends on `memforest`
//! alone can use the whole API:
//!
//! - the handle and its calls' types: [`Memory`], [`Options`], [`MemoryOptions`],
//!   [`Message`], [`SearchOptions`], [`Hit`], [`MemoryRecord`], [`MemoryError`], ...;
//! - the extension points a model backend implements (`memforest-llm` has the
//!   OpenAI-compatible ones): [`Extractor`] (with [`ExtractionInput`], [`Extraction`],
//!   [`ExtractedItem`]), [`Summarizer`] (with [`SummaryRequest`], [`SummaryOutput`]),
//!   [`Embedder`] (with [`Embeddings`]), their [`ModelError`] and [`Usage`], and the
//!   defaults [`HeuristicExtractor`], [`ExtractiveSummarizer`], [`StaticEmbedder`];
//! - the engine: [`engine`] is the `memforest-engine` crate (its [`engine::Options`], the
//!   `Options::engine` field, with the types of its fields, and its [`engine::Error`],
//!   inside [`MemoryError::Engine`]); [`Db`], [`Durability`], [`InputError`],
//!   [`OpenReport`], [`Snapshot`] and [`TenantId`] are also at the root;
//! - the trees: [`tree`] is the `memforest-tree` crate ([`TreeConfig`], [`TreeKind`],
//!   [`TimeRange`] at the root).
//!
//! The modules below hold the layers these are built from; their items are for tests,
//! benchmarks and the other crates of this workspace.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use memforest::{ListOptions, Memory, Message, SearchOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tmp = tempfile::tempdir()?;
//! # let dir = tmp.path().join("memory");
//! let mem = Memory::open(&dir)?; // offline defaults: no model server, no network
//! let jan = Utc.with_ymd_and_hms(2024, 1, 10, 9, 0, 0).single().ok_or("date")?;
//! mem.add("alice", "s1", &[
//!     Message::user("I live in Paris and work as a nurse.").by("Alice").at(jan),
//!     Message::assistant("Paris is a lovely city to live in!").at(jan),
//! ])?;
//! let hits = mem.search("alice", "Where does Alice live?", &SearchOptions::default())?;
//! let paris = hits.iter().find(|h| h.text.contains("Paris")).ok_or("no hit")?.id;
//!
//! let berlin = mem.update("alice", paris, "Alice lives in Berlin.")?; // Paris stays in history
//! let latest = SearchOptions { latest_only: true, ..SearchOptions::default() };
//! let now = mem.search("alice", "Where does Alice live?", &latest)?;
//! assert!(now.iter().any(|h| h.id == berlin) && now.iter().all(|h| h.id != paris));
//! assert_eq!(mem.history("alice", berlin)?.len(), 2);
//!
//! mem.delete_user("alice")?; // `purge()` then removes the bytes from every file
//! mem.close()?;
//! let mem = Memory::open(&dir)?; // durable: a reopen gives the same answers
//! assert!(mem.list("alice", &ListOptions::default())?.is_empty());
//! # mem.close()?;
//! # Ok(())
//! # }
//! ```
#![deny(clippy::indexing_slicing)]

pub mod api;
mod builder;
pub mod embedder;
pub mod filter_scope;
mod handle;
pub mod lifecycle;
pub mod memory;
pub mod node_store;
pub mod recall;
mod replica;
pub mod schema;
mod verify;

pub use api::{
    AddOptions, Added, BadMemoryId, Deleted, Hit, ListOptions, MemoryId, MemoryRecord, Message,
    SearchOptions, Source, UserStats, MAX_K,
};
pub use builder::MemoryBuilder;
pub use embedder::StaticEmbedder;
pub use handle::{Memory, Options};
pub use lifecycle::PurgeReport;
pub use memory::cell::CellLimits;
pub use memory::embed::{Embedder, Embeddings};
pub use memory::extract::{
    BatchExtraction, CellTurn, ExtractedItem, Extraction, ExtractionInput, Extractor,
    HeuristicExtractor, Origin, SemanticRole,
};
pub use memory::model::{ModelError, Usage};
pub use memory::session::Role;
pub use memory::summarize::{
    BatchSummary, ExtractiveSummarizer, Summarizer, SummaryOutput, SummaryRequest,
};
pub use memory::{MemoryError, MemoryOptions, MemoryStats};
pub use node_store::{EngineNodeStore, SnapshotNodeStore, StagedNodeStore};
pub use recall::{CurrentValue, EntityProfile, Profile};
pub use verify::MemoryVerifyReport;

/// The MemTree crate, for the types a summarizer reads ([`SummaryRequest`]'s kind, time
/// and children: [`tree::refresh::ChildSummary`]) and the tree options
/// ([`MemoryOptions::trees`]).
pub use memforest_tree as tree;
pub use memforest_tree::{TimeRange, TreeConfig, TreeKind};

/// The storage engine under the memory store, for the types its API uses
/// ([`engine::Options`], [`engine::Error`], ...).
pub use memforest_engine as engine;
pub use memforest_engine::{Db, Durability, InputError, OpenReport, Snapshot, TenantId};
