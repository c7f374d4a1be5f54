//! Helpers shared by this crate's integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "test helpers: each test file uses a subset; a panic is a failed assertion"
)]

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use memforest_sst::{
    Entry, EntryRef, EntrySource, FilterScope, Kind, SstBuilder, SstMeta, SstOptions, SstReader,
};

/// One entry as the tests generate them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Vec<u8>,
    pub seqno: u64,
    pub kind: Kind,
    pub value: Vec<u8>,
}

impl Row {
    pub fn from_entry(e: &Entry) -> Self {
        Self {
            key: e.user_key.to_vec(),
            seqno: e.seqno,
            kind: e.kind,
            value: e.value.to_vec(),
        }
    }

    pub fn from_ref(e: &EntryRef<'_>) -> Self {
        Self {
            key: e.user_key.to_vec(),
            seqno: e.seqno,
            kind: e.kind,
            value: e.value.to_vec(),
        }
    }
}

/// Sorts rows into internal-key order (user key ascending, seqno descending).
pub fn sort_rows(rows: &mut [Row]) {
    rows.sort_by(|a, b| a.key.cmp(&b.key).then(b.seqno.cmp(&a.seqno)));
}

/// Builds file `id` in `dir` from rows already in internal-key order.
pub fn build(dir: &Path, id: u64, rows: &[Row], options: SstOptions) -> SstMeta {
    let mut b = SstBuilder::new(dir, id, options).unwrap();
    for r in rows {
        b.add(&r.key, r.seqno, r.kind, &r.value).unwrap();
    }
    b.finish().unwrap()
}

/// Every entry of `source` from its current position.
pub fn drain(source: &mut impl EntrySource) -> memforest_sst::Result<Vec<Row>> {
    let mut out = Vec::new();
    while let Some(e) = source.next_entry()? {
        out.push(Row::from_entry(&e));
    }
    Ok(out)
}

/// Every raw entry of the file.
pub fn all_rows(reader: &SstReader) -> memforest_sst::Result<Vec<Row>> {
    drain(&mut reader.iter()?)
}

/// A filter scope with id `id` that leaves out the keys starting with `prefix`; counts the
/// keys it is asked about.
#[derive(Debug)]
pub struct LeaveOut {
    pub id: u32,
    pub prefix: &'static [u8],
    pub asked: AtomicUsize,
}

impl LeaveOut {
    pub fn new(id: u32, prefix: &'static [u8]) -> Arc<Self> {
        Arc::new(Self {
            id,
            prefix,
            asked: AtomicUsize::new(0),
        })
    }

    /// How many keys it was asked about.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::Relaxed)
    }
}

impl FilterScope for LeaveOut {
    fn id(&self) -> NonZeroU32 {
        NonZeroU32::new(self.id).unwrap()
    }

    fn includes(&self, user_key: &[u8]) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed);
        !user_key.starts_with(self.prefix)
    }
}
