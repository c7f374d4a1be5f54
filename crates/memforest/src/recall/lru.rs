//! [`ByteLru`]: the one eviction structure behind the read path's in-memory caches: values
//! per `(tenant, key)`, bounded in bytes (each entry is charged what its caller says it
//! holds), least recently used evicted first, every entry of a tenant dropped at once by a
//! forget. Callers that must refuse stale entries keep a validity stamp in the value and
//! check it with [`ByteLru::get_valid`].
//!
//! An entry may carry a rank ([`ByteLru::insert_ranked`]; [`ByteLru::insert`] ranks 0):
//! eviction takes the lowest rank first, least recently used within a rank, and an entry
//! enters a full cache only by evicting entries of at most its own rank (the page cache
//! ranks pages by their tree's heat).

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

use parking_lot::Mutex;

use memforest_engine::TenantId;

#[derive(Debug)]
struct Slot<V> {
    value: V,
    bytes: usize,
    /// `(rank, last-use stamp)`: its place in the eviction order.
    order: (u64, u64),
}

#[derive(Debug)]
struct Inner<K, V> {
    map: HashMap<TenantId, HashMap<K, Slot<V>>>,
    /// `(rank, last-use stamp)` -> key: eviction order, first out first.
    order: BTreeMap<(u64, u64), (TenantId, K)>,
    used: usize,
    stamp: u64,
}

impl<K: Hash + Eq + Clone, V> Inner<K, V> {
    fn remove<Q>(&mut self, tenant: &TenantId, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(s) = self.map.get_mut(tenant).and_then(|m| m.remove(key)) {
            self.used -= s.bytes;
            self.order.remove(&s.order);
        }
    }
}

/// A byte-bounded, per-tenant LRU map (see the module docs).
#[derive(Debug)]
pub struct ByteLru<K, V> {
    capacity: usize,
    inner: Mutex<Inner<K, V>>,
}

