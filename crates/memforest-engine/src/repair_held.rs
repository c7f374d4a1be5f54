//! Which WAL writes the segment files a repair adopts hold ([`first_unheld`]).
//!
//! A repair sets the flushed point at the largest seqno its adopted files hold and replays
//! the WAL above it (`repair.rs`). That is right for the store's own files, which a flush
//! writes in seqno order: a file with seqno `s` means every write below `s` was flushed
//! too. It is wrong when a file holds seqnos it never got from this store's WAL: a
//! segment file of another store copied into the directory, or the file that held the
//! older writes is lost or unreadable. The WAL writes below that file's seqnos would then
//! be skipped although no file holds them. So a repair first asks, for every key the WAL
//! writes at or below the flushed point, whether the adopted files hold the WAL's last
//! write of it, and replays the WAL from the first write they do not hold.
//!
//! The last write of a key at or below the flushed point (earlier ones are superseded by
//! it) is held when
//! - a put: some file holds a version of the key at its seqno or later, or a range
//!   tombstone of a later seqno covers it (compaction drops what such a tombstone hides);
//! - a delete: no file holds an older version of the key that it would hide (a point
//!   tombstone is dropped at the bottom level together with what it deleted), or a later
//!   version, or a later range tombstone, supersedes it;
//! - a range delete: some file holds the tombstone itself (its reserved key,
//!   `range_del`), which compaction never drops.
//!
//! Replaying writes a file already holds is harmless: a flush or compaction meeting the
//! same version twice keeps one (`retention`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use memforest_sst::{BoxedSource, Kind, Lookup, SstReader};
use memforest_wal::RecoveredBatch;

use crate::batch::Op;
use crate::error::Result;
use crate::range_del::{RangeTombstone, RangeTombstones};

/// The segment files a repair adopts, read for point lookups and range tombstones.
pub(crate) struct Adopted {
    readers: Vec<SstReader>,
    tombstones: RangeTombstones,
}

impl Adopted {
    /// Opens the segment files at `paths` (already read whole by the repair) of the store
    /// in `dir`.
    ///
    /// # Errors
    /// Open or read errors of a file; a stored range tombstone that does not decode.
    pub(crate) fn open(
        fs: &dyn memforest_io::Storage,
        dir: &Path,
        paths: &[PathBuf],
    ) -> Result<Self> {
        let readers = paths
            .iter()
            .map(|p| SstReader::open_with(fs, p))
            .collect::<memforest_sst::Result<Vec<_>>>()?;
        let sources = readers
            .iter()
            .map(|r| Ok(Box::new(r.iter()?) as BoxedSource))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            tombstones: crate::open::tombstones_in(dir, sources)?,
            readers,
        })
    }

    /// The newest version of `key` in any file: its seqno and kind.
    fn newest(&self, key: &[u8]) -> Result<Option<(u64, Kind)>> {
        let mut best: Option<(u64, Kind)> = None;
        for r in &self.readers {
            let found = match r.get(key, u64::MAX)? {
                Some(Lookup::Put { seqno, .. }) => (seqno, Kind::Put),
                Some(Lookup::Tombstone { seqno }) => (seqno, Kind::Tombstone),
                None => continue,
            };
            if best.is_none_or(|b| found.0 > b.0) {
                best = Some(found);
            }
        }
        Ok(best)
    }

    /// Whether the files hold write `op` of `key` at `seqno` (see the module docs).
    fn holds(&self, op: Op, key: &[u8], seqno: u64) -> Result<bool> {
        let newest = self.newest(key)?;
        let later =
            newest.is_some_and(|(s, _)| s >= seqno) || self.tombstones.hides(key, seqno, u64::MAX);
        Ok(match op {
            Op::Put | Op::RangeDelete => later,
            Op::Delete => later || newest.is_none_or(|(_, kind)| kind == Kind::Tombstone),
            Op::Noop => true,
        })
    }
}

/// The smallest seqno at or below `flushed` of a WAL write in `batches` that `adopted`
/// does not hold, judged by each key's last write at or below `flushed` (see the module
/// docs); `None` when they hold them all. Entries with an unknown op are passed over:
/// they cannot be replayed (the repair's WAL check refuses them above the flushed point).
///
/// # Errors
/// Read errors of the adopted files.
pub(crate) fn first_unheld(
    batches: &[RecoveredBatch],
    adopted: &Adopted,
    flushed: u64,
) -> Result<Option<u64>> {
    // Each key's last write at or below `flushed`: seqno and op. A range delete is keyed
    // by its stored key, unique to it.
    let mut last: HashMap<Vec<u8>, (u64, Op)> = HashMap::new();
    for b in batches {
        for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
            if seqno > flushed {
                break;
            }
            let Some(op) = Op::from_byte(e.kind) else {
                continue;
            };
            let key = match op {
                Op::Noop => continue,
                Op::RangeDelete => RangeTombstone {
                    start: Bytes::new(),
                    end: Bytes::new(),
                    seqno,
                }
                .storage_key(),
                _ => e.key.to_vec(),
            };
            last.insert(key, (seqno, op));
        }
    }
    let mut first: Option<u64> = None;
    for (key, (seqno, op)) in &last {
        if first.is_some_and(|f| f <= *seqno) {
            continue;
        }
        if !adopted.holds(*op, key, *seqno)? {
            first = Some(*seqno);
        }
    }
    Ok(first)
}
