//! Recovery: replaying segment images under a [`RecoveryMode`], as a pure function.
//!
//! [`plan`] reads segment bytes already in memory and decides what is recovered, where the
//! last kept segment must be truncated and which segments must be deleted; [`crate::Wal`]
//! applies the file operations. Keeping this free of I/O lets tests and fuzzers drive it.

use crate::batch::{self, WriteBatch};
use crate::error::{DamageReason, Result, WalError};
use crate::format::MetadataType;
use crate::options::RecoveryMode;
use crate::record_reader::{Damage, LogReader, RecordKind};
use crate::segment_meta::SegmentMeta;

/// One segment file's id and whole contents.
#[derive(Debug, Clone, Copy)]
pub struct SegmentImage<'a> {
    /// Segment id (from the file name).
    pub id: u64,
    /// The file's bytes.
    pub bytes: &'a [u8],
}

/// A batch recovered from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredBatch {
    /// Sequence number of the first entry (an empty batch still owns this one seqno).
    pub first_seqno: u64,
    /// The batch.
    pub batch: WriteBatch,
    /// Segment the batch was read from.
    pub segment: u64,
    /// Byte offset of its first physical record in that segment.
    pub offset: u64,
}

impl RecoveredBatch {
    /// Last sequence number the batch owns.
    #[must_use]
    pub fn last_seqno(&self) -> u64 {
        self.first_seqno + self.batch.seqno_span() - 1
    }
}

/// Damage found in a segment, with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentDamage {
    /// Segment id.
    pub segment: u64,
    /// Byte offset in the segment file.
    pub offset: u64,
    /// What is wrong there.
    pub reason: DamageReason,
}

impl SegmentDamage {
    fn into_error(self) -> WalError {
        WalError::Corruption {
            segment: self.segment,
            offset: self.offset,
            reason: self.reason,
        }
    }
}

/// What recovery found and did besides returning batches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// `TolerateCorruptedTail`, `SkipAnyCorrupted`: the damaged tail that was cut off, if
    /// any (a torn last append: in the last segment, after the last valid record, past
    /// the synced length).
    pub tolerated_tail: Option<SegmentDamage>,
    /// `PointInTime`: the first damage, where recovery stopped, if any.
    pub stopped_at: Option<SegmentDamage>,
    /// `SkipAnyCorrupted`: every damaged region that was skipped.
    pub skipped: Vec<SegmentDamage>,
    /// Segments dropped because they lie past the recovery point or hold no valid record:
    /// a read-write open deletes the empty ones and sets the others ([`Self::set_aside`])
    /// aside as `{id:020}.wal.quarantine` (or `.quarantine.{n}`, [`crate::quarantine`]).
    pub deleted_segments: Vec<u64>,
    /// The dropped segments ([`Self::deleted_segments`]) with a byte that is not zero: a
    /// read-write open sets them aside, a read-only open leaves them as they are. An empty
    /// or all-zero segment (a crash while it was created) holds no record and is deleted.
    pub set_aside: Vec<u64>,
    /// `(segment, old length, new length)` when the last segment was truncated (never one
    /// holding damage `SkipAnyCorrupted` skipped, which is kept whole:
    /// [`RecoveryPlan::damaged_segments`]).
    pub truncated: Option<(u64, u64, u64)>,
    /// Missing segments whose loss the ledger recorded ([`crate::SegmentLedger::lost`]),
    /// which recovery read past: the segment after them started a new chain.
    pub gaps: Vec<SegmentGap>,
}

/// Segments `first..=last` are missing and their loss was recorded: recovery continued
/// with the segment after them, whose metadata names `last` as its predecessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentGap {
    /// First missing segment id.
    pub first: u64,
    /// Last missing segment id.
    pub last: u64,
    /// Sequence numbers the missing segments held (`last_seqno` before the gap + 1 ..=
    /// the predecessor seqno the segment after it names): those writes are lost.
    pub seqnos: (u64, u64),
}

/// A segment kept after recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptSegment {
    /// Segment id.
    pub id: u64,
    /// End of its last valid record, in bytes: where appending resumes for the last one.
    pub valid_len: u64,
    /// Its length on disk, in bytes.
    pub file_len: u64,
    /// Last sequence number written up to the end of this segment.
    pub last_seqno: u64,
}

/// The outcome of [`plan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryPlan {
    /// Recovered batches in log order.
    pub batches: Vec<RecoveredBatch>,
    /// Segments to keep, ascending; appending continues in the last one.
    pub kept: Vec<KeptSegment>,
    /// The last sequence number recovered (0 when none).
    pub last_seqno: u64,
    /// What was tolerated, skipped, truncated or deleted.
    pub report: RecoveryReport,
}

