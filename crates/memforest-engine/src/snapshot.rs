//! [`Snapshot`]: a registered read seqno that keeps the versions it sees alive.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

/// The live snapshots, by seqno (with a count for equal seqnos).
#[derive(Debug, Default)]
pub struct SnapshotList {
    live: Mutex<BTreeMap<u64, usize>>,
}

impl SnapshotList {
    /// Registers a snapshot at the seqno `current` returns, read under the list's lock so a
    /// concurrent [`SnapshotList::oldest`] never misses it.
    pub fn acquire(self: &Arc<Self>, current: impl FnOnce() -> u64) -> Snapshot {
        let mut live = self.live.lock();
        let seqno = current();
        *live.entry(seqno).or_insert(0) += 1;
        Snapshot {
            seqno,
            list: Arc::clone(self),
        }
    }

    /// Another registration of a snapshot someone holds at `seqno`. `None` when no
    /// snapshot at `seqno` is live: below the current seqno, flushes and compactions may
    /// already have dropped versions a read at `seqno` needs; past it, `seqno` names no
    /// state at all (a read there would answer from whatever state is current when it runs).
    pub fn pin(self: &Arc<Self>, seqno: u64) -> Option<Snapshot> {
        let mut live = self.live.lock();
        *live.get_mut(&seqno)? += 1;
        Some(Snapshot {
            seqno,
            list: Arc::clone(self),
        })
    }

    /// The oldest seqno any reader may still use: the oldest live snapshot, or `current()`
    /// (read under the lock) when there is none. Flush and compaction keep every version newer
    /// than this and the newest version at or below it ([`crate::retention`]).
    pub fn oldest(&self, current: impl FnOnce() -> u64) -> u64 {
        let live = self.live.lock();
        live.keys().next().copied().unwrap_or_else(current)
    }

    /// Number of live snapshots.
    #[must_use]
    pub fn len(&self) -> usize {
        self.live.lock().values().sum()
    }

    /// True when no snapshot is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.live.lock().is_empty()
    }

    fn release(&self, seqno: u64) {
        let mut live = self.live.lock();
        if let Some(count) = live.get_mut(&seqno) {
            *count -= 1;
            if *count == 0 {
                live.remove(&seqno);
            }
        }
    }
}

/// A consistent read view at one seqno (RocksDB `Snapshot`): reads through it see exactly
/// the batches acknowledged before it was taken. Compaction keeps the versions it needs
/// until it is dropped. Snapshots do not survive a reopen.
#[derive(Debug)]
pub struct Snapshot {
    seqno: u64,
    list: Arc<SnapshotList>,
}

impl Snapshot {
    /// The snapshot's seqno: every write with a seqno at or below it is visible.
    #[must_use]
    pub fn seqno(&self) -> u64 {
        self.seqno
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.list.release(self.seqno);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_tracks_live_snapshots() {
        let list = Arc::new(SnapshotList::default());
        assert_eq!(list.oldest(|| 50), 50);
        let a = list.acquire(|| 10);
        let b = list.acquire(|| 10);
        let c = list.acquire(|| 20);
        assert_eq!(list.len(), 3);
        assert_eq!(list.oldest(|| 50), 10);
        drop(a);
        assert_eq!(list.oldest(|| 50), 10);
        drop(b);
        assert_eq!(list.oldest(|| 50), 20);
        assert_eq!(c.seqno(), 20);
        drop(c);
        assert!(list.is_empty());
    }

    #[test]
    fn pin_needs_a_live_snapshot_at_exactly_that_seqno() {
        let list = Arc::new(SnapshotList::default());
        assert!(list.pin(10).is_none(), "nothing holds seqno 10");
        let held = list.acquire(|| 10);
        let pinned = list.pin(10).unwrap();
        assert_eq!(pinned.seqno(), 10);
        drop(held);
        assert_eq!(list.oldest(|| 50), 10, "the pin keeps seqno 10 live");
        drop(pinned);
        assert!(list.pin(10).is_none());
        // Past every live snapshot (even the current seqno, if nothing holds it): refused.
        let now = list.acquire(|| 50);
        assert!(list.pin(70).is_none());
        assert!(list.pin(u64::MAX).is_none());
        drop(now);
        assert!(list.pin(50).is_none());
        assert!(list.is_empty());
    }
}