impl<K: Hash + Eq + Clone, V: Clone> ByteLru<K, V> {
    /// A cache of at most `capacity` bytes (as charged by [`ByteLru::insert`]).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: BTreeMap::new(),
                used: 0,
                stamp: 0,
            }),
        }
    }

    /// The value at `key`, now the most recently used.
    #[must_use]
    pub fn get<Q>(&self, tenant: &TenantId, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.get_valid(tenant, key, |_| true)
    }

    /// The value at `key` when `valid` accepts it (now the most recently used); a value it
    /// rejects is dropped.
    pub fn get_valid<Q>(
        &self,
        tenant: &TenantId,
        key: &Q,
        valid: impl FnOnce(&V) -> bool,
    ) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut guard = self.inner.lock();
        let inner = &mut *guard;
        inner.stamp += 1;
        let stamp = inner.stamp;
        let slot = inner.map.get_mut(tenant)?.get_mut(key)?;
        if !valid(&slot.value) {
            inner.remove(tenant, key);
            return None;
        }
        let entry = inner.order.remove(&slot.order)?;
        slot.order.1 = stamp;
        inner.order.insert(slot.order, entry);
        Some(slot.value.clone())
    }

    /// Stores `value` at `key` with rank 0, charged `bytes`, evicting the least recently
    /// used entries until it fits; a value larger than the whole capacity is not stored.
    pub fn insert(&self, tenant: &TenantId, key: K, value: V, bytes: usize) {
        self.insert_ranked(tenant, key, value, bytes, 0);
    }

    /// Stores `value` at `key` with rank `rank`, charged `bytes`, evicting entries in
    /// eviction order (lowest rank, then least recently used) until it fits; not stored
    /// when that would evict an entry of a higher rank, or when it alone exceeds the
    /// capacity.
    pub fn insert_ranked(&self, tenant: &TenantId, key: K, value: V, bytes: usize, rank: u64) {
        if bytes > self.capacity {
            return;
        }
        let mut inner = self.inner.lock();
        inner.remove(tenant, &key);
        while inner.used + bytes > self.capacity {
            let Some((&first, _)) = inner.order.first_key_value() else {
                break;
            };
            if first.0 > rank {
                return;
            }
            if let Some((t, victim)) = inner.order.remove(&first) {
                inner.remove(&t, &victim);
            }
        }
        inner.stamp += 1;
        let order = (rank, inner.stamp);
        inner.used += bytes;
        inner.order.insert(order, (tenant.clone(), key.clone()));
        inner.map.entry(tenant.clone()).or_default().insert(
            key,
            Slot {
                value,
                bytes,
                order,
            },
        );
    }

    /// Removes the value at `key` and returns it: a caller that changes a value in place
    /// takes it out (so that it holds the only reference) and inserts it back.
    pub fn take<Q>(&self, tenant: &TenantId, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut inner = self.inner.lock();
        let slot = inner.map.get_mut(tenant)?.remove(key)?;
        inner.used -= slot.bytes;
        inner.order.remove(&slot.order);
        Some(slot.value)
    }

    /// Drops every entry of `tenant`.
    pub fn forget_tenant(&self, tenant: &TenantId) {
        let mut inner = self.inner.lock();
        let Some(entries) = inner.map.remove(tenant) else {
            return;
        };
        for s in entries.into_values() {
            inner.used -= s.bytes;
            inner.order.remove(&s.order);
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
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The cache holds exactly what a list-ordered LRU model holds, step by step
        /// (inserts and gets of `(tenant, key)` charged 1-11 bytes, capacity 24).
        #[test]
        fn matches_a_list_ordered_lru(
            ops in prop::collection::vec((any::<bool>(), 0u8..2, 0u8..8, 1usize..12), 0..200)
        ) {
            let tenants = [TenantId::new("a").unwrap(), TenantId::new("b").unwrap()];
            let c: ByteLru<u8, usize> = ByteLru::new(24);
            // (tenant, key, value = bytes), least recently used first.
            let mut model: Vec<(u8, u8, usize)> = Vec::new();
            for (i, (insert, t, k, bytes)) in ops.into_iter().enumerate() {
                let tenant = &tenants[usize::from(t)];
                let at = model.iter().position(|e| (e.0, e.1) == (t, k));
                if insert {
                    c.insert(tenant, k, bytes, bytes);
                    if let Some(at) = at {
                        model.remove(at);
                    }
                    while model.iter().map(|e| e.2).sum::<usize>() + bytes > 24 {
                        model.remove(0);
                    }
                    model.push((t, k, bytes));
                } else {
                    let want = at.map(|at| model.remove(at));
                    if let Some(e) = want {
                        model.push(e);
                    }
                    prop_assert_eq!(c.get(tenant, &k), want.map(|e| e.2), "step {}", i);
                }
                prop_assert_eq!(c.used(), model.iter().map(|e| e.2).sum::<usize>());
            }
        }
    }

    #[test]
    fn evicts_least_recently_used_and_forgets_a_tenant() {
        let (a, b) = (TenantId::new("a").unwrap(), TenantId::new("b").unwrap());
        let c: ByteLru<u32, u32> = ByteLru::new(30);
        c.insert(&a, 1, 10, 10);
        c.insert(&a, 2, 20, 10);
        c.insert(&b, 1, 100, 10);
        assert_eq!(c.get(&a, &1), Some(10), "a/1 is now the most recent");
        c.insert(&a, 3, 30, 10);
        assert_eq!(c.get(&a, &2), None, "a/2 was the least recently used");
        assert_eq!(c.get(&b, &1), Some(100));
        assert_eq!(c.used(), 30);
        c.insert(&a, 4, 40, 31);
        assert_eq!(c.get(&a, &4), None, "larger than the capacity");
        c.insert(&a, 1, 11, 5);
        assert_eq!(
            (c.get(&a, &1), c.used()),
            (Some(11), 25),
            "replaced in place"
        );
        c.forget_tenant(&a);
        assert_eq!((c.get(&a, &1), c.get(&a, &3), c.used()), (None, None, 10));
        assert_eq!(c.get(&b, &1), Some(100));
    }

    #[test]
    fn a_rejected_value_is_dropped() {
        let t = TenantId::new("t").unwrap();
        let c: ByteLru<u32, u32> = ByteLru::new(100);
        c.insert(&t, 1, 7, 10);
        assert_eq!(c.get_valid(&t, &1, |v| *v == 8), None);
        assert_eq!((c.get(&t, &1), c.used()), (None, 0));
    }
}