impl RecoveryPlan {
    /// The segments in which `SkipAnyCorrupted` skipped damage: a read-write open keeps
    /// them whole (the last one is not cut) and a purge sets them aside. What damage
    /// before a segment shows in it does not count: a gap forward in sequence numbers at
    /// its first batch after the damage (that batch is kept), and a predecessor mismatch
    /// in its metadata. A batch at or below the seqnos already read is dropped, so it
    /// counts.
    #[must_use]
    pub fn damaged_segments(&self) -> std::collections::BTreeSet<u64> {
        self.report
            .skipped
            .iter()
            .filter(|d| match d.reason {
                DamageReason::SeqnoGap { expected, found } => found <= expected,
                DamageReason::PredecessorMismatch { .. } => false,
                _ => true,
            })
            .map(|d| d.segment)
            .collect()
    }
}

/// A valid item of a segment, or damage.
enum Event {
    Meta(SegmentMeta, u64),
    Batch(RecoveredBatch, u64),
    OtherMetadata(u64),
    Damage(Damage),
}

impl Event {
    /// True for an event that is (or contains) a checksum-valid record.
    fn is_valid_record(&self) -> bool {
        match self {
            Self::Damage(d) => d.reason.is_valid_record(),
            _ => true,
        }
    }
}

fn events(image: SegmentImage<'_>) -> Vec<Event> {
    let mut out = Vec::new();
    for (i, item) in LogReader::new(image.bytes, image.id).enumerate() {
        let event = match item {
            Err(d) => Event::Damage(d),
            Ok(rec) => {
                let damage = |reason| {
                    Event::Damage(Damage {
                        offset: rec.start,
                        reason,
                    })
                };
                match (i, rec.kind) {
                    (0, RecordKind::Metadata(MetadataType::SEGMENT_META)) => {
                        match SegmentMeta::decode(&rec.payload) {
                            Ok(m) if m.segment_id == image.id => Event::Meta(m, rec.end),
                            Ok(_) => damage(DamageReason::BadMetadata(
                                "segment id does not match file name",
                            )),
                            Err(why) => damage(DamageReason::BadMetadata(why)),
                        }
                    }
                    (0, _) => damage(DamageReason::BadMetadata(
                        "first record is not segment metadata",
                    )),
                    (_, RecordKind::Metadata(_)) => Event::OtherMetadata(rec.end),
                    (_, RecordKind::Data) => match batch::decode(&rec.payload) {
                        Ok((first_seqno, batch)) => Event::Batch(
                            RecoveredBatch {
                                first_seqno,
                                batch,
                                segment: image.id,
                                offset: rec.start,
                            },
                            rec.end,
                        ),
                        Err(reason) => damage(reason),
                    },
                }
            }
        };
        out.push(event);
    }
    if out.is_empty() {
        out.push(Event::Damage(Damage {
            offset: 0,
            reason: DamageReason::EmptySegment,
        }));
    }
    out
}

