//! [`Scan`]: an ordered range scan at a snapshot.

use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;
use memforest_sst::{BoxedSource, MergeIterator, ScanIterator, ScanOptions};

use crate::core::LsmState;
use crate::error::Result;
use crate::range_del::RangeTombstones;

/// Key/value pairs in key order, each the newest version visible at the scan's snapshot
/// (deleted keys skipped). Keys are given without the scan's prefix (`strip` bytes: the
/// tenant and table for a table scan). Holds the state it started from, so compaction and
/// flushes never change what it sees. Yields `Err` once on corruption, then ends.
pub struct Scan {
    inner: ScanIterator<MergeIterator>,
    tombstones: RangeTombstones,
    snapshot: u64,
    strip: usize,
    _state: Arc<LsmState>,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("snapshot", &self.snapshot)
            .finish_non_exhaustive()
    }
}

impl Scan {
    /// A scan of engine keys in `[lower, upper]` over `state` at `snapshot`.
    ///
    /// # Errors
    /// Corruption of a segment file's first blocks.
    pub fn new(
        state: Arc<LsmState>,
        lower: Bound<Bytes>,
        upper: Bound<Bytes>,
        snapshot: u64,
        strip: usize,
    ) -> Result<Self> {
        let mut sources: Vec<BoxedSource> = vec![Box::new(state.active.cursor())];
        for m in &state.imm {
            sources.push(Box::new(m.cursor()));
        }
        sources.extend(state.version.sources(as_ref(&lower), as_ref(&upper))?);
        let options = ScanOptions {
            snapshot_seqno: snapshot,
            drop_tombstones: true,
            lower,
            upper,
        };
        Ok(Self {
            inner: MergeIterator::scan(sources, options)?,
            tombstones: state.tombstones.clone(),
            snapshot,
            strip,
            _state: state,
        })
    }
}

fn as_ref(b: &Bound<Bytes>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Iterator for Scan {
    type Item = Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let e = match self.inner.next()? {
                Ok(e) => e,
                Err(err) => return Some(Err(err.into())),
            };
            if self.tombstones.hides(&e.user_key, e.seqno, self.snapshot) {
                continue;
            }
            let key = e.user_key.slice(self.strip.min(e.user_key.len())..);
            return Some(Ok((key, e.value)));
        }
    }
}
