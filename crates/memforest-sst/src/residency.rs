//! [`Residency`]: a byte budget on the pages of mapped segment files that a process keeps
//! resident (the role of RocksDB's block cache capacity: what reading the files' data
//! blocks and index partitions costs in memory stays bounded however many files there are
//! and however large they grow; their bloom filters are held on the heap, as RocksDB holds
//! them outside the block cache by default).
//!
//! A mapped page counts in the process's resident set (`VmRSS`, `RssFile`) from its first
//! read until the mapping is dropped or told `MADV_DONTNEED`, and one read maps more than
//! the bytes read: Linux maps the cached pages up to 64 KiB around a faulting page
//! ("fault-around"), and since 6.18 a whole large page-cache folio (up to 2 MiB, aligned in
//! the file). So every read of a mapped file (a data block, an index partition,
//! the metadata blocks read at open, the whole file for a scrub) charges the 2 MiB windows
//! of the file that its bytes, widened by 64 KiB on each side, overlap, each window once
//! until released. (The bloom filter and top-level index are copied to the heap at open,
//! outside the budget; see [`crate::SstReader`].) When the
//! charged bytes of all files exceed the budget, the least recently read files are released
//! (`MADV_DONTNEED`: their pages leave this process's page tables, the page cache keeps
//! them) until at most three quarters of the budget is charged. The charge is an upper
//! bound of what the files keep resident, so the files' share of the resident set stays
//! under the budget (plus the blocks being read at that moment). Values borrowed from a file
//! and read again after a release fault back in uncharged; they are short-lived.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::mmap::Mapping;
use crate::recency::{LastUse, Recency};

/// Charging granularity in bytes: the largest page-cache folio Linux maps at once on
/// x86-64 (a PMD, 2 MiB).
pub const WINDOW: u64 = 2 << 20;

/// Linux's default fault-around distance: a read may map pages this far on either side.
const FAULT_AROUND: u64 = 64 << 10;

/// A byte budget shared by the segment files of one engine (see the module docs).
#[derive(Debug)]
pub struct Residency {
    budget: u64,
    charged: AtomicU64,
    releases: AtomicU64,
    files: Recency<Tracked>,
}

impl Residency {
    /// A budget of `budget` bytes of resident file pages (`u64::MAX`: unbounded).
    #[must_use]
    pub fn new(budget: u64) -> Arc<Self> {
        Arc::new(Self {
            budget,
            charged: AtomicU64::new(0),
            releases: AtomicU64::new(0),
            files: Recency::new(),
        })
    }

    /// The budget in bytes.
    #[must_use]
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Bytes currently charged: an upper bound of the resident pages of the tracked files.
    #[must_use]
    pub fn charged(&self) -> u64 {
        self.charged.load(Ordering::Relaxed)
    }

    /// Files released so far (each one `MADV_DONTNEED` of a file's whole mapping).
    #[must_use]
    pub fn releases(&self) -> u64 {
        self.releases.load(Ordering::Relaxed)
    }

    /// Starts tracking a mapping of `len` bytes.
    pub(crate) fn track(self: &Arc<Self>, mapping: Mapping, len: u64) -> Arc<Tracked> {
        let words = usize::try_from(len.div_ceil(WINDOW).div_ceil(64)).unwrap_or(0);
        let tracked = Arc::new(Tracked {
            residency: Arc::clone(self),
            mapping,
            windows: (0..words).map(|_| AtomicU64::new(0)).collect(),
            charged: AtomicU64::new(0),
            last_use: AtomicU64::new(0),
        });
        self.files.add(&tracked);
        tracked
    }

    /// Releases the least recently read files until at most 3/4 of the budget is charged.
    /// One caller at a time picks the files to release; the others go on (it covers them).
    fn shrink(&self) {
        let target = self.budget - self.budget / 4;
        self.files
            .shrink(|| self.charged() <= target, Tracked::release);
    }
}

/// The charge state of one mapped file.
#[derive(Debug)]
pub(crate) struct Tracked {
    residency: Arc<Residency>,
    mapping: Mapping,
    /// One bit per [`WINDOW`] of the file: set while charged.
    windows: Vec<AtomicU64>,
    /// Bytes charged for this file.
    charged: AtomicU64,
    /// The residency clock at the last read ([`Recency`]).
    last_use: AtomicU64,
}

