//! What the WAL tells a repair about the segment files present ([`WalWrites`]).
//!
//! A repair adopts segment files and sets the flushed point (the WAL is replayed above
//! it) from them (`repair.rs`). Two things can make that wrong, and the WAL shows both.
//!
//! **Files of another store.** A segment file of another store copied into the directory
//! holds seqnos it never got from this store's WAL: adopted, it would lift the flushed
//! point over the store's WAL writes, which the replay would then skip, and its versions
//! would mix with the store's. It is proven foreign when
//! - it holds another write at a seqno the WAL holds: a seqno names one write, so a file
//!   of this store that holds seqno `s` holds the WAL's write `s` exactly (the same key,
//!   a put or tombstone as the WAL's op, the same value; a range delete as its stored
//!   reserved key); or
//! - the previous manifest does not list it and it holds a seqno above both that
//!   manifest's flushed point and the WAL's last seqno: no write of this store got such a
//!   seqno durably (every write goes through the WAL first, and a flush records its
//!   files in the manifest).
//!
//! Either way it is set aside as `<name>.foreign`, never adopted by this or a later
//! repair, never deleted, and reported. The same tests set aside a file of the store whose
//! seqnos later writes reused (a flush the manifest never recorded, whose WAL tail was
//! lost unsynced): its writes were never durable. A file of another store whose seqnos
//! are all at or below those points and that the WAL does not contradict cannot be told
//! apart, and is adopted.
//!
//! **The flushed point.** The adopted files' largest seqno can be below writes that were
//! flushed: a compaction at the bottom level drops a deleted key's put with its
//! tombstone, and if the WAL lost that delete (a power cut under `Durability::Buffered`),
//! replaying the put brings the key back. It can also be below writes whose only file is
//! unreadable, which the WAL still holds. [`WalWrites::flushed_point`] replays the WAL
//! from the files' largest seqno only when it holds every write between there and the
//! previous manifest's flushed point, and never below the no-op padding an earlier open
//! wrote to reach a flushed point (`open.rs`, `pad_wal_seqno`).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use memforest_sst::Kind;
use memforest_wal::RecoveredBatch;

/// The writes the WAL holds, as a fingerprint per seqno, and its seqno bounds.
#[derive(Debug, Default)]
pub(crate) struct WalWrites {
    prints: HashMap<u64, u64>,
    /// The largest seqno of a no-op entry (0 when none): padding up to a flushed point.
    padded: u64,
    /// The WAL's last seqno (its batches', or its segments' metadata when it holds none).
    last: u64,
}

impl WalWrites {
    /// The writes of `batches` (no-ops and unknown ops left out: no file holds them) of a
    /// WAL whose last seqno is `last`.
    pub(crate) fn of(batches: &[RecoveredBatch], last: u64) -> Self {
        let mut out = HashMap::new();
        let mut padded = 0;
        for b in batches {
            for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
                let print = match crate::core::stored_version(e, seqno) {
                    Some(Some(v)) => fingerprint(&v.key, v.kind, &v.value),
                    // A no-op: padding up to a flushed point.
                    Some(None) => {
                        padded = padded.max(seqno);
                        continue;
                    }
                    None => continue,
                };
                out.insert(seqno, print);
            }
        }
        Self {
            prints: out,
            padded,
            last,
        }
    }

    /// The WAL's last seqno.
    pub(crate) fn last(&self) -> u64 {
        self.last
    }

    /// The flushed point of a repair whose adopted files' largest seqno is `files`, when
    /// the previous manifest's was `previous` (0 without one): `files`, raised to
    /// `previous` unless the WAL holds a write at every seqno above `files` up to it, and
    /// to the WAL's no-op padding (see the module docs).
    pub(crate) fn flushed_point(&self, files: u64, previous: u64) -> u64 {
        let span = previous.saturating_sub(files);
        let holds_all = span <= self.prints.len() as u64
            && (files.saturating_add(1)..=previous).all(|s| self.prints.contains_key(&s));
        let lower = if holds_all { 0 } else { previous };
        files.max(lower).max(self.padded)
    }

    /// Whether a file's version `(key, seqno, kind, value)` is another write than the
    /// WAL's write `seqno` (false when the WAL does not hold that seqno).
    pub(crate) fn conflicts(&self, key: &[u8], seqno: u64, kind: Kind, value: &[u8]) -> bool {
        self.prints
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
