//! Test support: segment files written directly with an [`SstBuilder`], for unit tests of
//! what reads or picks among segments (a level cursor, compaction picking).

use std::path::Path;
use std::sync::Arc;

use memforest_sst::{DescriptorTable, Kind, ReadBudgets, Residency, SstBuilder};

use crate::options::Options;
use crate::version::{Segment, SegmentInfo};

/// Segment `id` in `dir` holding `entries` (`(user key, seqno, value)`, in internal-key
/// order), opened as the engine opens its files.
pub fn segment(dir: &Path, id: u64, entries: &[(Vec<u8>, u64, Vec<u8>)]) -> Arc<Segment> {
    let opts = Options::default();
    let mut b = SstBuilder::new_with(Arc::clone(&opts.storage), dir, id, opts.sst.clone()).unwrap();
    for (key, seqno, value) in entries {
        b.add(key, *seqno, Kind::Put, value).unwrap();
    }
    let info = SegmentInfo::from(&b.finish().unwrap());
    Arc::new(
        Segment::open(
            &opts.storage,
            &ReadBudgets {
                residency: Residency::new(1 << 20),
                descriptors: DescriptorTable::new(8),
            },
            &opts.sst,
            dir,
            info,
        )
        .unwrap(),
    )
}

/// `(key, 1, value)` for each key in `keys`, every value `value_len` bytes.
pub fn puts(
    keys: impl IntoIterator<Item = String>,
    value_len: usize,
) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    keys.into_iter()
        .map(|k| (k.into_bytes(), 1, vec![b'v'; value_len]))
        .collect()
}