impl Tracked {
    /// The windows that `len` (> 0) bytes at `offset`, widened by the fault-around
    /// distance, overlap: each as its word of the bitmap and its bit.
    fn windows(&self, offset: u64, len: u64) -> impl Iterator<Item = (&AtomicU64, u64)> {
        let start = offset.saturating_sub(FAULT_AROUND);
        let last = offset.saturating_add(len).saturating_add(FAULT_AROUND - 1);
        (start / WINDOW..=last / WINDOW).map_while(|w| {
            let word = usize::try_from(w / 64)
                .ok()
                .and_then(|i| self.windows.get(i))?;
            Some((word, 1u64 << (w % 64)))
        })
    }

    /// Whether a scattered read of `len` bytes at `offset` should go through the mapping:
    /// its windows are charged already, or the budget has never had to release a file (the
    /// store has not outgrown it) and has room for them. Once the budget releases, the
    /// files no longer fit it, and a window a scattered read charged would soon be released
    /// and faulted back in. Advisory: nothing is reserved, so reads that pass together may
    /// still overshoot the budget.
    pub(crate) fn admits(&self, offset: u64, len: u64) -> bool {
        let missing = self
            .windows(offset, len.max(1))
            .filter(|(word, bit)| word.load(Ordering::Relaxed) & bit == 0)
            .count() as u64;
        let r = &self.residency;
        missing == 0
            || (r.releases() == 0 && r.charged().saturating_add(missing * WINDOW) <= r.budget)
    }

    /// Charges the windows that `len` bytes at `offset`, widened by the fault-around
    /// distance, overlap and that are not charged yet; shrinks the set past the budget.
    pub(crate) fn touch(&self, offset: u64, len: u64) {
        let r = &self.residency;
        r.files.touch(self);
        if len == 0 {
            return;
        }
        let mut added = 0;
        for (word, bit) in self.windows(offset, len) {
            if word.load(Ordering::Relaxed) & bit == 0
                && word.fetch_or(bit, Ordering::Relaxed) & bit == 0
            {
                added += WINDOW;
            }
        }
        if added == 0 {
            return;
        }
        self.charged.fetch_add(added, Ordering::Relaxed);
        if r.charged
            .fetch_add(added, Ordering::Relaxed)
            .saturating_add(added)
            > r.budget
        {
            r.shrink();
        }
    }

    /// Uncharges every window and drops the file's resident pages. A read racing with this
    /// may be charged and then dropped: the charge errs high, never low.
    fn release(&self) {
        let windows: u64 = self
            .windows
            .iter()
            .map(|w| u64::from(w.swap(0, Ordering::Relaxed).count_ones()))
            .sum();
        let bytes = windows * WINDOW;
        self.charged.fetch_sub(bytes, Ordering::Relaxed);
        self.residency.charged.fetch_sub(bytes, Ordering::Relaxed);
        self.residency.releases.fetch_add(1, Ordering::Relaxed);
        self.mapping.release();
    }
}

impl LastUse for Tracked {
    fn last_use(&self) -> &AtomicU64 {
        &self.last_use
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let bytes = self.charged.load(Ordering::Relaxed);
        self.residency.charged.fetch_sub(bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::cast_possible_truncation,
        reason = "test code"
    )]

    use super::*;

    /// Threads reading 128 tracked files under a budget of two windows: every few reads
    /// shrink, while the other threads keep moving the files' last-use clock (sorting on
    /// the live clock panicked here on every run: a key changing mid-sort).
    #[test]
    fn concurrent_reads_and_shrinks_keep_the_charge_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let residency = Residency::new(2 * WINDOW);
        let files: Vec<Arc<Tracked>> = (0..128)
            .map(|i| {
                let path = dir.path().join(format!("f{i}"));
                std::fs::write(&path, vec![7u8; WINDOW as usize]).unwrap();
                let file = std::fs::File::open(&path).unwrap();
                let (data, mapping) = crate::mmap::map_readonly(&file).unwrap();
                residency.track(mapping, data.len() as u64)
            })
            .collect();
        std::thread::scope(|s| {
            for seed in 0..4u64 {
                let files = &files;
                s.spawn(move || {
                    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    for _ in 0..20_000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let f = &files[(x % 128) as usize];
                        f.touch((x >> 8) % WINDOW, 4096);
                    }
                });
            }
        });
        let sum: u64 = files
            .iter()
            .map(|f| f.charged.load(Ordering::Relaxed))
            .sum();
        assert_eq!(residency.charged(), sum);
        assert!(residency.charged() <= residency.budget() + 2 * WINDOW);
    }
}
