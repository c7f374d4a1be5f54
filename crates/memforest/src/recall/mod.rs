//! The memory read path: `Memory::query` (BM25 postings, forest recall, beam browse,
//! knowledge updates, time and snapshot filters), `QueryResult::context`, tree heat and
//! the heat-managed page cache, and `Memory::profile`.
//!
//! - [`bm25`]: the one BM25 scorer (and the in-memory [`Bm25Index`] baseline).
//! - `accumulate`: a query's BM25 totals by merging its sorted posting lists.
//! - [`index`]: the persistent per-tenant postings (table `Postings`); `postings`: the
//!   in-memory cache of decoded posting lists.
//! - `expand`: a query's related terms, from the embedder; `search`: the query pipeline;
//!   `browse`: beam search in one tree; `fuse`: the final ranking by source turn (and
//!   time, for temporal questions); `turn_cache`: the in-memory cache of source turns'
//!   term counts.
//! - `heat`, `cache`: MemoryOS heat and the page cache it governs; `summaries`: the
//!   cache of node summaries' term counts (what a browse reads most pages for);
//!   `lru`: the byte-bounded LRU behind the in-memory caches.
//! - `vectors`: the fact embeddings a query finds facts by meaning with; `vector_cache`:
//!   a tenant's vectors as one in-memory matrix; `hybrid`: the final lexical and dense
//!   combination; `write_through`: commits keeping the postings and vector caches current;
//! - `update`: knowledge updates; `context`: rendering; [`profile`].

use std::sync::Arc;

pub(crate) mod accumulate;
pub mod bm25;
pub(crate) mod browse;
pub(crate) mod cache;
pub(crate) mod context;
pub(crate) mod expand;
pub(crate) mod fuse;
pub(crate) mod heat;
pub(crate) mod hybrid;
pub mod index;
pub(crate) mod intent;
pub(crate) mod lru;
pub mod page;
pub(crate) mod postings;
pub mod profile;
pub mod query;
pub(crate) mod reader;
pub(crate) mod reply;
pub(crate) mod scope;
pub(crate) mod search;
pub(crate) mod summaries;
pub(crate) mod turn_cache;
pub(crate) mod update;
pub(crate) mod vector_cache;
pub(crate) mod vectors;
pub(crate) mod write_through;

pub use bm25::Bm25Index;
pub use profile::{CurrentValue, EntityProfile, Profile};
pub use query::{Mode, Provenance, Query, QueryResult, RecalledFact, RecentTurn};
pub use vectors::NO_EMBEDDER;

/// The read path's in-memory state of one open `Db`: tree heat, the page cache, the
/// postings cache, the turn cache and the vector cache.
#[derive(Debug, Default)]
pub struct RecallState {
    /// Visit counts per tree.
    pub heat: heat::HeatMap,
    /// Decoded node pages.
    pub cache: cache::PageCache,
    /// Term counts of node summaries.
    pub summaries: summaries::SummaryCache,
    /// Decoded posting lists (kept current by commits: `recall::write_through`).
    pub postings: Arc<postings::PostingsCache>,
    /// Term counts of source turns.
    pub turns: turn_cache::TurnCache,
    /// Fact vectors per tenant (kept current by commits: `recall::write_through`).
    pub vectors: Arc<vector_cache::VectorCache>,
}

impl RecallState {
    /// The caches that commits keep current.
    pub(crate) fn write_through(&self) -> write_through::Caches {
        write_through::Caches {
            postings: Arc::clone(&self.postings),
            vectors: Arc::clone(&self.vectors),
        }
    }

    /// Drops everything cached about `tenant`'s trees (after a forget).
    pub fn forget_tenant(&self, tenant: &memforest_engine::TenantId) {
        self.cache.forget_tenant(tenant);
        self.summaries.forget_tenant(tenant);
        self.postings.forget_tenant(tenant);
        self.turns.forget_tenant(tenant);
        self.vectors.forget_tenant(tenant);
    }
}

impl crate::Memory {
    /// The read path's state.
    pub(crate) fn recall_state(&self) -> &RecallState {
        &self.recall
    }
}
