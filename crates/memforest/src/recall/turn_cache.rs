//! [`TurnCache`]: the term counts of the turns of the MemCells read by the fusion step
//! ([`crate::recall::fuse`]), one entry per cell, kept in memory (bounded in bytes, least
//! recently used evicted first: `ByteLru`), so a query neither re-reads the cell record
//! and its turns nor re-tokenizes them each time. It holds term hashes and lengths, never
//! text.
//!
//! Validity: a cell record (table `Sessions`) and its turn records (table `Turns`) are
//! written once by ingest and only ever deleted, by a forget. Each tenant has a
//! generation, bumped by [`TurnCache::forget_tenant`] (called by every forget once it has
//! committed), which also drops the tenant's cells. A query reads the generation together
//! with its seqno (under the memory layer's forest lock) and uses entries only while the
//! generation is unchanged and the entry was stored under it: a query that started before
//! a forget committed cannot serve what it read to a query started after the forget
//! returned, and every such query reads storage anew. Queries at an older snapshot bypass
//! the cache. An entry also holds the turns just before and just after its cell; the turn
//! after the last cell of a session is written by a later ingest of that session, so the
//! fusion step caches a cell only once the turn after it exists.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::memory::session::Role;
use crate::recall::lru::ByteLru;
use crate::recall::page::Terms;
use memforest_engine::TenantId;

/// Default capacity: 64 MiB of turn term counts (16 bytes per distinct term).
pub const DEFAULT_TURN_BYTES: usize = 64 << 20;
/// Bytes charged per cached turn besides its term counts and id.
const TURN_OVERHEAD: usize = 96;

/// One turn of a cached cell: its id, the term counts of `speaker: text`, the cell
/// holding it, and what the reply step needs (`recall::reply`).
#[derive(Debug)]
pub struct CachedTurn {
    /// The turn's id (`TurnRecord::id`).
    pub id: String,
    /// Term counts of `speaker: text`.
    pub terms: Terms,
    /// The cell holding the turn: the cached cell for its own turns, the cell before or
    /// after it for the turn just before or just after it in its session.
    pub cell: u64,
    /// The turn's index in its session; `None` in the session of `Memory::update`
    /// (`api::UPDATES_SESSION`), whose turns are separate memories, not a conversation.
    /// Turns with consecutive indexes are neighbours.
    pub index: Option<u32>,
    /// The turn ends with a question mark (`recall::reply::asks`).
    pub asks: bool,
    /// Who said it.
    pub role: Role,
}

impl CachedTurn {
    /// Whether `next` is the turn right after this one in their conversation.
    #[must_use]
    pub fn precedes(&self, next: &CachedTurn) -> bool {
        matches!((self.index, next.index), (Some(a), Some(b)) if a.checked_add(1) == Some(b))
    }
}

/// The turns of one cell that exist, and the turns just before and just after it in its
/// session when they exist, in turn order.
pub type CachedCell = Arc<[CachedTurn]>;

/// Turn term counts per tenant and cell id.
#[derive(Debug)]
pub struct TurnCache {
    /// Generations: bumped for every tenant at once, and per tenant (never forgotten: 0);
    /// a tenant's generation is their sum.
    generations: Mutex<(u64, HashMap<TenantId, u64>)>,
    /// Cell id -> (generation it was read under, its turns).
    cells: ByteLru<u64, (u64, CachedCell)>,
}

impl Default for TurnCache {
    fn default() -> Self {
        Self::new(DEFAULT_TURN_BYTES)
    }
}

impl TurnCache {
    /// A cache of at most `capacity` bytes.
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            generations: Mutex::new((0, HashMap::new())),
            cells: ByteLru::new(capacity),
        }
    }

    /// `tenant`'s current generation (read it with the query's seqno, under the forest
    /// lock).
    #[must_use]
    pub fn generation(&self, tenant: &TenantId) -> u64 {
        let g = self.generations.lock();
        g.0 + g.1.get(tenant).copied().unwrap_or(0)
    }

    /// The cached turns of cell `cell`, when `generation` is still `tenant`'s and the
    /// entry was read under it.
    #[must_use]
    pub fn get(&self, tenant: &TenantId, cell: u64, generation: u64) -> Option<CachedCell> {
        if self.generation(tenant) != generation {
            return None;
        }
        self.cells
            .get_valid(tenant, &cell, |(g, _)| *g == generation)
            .map(|(_, turns)| turns)
    }

    /// Caches the turns of cell `cell`, unless `generation` is no longer `tenant`'s (a
    /// forget committed since they were read) or they alone exceed the capacity.
    pub fn insert(&self, tenant: &TenantId, cell: u64, generation: u64, turns: &CachedCell) {
        if self.generation(tenant) != generation {
            return;
        }
        let bytes = turns
            .iter()
            .map(|t| {
                t.terms.counts.len() * std::mem::size_of::<(u64, u32)>()
                    + t.id.len()
                    + TURN_OVERHEAD
            })
            .sum();
        self.cells
            .insert(tenant, cell, (generation, Arc::clone(turns)), bytes);
    }

    /// Drops every cell of `tenant` and bumps its generation (after a forget).
    pub fn forget_tenant(&self, tenant: &TenantId) {
        *self.generations.lock().1.entry(tenant.clone()).or_default() += 1;
        self.cells.forget_tenant(tenant);
    }

    /// Bumps every tenant's generation, so no cell read before is served again (a
    /// replica's refresh: the store changed underneath). The stale cells age out.
    pub fn forget_all(&self) {
        self.generations.lock().0 += 1;
    }

    /// Bytes held.
    #[must_use]
    pub fn used(&self) -> usize {
        self.cells.used()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(id: &str) -> CachedCell {
        Arc::from(vec![CachedTurn {
            id: id.to_owned(),
            terms: Terms::of("alpha beta"),
            cell: 1,
            index: Some(0),
            asks: false,
            role: Role::User,
        }])
    }

    #[test]
    fn forget_bumps_the_generation_and_older_reads_are_never_served() {
        let t = TenantId::new("t").unwrap();
        let one = 2 * 16 + 1 + TURN_OVERHEAD;
        let c = TurnCache::new(2 * one);
        c.insert(&t, 1, 0, &cell("a"));
        assert_eq!(c.get(&t, 1, 0).map(|x| x.len()), Some(1));
        assert_eq!(c.used(), one);
        c.forget_tenant(&t);
        assert_eq!(c.used(), 0);
        assert_eq!(c.generation(&t), 1);
        c.insert(&t, 1, 0, &cell("a"));
        assert_eq!(c.used(), 0, "a read from before the forget is not stored");
        c.insert(&t, 1, 1, &cell("a"));
        assert!(c.get(&t, 1, 0).is_none(), "an older generation misses");
        assert!(c.get(&t, 1, 1).is_some());
    }
}
