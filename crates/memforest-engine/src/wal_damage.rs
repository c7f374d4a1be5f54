//! [`WalDamage`]: a damaged WAL region a salvage recovery read past or stopped at, as an
//! open ([`crate::OpenReport::wal_skipped`]) and a repair
//! ([`crate::RepairReport::wal_skipped`]) report it.

use memforest_wal::{DamageReason, Recovered, SegmentDamage};
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
    /// before it held (one per entry of a batch).
    pub seqnos: Option<(u64, u64)>,
    /// For a gap: those of `seqnos` above the manifest's flushed point, which no segment
    /// file holds: these acknowledged writes are lost. `None` when the segment files hold
    /// them all, and for damage that is no gap (the writes it held are the gap after it).
    pub lost: Option<(u64, u64)>,
    /// For damage after the last batch recovered (the end of the log, where no gap can
    /// follow): the larger of that batch's last seqno and the flushed point. The writes the
    /// damage held, if it held any above it, are lost; how many is unknown.
    pub lost_after: Option<u64>,
}

impl WalDamage {
    fn of(d: &SegmentDamage, flushed: u64, end: Option<(u64, u64, u64)>) -> Self {
        let seqnos = match d.reason {
            DamageReason::SeqnoGap { expected, found } if found > expected => {
                Some((expected, found - 1))
            }
            _ => None,
        };
        let at_end = match end {
            Some((segment, offset, _)) => (d.segment, d.offset) > (segment, offset),
            None => true,
        };
        Self {
            segment: d.segment,
            offset: d.offset,
            reason: d.reason.to_string(),
            seqnos,
            lost: seqnos
                .map(|(first, last)| (first.max(flushed.saturating_add(1)), last))
                .filter(|(first, last)| first <= last),
            lost_after: at_end.then(|| end.map_or(0, |(_, _, seqno)| seqno).max(flushed)),
        }
    }
}

/// The damage `recovered` skipped or stopped at, in log order, with the writes lost above
/// `flushed` (the manifest's flushed point).
pub(crate) fn of(recovered: &Recovered, flushed: u64) -> Vec<WalDamage> {
    let end = recovered
        .batches
        .last()
        .map(|b| (b.segment, b.offset, b.last_seqno()));
    let report = &recovered.report;
    report
        .skipped
        .iter()
        .chain(&report.stopped_at)
        .map(|d| WalDamage::of(d, flushed, end))
        .collect()
}
