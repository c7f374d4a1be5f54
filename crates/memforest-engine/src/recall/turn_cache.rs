//! [`TurnCache`]: the term counts of source turns read by the fusion step
//! ([`crate::recall::fuse`]), kept in memory (bounded in bytes, least recently used
//! evicted first), so a query does not re-read and re-tokenize the same turns each time.
//! It holds term hashes and lengths, never text.
//!
//! Validity: a turn record (table `Turns`, key `(session hash, index)`) is written once by
//! ingest and only ever deleted, by a forget. Each tenant has a generation, bumped by
//! [`TurnCache::forget_tenant`] (called by every forget once it has committed), which also
//! drops the tenant's turns. A query reads the generation together with its seqno (under
//! the memory layer's forest lock) and uses or inserts entries only while the generation is
//! unchanged: a query that started before a forget committed cannot store what it read
//! after the forget returned, and every query started after it reads storage anew.
//! Queries at an older snapshot bypass the cache.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::key::TenantId;
use crate::recall::page::Terms;

/// Default capacity: 16 MiB of turn term counts (16 bytes per distinct term).
pub const DEFAULT_TURN_BYTES: usize = 16 << 20;
/// Bytes charged per cached turn besides its term counts and id.
const TURN_OVERHEAD: usize = 96;

/// Storage key of a turn: `record::turn_key(session, index)`.
pub type TurnKey = [u8; 12];

/// One cached turn: its id and the term counts of `speaker: text`.
#[derive(Debug)]
pub struct CachedTurn {
    /// The turn's id (`TurnRecord::id`).
    pub id: String,
    /// Term counts of `speaker: text`.
    pub terms: Terms,
}

#[derive(Debug)]
struct Slot {
    turn: Arc<CachedTurn>,
    bytes: usize,
    stamp: u64,
}

#[derive(Debug, Default)]
struct Inner {
    /// Per-tenant generation; a tenant never forgotten is at 0.
    generations: HashMap<TenantId, u64>,
    map: HashMap<TenantId, HashMap<TurnKey, Slot>>,
    /// Last-use stamp -> key: eviction order, least recently used first.
    order: BTreeMap<u64, (TenantId, TurnKey)>,
    used: usize,
    stamp: u64,
}

impl Inner {
    fn generation(&self, tenant: &TenantId) -> u64 {
        self.generations.get(tenant).copied().unwrap_or(0)
    }

    fn remove(&mut self, tenant: &TenantId, key: &TurnKey) {
        if let Some(s) = self.map.get_mut(tenant).and_then(|m| m.remove(key)) {
            self.used -= s.bytes;
            self.order.remove(&s.stamp);
        }
    }
}

/// Term counts of source turns, per tenant and turn key.
#[derive(Debug)]
pub struct TurnCache {
    capacity: usize,
    inner: Mutex<Inner>,
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
            capacity,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// `tenant`'s current generation (read it with the query's seqno, under the forest
    /// lock).
    #[must_use]
    pub fn generation(&self, tenant: &TenantId) -> u64 {
        self.inner.lock().generation(tenant)
    }

    /// The cached turn at `key`, when `generation` is still `tenant`'s.
    #[must_use]
    pub fn get(
        &self,
        tenant: &TenantId,
        key: &TurnKey,
        generation: u64,
    ) -> Option<Arc<CachedTurn>> {
        let mut guard = self.inner.lock();
        let inner = &mut *guard;
        if inner.generation(tenant) != generation {
            return None;
        }
        inner.stamp += 1;
        let stamp = inner.stamp;
        let slot = inner.map.get_mut(tenant)?.get_mut(key)?;
        let entry = inner.order.remove(&slot.stamp)?;
        slot.stamp = stamp;
        inner.order.insert(stamp, entry);
        Some(Arc::clone(&slot.turn))
    }

    /// Caches `turn` at `key`, unless `generation` is no longer `tenant`'s (a forget
    /// committed since it was read) or it alone exceeds the capacity.
    pub fn insert(&self, tenant: &TenantId, key: TurnKey, generation: u64, turn: &Arc<CachedTurn>) {
        let bytes = turn.terms.counts.len() * std::mem::size_of::<(u64, u32)>()
            + turn.id.len()
            + TURN_OVERHEAD;
        if bytes > self.capacity {
            return;
        }
        let mut inner = self.inner.lock();
        if inner.generation(tenant) != generation {
            return;
        }
        inner.remove(tenant, &key);
        while inner.used + bytes > self.capacity {
            let Some((_, (t, victim))) = inner.order.pop_first() else {
                break;
            };
            inner.remove(&t, &victim);
        }
        inner.stamp += 1;
        let stamp = inner.stamp;
        inner.used += bytes;
        inner.order.insert(stamp, (tenant.clone(), key));
        inner.map.entry(tenant.clone()).or_default().insert(
            key,
            Slot {
                turn: Arc::clone(turn),
                bytes,
                stamp,
            },
        );
    }

    /// Drops every turn of `tenant` and bumps its generation (after a forget).
    pub fn forget_tenant(&self, tenant: &TenantId) {
        let mut inner = self.inner.lock();
        *inner.generations.entry(tenant.clone()).or_default() += 1;
        let Some(turns) = inner.map.remove(tenant) else {
            return;
        };
        for s in turns.into_values() {
            inner.used -= s.bytes;
            inner.order.remove(&s.stamp);
        }
    }

    /// Bytes held.
    #[must_use]
    pub fn used(&self) -> usize {
        self.inner.lock().used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str) -> Arc<CachedTurn> {
        Arc::new(CachedTurn {
            id: id.to_owned(),
            terms: Terms::of("alpha beta"),
        })
    }

    #[test]
    fn least_recently_used_goes_first_and_forget_bumps_the_generation() {
        let t = TenantId::new("t").unwrap();
        let one = 2 * 16 + 1 + TURN_OVERHEAD;
        assert_eq!(turn("a").terms.counts.len(), 2);
        let c = TurnCache::new(2 * one);
        let (a, b, d) = ([1; 12], [2; 12], [3; 12]);
        c.insert(&t, a, 0, &turn("a"));
        c.insert(&t, b, 0, &turn("b"));
        assert_eq!(c.get(&t, &a, 0).map(|x| x.id.clone()), Some("a".into()));
        c.insert(&t, d, 0, &turn("d"));
        assert!(c.get(&t, &b, 0).is_none(), "b was used least recently");
        assert!(c.get(&t, &a, 0).is_some() && c.get(&t, &d, 0).is_some());
        assert_eq!(c.used(), 2 * one);
        c.forget_tenant(&t);
        assert_eq!(c.used(), 0);
        assert_eq!(c.generation(&t), 1);
        c.insert(&t, a, 0, &turn("a"));
        assert_eq!(c.used(), 0, "a read from before the forget is not stored");
        c.insert(&t, a, 1, &turn("a"));
        assert!(c.get(&t, &a, 0).is_none(), "an older generation misses");
        assert!(c.get(&t, &a, 1).is_some());
    }
}
