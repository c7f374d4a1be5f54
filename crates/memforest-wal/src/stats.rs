//! [`WalStats`]: counters that make group commit observable.

/// Counters since [`crate::Wal::open`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Batches written.
    pub batches: u64,
    /// Groups written (one buffered `write` each).
    pub groups: u64,
    /// `fdatasync`/`fsync` calls on segment files (group syncs, `sync()`, rotations).
    pub syncs: u64,
    /// Bytes written to segment files, framing included.
    pub bytes: u64,
    /// Segment files created.
    pub segments_created: u64,
}

impl WalStats {
    /// Average batches per group write.
    #[must_use]
    pub fn batches_per_group(&self) -> f64 {
        ratio(self.batches, self.groups)
    }

    /// Average batches per sync (meaningful when every append asked for a sync).
    #[must_use]
    pub fn batches_per_sync(&self) -> f64 {
        ratio(self.batches, self.syncs)
    }
}

#[expect(clippy::cast_precision_loss, reason = "a ratio for reporting")]
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
