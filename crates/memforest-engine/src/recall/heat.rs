//! Tree heat (MemoryOS, Kang et al. 2025, "mid-term memory heat"):
//! `heat = W_VISIT * visits + W_LEAVES * leaves / LEAF_SCALE + W_RECENCY * exp(-age / MU)`,
//! where `visits` counts queries that returned a fact through the tree, `leaves` is the
//! tree's leaf count and `age` the seconds since the tree was last visited (a tree never
//! visited in this process has no recency term). Heat breaks ties in forest recall,
//! orders [`crate::Db::profile`]'s entity trees, and decides which trees' pages the page
//! cache keeps. Visits live in memory only: they restart at zero when the store reopens.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;

use crate::key::TenantId;

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
    trees: Mutex<HashMap<(TenantId, u64), Entry>>,
}

impl HeatMap {
    /// Records one visit of each tree in `trees`.
    pub fn visit(&self, tenant: &TenantId, trees: impl IntoIterator<Item = u64>) {
        let now = Instant::now();
        let mut m = self.trees.lock();
        for t in trees {
            let e = m.entry((tenant.clone(), t)).or_insert(Entry {
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
        let e = self.trees.lock().get(&(tenant.clone(), tree)).copied();
        let (visits, recency) = e.map_or((0.0, 0.0), |e| {
            let age = e.last.elapsed().as_secs_f64();
            (e.visits as f64, (-age / MU_SECS).exp())
        });
        W_VISIT * visits + W_LEAVES * leaves as f64 / LEAF_SCALE + W_RECENCY * recency
    }

    /// Visit counts of `tenant`'s trees, `(tree, visits)`.
    #[must_use]
    pub fn visited(&self, tenant: &TenantId) -> Vec<(u64, u64)> {
        self.trees
            .lock()
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .map(|((_, id), e)| (*id, e.visits))
            .collect()
    }

    /// Forgets `tenant`'s trees (all of them, or only `tree`).
    pub fn forget(&self, tenant: &TenantId, tree: Option<u64>) {
        self.trees
            .lock()
            .retain(|(t, id), _| t != tenant || tree.is_some_and(|x| x != *id));
    }
}
