//! Segment files whose writes conflict with the WAL's, found by a repair ([`WalWrites`]).
//!
//! A repair sets the flushed point at the largest seqno its adopted files hold and replays
//! the WAL above it (`repair.rs`). A segment file of another store copied into the
//! directory holds seqnos it never got from this store's WAL: adopted, it would lift the
//! flushed point over the store's WAL writes, which the replay would then skip, and its
//! versions would mix with the store's at the same seqnos. Such a file can be proven not
//! to be the store's: a seqno names one write, so a file of this store that holds seqno
//! `s` holds the WAL's write `s` exactly (the same key, a put or tombstone as the WAL's op,
//! the same value; a range delete as its stored reserved key). A file holding another
//! write at a seqno the WAL holds is not adopted: the repair sets it aside as
//! `<name>.foreign` (never adopted again, never deleted) and reports it. The same proof
//! sets aside a file of the store whose seqnos later writes reused (a flush the manifest
//! never recorded, whose WAL tail was lost unsynced): its writes were never acknowledged
//! as durable, and the WAL's reuse of their seqnos is the history the store went on with.
//!
//! A file of another store whose seqnos the WAL does not hold at all cannot be told apart
//! this way, and is adopted as before.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use memforest_sst::Kind;
use memforest_wal::RecoveredBatch;

use crate::batch::Op;
use crate::range_del::RangeTombstone;

/// The writes the WAL holds, as a fingerprint per seqno.
#[derive(Debug, Default)]
pub(crate) struct WalWrites(HashMap<u64, u64>);

impl WalWrites {
    /// The writes of `batches` (no-ops and unknown ops left out: no file holds them).
    pub(crate) fn of(batches: &[RecoveredBatch]) -> Self {
        let mut out = HashMap::new();
        for b in batches {
            for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
                let print = match Op::from_byte(e.kind) {
                    Some(Op::Put) => fingerprint(&e.key, Kind::Put, &e.value),
                    Some(Op::Delete) => fingerprint(&e.key, Kind::Tombstone, &[]),
                    Some(Op::RangeDelete) => {
                        let t = RangeTombstone {
                            start: bytes::Bytes::copy_from_slice(&e.key),
                            end: bytes::Bytes::copy_from_slice(&e.value),
                            seqno,
                        };
                        fingerprint(&t.storage_key(), Kind::Put, &t.storage_value())
                    }
                    Some(Op::Noop) | None => continue,
                };
                out.insert(seqno, print);
            }
        }
        Self(out)
    }

    /// Whether a file's version `(key, seqno, kind, value)` is another write than the
    /// WAL's write `seqno` (false when the WAL does not hold that seqno).
    pub(crate) fn conflicts(&self, key: &[u8], seqno: u64, kind: Kind, value: &[u8]) -> bool {
        self.0
            .get(&seqno)
            .is_some_and(|&p| p != fingerprint(key, kind, value))
    }
}

/// A 64-bit fingerprint of one version (compared within one process only).
fn fingerprint(key: &[u8], kind: Kind, value: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    key.hash(&mut h);
    matches!(kind, Kind::Put).hash(&mut h);
    value.hash(&mut h);
    h.finish()
}