/// Replays `images` (ascending ids, the whole log) under `mode`. `synced` gives the length
/// in bytes each segment is known to have been synced at in full
/// ([`crate::SegmentLedger::synced_len`]): damage before it is never cut as a torn tail,
/// and records that end before it (zeroed or cut off at a record boundary) are damage at
/// the end of the last valid record ([`DamageReason::SyncedBytesMissing`]), not a clean
/// end. `lost(first, last)` says whether the loss of every segment `first..=last` was
/// recorded ([`crate::SegmentLedger::lost`]): a segment whose metadata names `last` as its
/// predecessor, right after segment `first - 1`, then starts a new chain (reported in
/// [`RecoveryReport::gaps`]) instead of being a predecessor mismatch, in every mode.
///
/// # Errors
/// [`WalError::Corruption`] naming the segment and offset of the first damage the mode
/// does not tolerate.
pub fn plan(
    images: &[SegmentImage<'_>],
    mode: RecoveryMode,
    synced: &dyn Fn(u64) -> Option<u64>,
    lost: &dyn Fn(u64, u64) -> bool,
) -> Result<RecoveryPlan> {
    let mut out = RecoveryPlan::default();
    let mut prev: Option<u64> = None;
    for (i, &image) in images.iter().enumerate() {
        let is_last = i + 1 == images.len();
        let events = events(image);
        let synced_len = synced(image.id);
        let mut valid_len = 0;
        let mut stop = false;
        // Offset of the last damage found in this segment.
        let mut damaged_at = None;
        for (j, event) in events.iter().enumerate() {
            let damage = match event {
                Event::Meta(meta, end) => match prev {
                    Some(actual_id)
                        if meta.predecessor_id > actual_id
                            && meta.predecessor_last_seqno >= out.last_seqno
                            && lost(actual_id + 1, meta.predecessor_id) =>
                    {
                        out.report.gaps.push(SegmentGap {
                            first: actual_id + 1,
                            last: meta.predecessor_id,
                            seqnos: (out.last_seqno + 1, meta.predecessor_last_seqno),
                        });
                        out.last_seqno = meta.predecessor_last_seqno;
                        valid_len = *end;
                        None
                    }
                    Some(actual_id)
                        if meta.predecessor_id != actual_id
                            || meta.predecessor_last_seqno != out.last_seqno =>
                    {
                        Some(DamageReason::PredecessorMismatch {
                            named_id: meta.predecessor_id,
                            named_seqno: meta.predecessor_last_seqno,
                            actual_id,
                            actual_seqno: out.last_seqno,
                        })
                    }
                    Some(_) => {
                        valid_len = *end;
                        None
                    }
                    None => {
                        out.last_seqno = meta.predecessor_last_seqno;
                        valid_len = *end;
                        None
                    }
                },
                Event::OtherMetadata(end) => {
                    valid_len = *end;
                    None
                }
                Event::Batch(b, end) => {
                    let expected = out.last_seqno + 1;
                    let in_order = b.first_seqno == expected
                        || (mode == RecoveryMode::SkipAnyCorrupted && b.first_seqno > expected);
                    if in_order {
                        out.last_seqno = b.last_seqno();
                        out.batches.push(b.clone());
                        valid_len = *end;
                    }
                    (b.first_seqno != expected).then_some(DamageReason::SeqnoGap {
                        expected,
                        found: b.first_seqno,
                    })
                }
                Event::Damage(d) => Some(d.reason.clone()),
            };
            let Some(reason) = damage else { continue };
            let offset = match event {
                Event::Damage(d) => d.offset,
                Event::Batch(b, _) => b.offset,
                _ => 0,
            };
            let found = SegmentDamage {
                segment: image.id,
                offset,
                reason,
            };
            damaged_at = Some(offset);
            // Damage a crash during an append leaves: in the last segment, no valid record
            // after it, and not before the synced length (cutting it loses no synced byte).
            let torn_tail = || {
                let valid_after = events.iter().skip(j).any(Event::is_valid_record);
                let was_synced = synced_len.is_some_and(|len| offset < len || valid_len < len);
                is_last && !valid_after && !was_synced
            };
            match mode {
                RecoveryMode::AbsoluteConsistency => return Err(found.into_error()),
                RecoveryMode::TolerateCorruptedTail | RecoveryMode::SkipAnyCorrupted
                    if torn_tail() =>
                {
                    out.report.tolerated_tail = Some(found);
                    break;
                }
                RecoveryMode::TolerateCorruptedTail => return Err(found.into_error()),
                RecoveryMode::PointInTime => {
                    out.report.stopped_at = Some(found);
                    stop = true;
                    break;
                }
                RecoveryMode::SkipAnyCorrupted => out.report.skipped.push(found),
            }
        }
        // The records end cleanly (zeros, or the end of the file) before the length the
        // segment was synced at, and no damage found was reported there: whole records were
        // zeroed or cut off, which is damage, not a clean end.
        let unreported = damaged_at.is_none_or(|at| at < valid_len);
        if let Some(synced) = synced_len.filter(|&len| valid_len < len && unreported) {
            let found = SegmentDamage {
                segment: image.id,
                offset: valid_len,
                reason: DamageReason::SyncedBytesMissing { synced },
            };
            match mode {
                RecoveryMode::AbsoluteConsistency | RecoveryMode::TolerateCorruptedTail => {
                    return Err(found.into_error());
                }
                RecoveryMode::PointInTime => {
                    out.report.stopped_at = Some(found);
                    stop = true;
                }
                RecoveryMode::SkipAnyCorrupted => out.report.skipped.push(found),
            }
        }
        out.kept.push(KeptSegment {
            id: image.id,
            valid_len,
            file_len: image.bytes.len() as u64,
            last_seqno: out.last_seqno,
        });
        prev = Some(image.id);
        if stop {
            out.report.deleted_segments = images.iter().skip(i + 1).map(|s| s.id).collect();
            break;
        }
    }
    // A last segment without a valid metadata record holds nothing: drop it.
    while let Some(last) = out.kept.last().copied().filter(|k| k.valid_len == 0) {
        out.kept.pop();
        out.report.deleted_segments.insert(0, last.id);
    }
    out.report.set_aside = images
        .iter()
        .filter(|i| i.bytes.iter().any(|&b| b != 0) && out.report.deleted_segments.contains(&i.id))
        .map(|i| i.id)
        .collect();
    let damaged = out.damaged_segments();
    // A segment kept whole keeps its torn tail too: it is damage read past, not cut.
    let kept_whole = |t: &mut SegmentDamage| damaged.contains(&t.segment);
    if let Some(torn) = out.report.tolerated_tail.take_if(kept_whole) {
        out.report.skipped.push(torn);
    }
    let cut = |k: &&KeptSegment| k.valid_len != k.file_len && !damaged.contains(&k.id);
    if let Some(last) = out.kept.last().filter(cut) {
        out.report.truncated = Some((last.id, last.file_len, last.valid_len));
    }
    Ok(out)
}
