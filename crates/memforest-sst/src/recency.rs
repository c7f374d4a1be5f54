//! [`Recency`]: the members of a bounded set, held weakly, listed least recently used
//! first when the set must shrink. Shared by the [`crate::Residency`] budget (files whose
//! mapped pages to release), the [`crate::DescriptorTable`] (descriptors to close) and the
//! engine's segment cache (local copies of object-store files to delete).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// A member's last use, as stamps of its set's clock.
pub trait LastUse {
    /// The stamp of the member's last use.
    fn last_use(&self) -> &AtomicU64;
}

/// A set's clock and its members (dead ones are dropped as members are added).
#[derive(Debug)]
pub struct Recency<T> {
    clock: AtomicU64,
    members: Mutex<Vec<Weak<T>>>,
}

impl<T: LastUse> Default for Recency<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: LastUse> Recency<T> {
    /// An empty set, its clock at 0.
    #[must_use]
    pub fn new() -> Self {
        Self {
            clock: AtomicU64::new(0),
            members: Mutex::new(Vec::new()),
        }
    }

    /// Records a use of `member` now.
    pub fn touch(&self, member: &T) {
        member.last_use().store(
            self.clock.fetch_add(1, Ordering::Relaxed),
            Ordering::Relaxed,
        );
    }

    /// Adds `member`, used now.
    pub fn add(&self, member: &Arc<T>) {
        self.touch(member);
        let mut members = self.members.lock();
        members.retain(|w| w.strong_count() > 0);
        members.push(Arc::downgrade(member));
    }

    /// Calls `evict` on the live members, least recently used first, until `done` holds.
    /// Does nothing while another caller is at it (one shrinks at a time; the others go
    /// on, and the one shrinking covers them).
    pub fn shrink(&self, done: impl Fn() -> bool, evict: impl Fn(&T)) {
        let Some(oldest_first) = self.oldest_first() else {
            return;
        };
        for member in oldest_first {
            if done() {
                break;
            }
            evict(&member);
        }
    }

    /// The live members, least recently used first; None while another caller lists them.
    fn oldest_first(&self) -> Option<Vec<Arc<T>>> {
        let members = self.members.try_lock()?;
        // Each last use is read once: other threads move it while this sorts, and a key
        // that changes mid-sort breaks the sort's total order (the standard library
        // may panic on that).
        let mut live: Vec<(u64, Arc<T>)> = members
            .iter()
            .filter_map(Weak::upgrade)
            .map(|m| (m.last_use().load(Ordering::Relaxed), m))
            .collect();
        drop(members);
        live.sort_unstable_by_key(|(at, _)| *at);
        Some(live.into_iter().map(|(_, m)| m).collect())
    }
}
