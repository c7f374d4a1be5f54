//! Tree heat (MemoryOS, Kang et al. 2025, "mid-term memory heat"):
//! `heat = W_VISIT * visits + W_LEAVES * leaves / LEAF_SCALE + W_RECENCY * exp(-age / MU)`,
//! where `visits` counts queries that returned a fact through the tree, `leaves` is the
//! tree's leaf count and `age` the seconds since the tree was last visited (a tree never
//! visited in this process has no recency term). Heat breaks ties in forest recall,
//! orders [`crate::Memory::profile`]'s entity trees, and decides which trees' pages the page
//! cache keeps. Visits live in memory only: they restart at zero when the store reopens.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;

use memforest_engine::TenantId;

/// Weight of visits (MemoryOS uses 1).
pub const W_VISIT: f64 = 1.0;
/// Weight of the leaf-count term (MemoryOS uses 1).
pub const W_LEAVES: f64 = 1.0;
/// Weight of the recency term (MemoryOS uses 1).
pub const W_RECENCY: f64 = 1.0;
/// Leaves that count as one visit (a 100-leaf tree is as hot as one visit).
pub const LEAF_SCALE: f64 = 100.0;
/// Recency time constant `mu`, seconds (MemoryOS's 1e7 s, about 116 days).
pub const MU_SECS: f64 = 1e7;

#[derive(Debug, Clone, Copy)]
struct Entry {
    visits: u64,
    last: Instant,
}

/// Visit counts and last-visit times of every tenant's trees.
#[derive(Debug, Default)]
pub struct HeatMap {
    trees: Mutex<HashMap<TenantId, HashMap<u64, Entry>>>,
}

impl HeatMap {
    /// Records one visit of each tree in `trees`.
    pub fn visit(&self, tenant: &TenantId, trees: impl IntoIterator<Item = u64>) {
        let now = Instant::now();
        let mut m = self.trees.lock();
        if !m.contains_key(tenant) {
            m.insert(tenant.clone(), HashMap::new());
        }
        let Some(m) = m.get_mut(tenant) else {
            return;
        };
        for t in trees {
            let e = m.entry(t).or_insert(Entry {
                visits: 0,
                last: now,
            });
            e.visits += 1;
            e.last = now;
        }
    }

    /// The heat of tree `tree` holding `leaves` leaves.
    #[must_use]
    pub fn heat(&self, tenant: &TenantId, tree: u64, leaves: u64) -> f64 {
        let e = self
            .trees
            .lock()
            .get(tenant)
            .and_then(|m| m.get(&tree))
            .copied();
        let (visits, recency) = e.map_or((0.0, 0.0), |e| {
            let age = e.last.elapsed().as_secs_f64();
            (e.visits as f64, (-age / MU_SECS).exp())
        });
        W_VISIT * visits + W_LEAVES * leaves as f64 / LEAF_SCALE + W_RECENCY * recency
    }

    /// The `n` most visited trees of `tenant`, most visits first (ties: smaller id first).
    #[must_use]
    pub fn hottest(&self, tenant: &TenantId, n: usize) -> Vec<u64> {
        let mut v: Vec<(u64, u64)> = self
            .trees
            .lock()
            .get(tenant)
            .map(|m| m.iter().map(|(id, e)| (*id, e.visits)).collect())
            .unwrap_or_default();
        let cmp = |a: &(u64, u64), b: &(u64, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        if v.len() > n {
            v.select_nth_unstable_by(n, cmp);
            v.truncate(n);
        }
        v.sort_by(cmp);
        v.into_iter().map(|x| x.0).collect()
    }

    /// Forgets `tenant`'s trees (all of them, or only `tree`).
    pub fn forget(&self, tenant: &TenantId, tree: Option<u64>) {
        let mut m = self.trees.lock();
        match tree {
            None => {
                m.remove(tenant);
            }
            Some(t) => {
                if let Some(trees) = m.get_mut(tenant) {
                    trees.remove(&t);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hottest_orders_by_visits_then_id_and_forget_clears() {
        let (a, b) = (TenantId::new("a").unwrap(), TenantId::new("b").unwrap());
        let h = HeatMap::default();
        h.visit(&a, [5, 3, 9]);
        h.visit(&a, [9, 3]);
        h.visit(&a, [9]);
        h.visit(&b, [1, 1, 1, 1]);
        assert_eq!(h.hottest(&a, 2), [9, 3]);
        assert_eq!(h.hottest(&a, 10), [9, 3, 5]);
        assert!(h.heat(&a, 9, 0) > h.heat(&a, 3, 0));
        assert!(
            (h.heat(&a, 7, 200) - 2.0).abs() < 1e-9,
            "unvisited: leaves only"
        );
        h.forget(&a, Some(9));
        assert_eq!(h.hottest(&a, 10), [3, 5]);
        h.forget(&a, None);
        assert!(h.hottest(&a, 10).is_empty());
        assert_eq!(h.hottest(&b, 10), [1]);
    }
}
