//! [`WalDamage`]: a damaged WAL region a salvage recovery read past or stopped at, as an
//! open ([`crate::OpenReport::wal_skipped`]) and a repair
//! ([`crate::RepairReport::wal_skipped`]) report it.

use memforest_wal::{DamageReason, RecoveryReport, SegmentDamage};
use serde::Serialize;

/// A damaged region of a WAL segment that `RecoveryMode::SkipAnyCorrupted` skipped (or
/// `RecoveryMode::PointInTime` stopped at), or the gap in sequence numbers found after one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WalDamage {
    /// WAL segment id (file `wal/{id:020}.wal`).
    pub segment: u64,
    /// Byte offset of the damage in that file; for a gap, of the first batch after it.
    pub offset: u64,
    /// What is wrong there.
    pub reason: String,
    /// For a gap: the sequence numbers `first..=last` of the writes the damaged region
    /// held (one per entry of a batch).
    pub seqnos: Option<(u64, u64)>,
    /// For a gap: those of `seqnos` above the manifest's flushed point, which no segment
    /// file holds: these acknowledged writes are lost. `None` when the segment files hold
    /// them all, or for damage that is no gap (the writes it held, if any, are the gap
    /// after it; damage at the end of the log has no gap after it, and what it held is
    /// unknown).
    pub lost: Option<(u64, u64)>,
}

impl WalDamage {
    fn of(d: &SegmentDamage, flushed: u64) -> Self {
        let seqnos = match d.reason {
            DamageReason::SeqnoGap { expected, found } if found > expected => {
                Some((expected, found - 1))
            }
            _ => None,
        };
        Self {
            segment: d.segment,
            offset: d.offset,
            reason: d.reason.to_string(),
            seqnos,
            lost: seqnos
                .map(|(first, last)| (first.max(flushed.saturating_add(1)), last))
                .filter(|(first, last)| first <= last),
        }
    }
}

/// The damage `report` skipped or stopped at, in log order, with the writes lost above
/// `flushed` (the manifest's flushed point).
pub(crate) fn of(report: &RecoveryReport, flushed: u64) -> Vec<WalDamage> {
    report
        .skipped
        .iter()
        .chain(&report.stopped_at)
        .map(|d| WalDamage::of(d, flushed))
        .collect()
}
