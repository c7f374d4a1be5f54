//! Range tombstones: `[start, end)` deleted as of a seqno.
//!
//! A range delete is stored as an ordinary put in the reserved key space
//! (`0xFF 'R' | seqno u64 BE` -> `start length u32 LE | start | end`), so it is logged,
//! flushed and compacted like any entry, and every open loads all of them into memory (they
//! are rare: dropping a tenant or a table). A read hides a version with seqno `s` of key `k`
//! when some tombstone with `start <= k < end` and `s < seqno <= snapshot` exists;
//! compaction drops such versions once every live snapshot sees the tombstone.

use std::sync::Arc;

use bytes::Bytes;

use crate::key::RESERVED_PREFIX;

/// Second byte of a range tombstone's reserved key.
const TAG: u8 = b'R';

/// The reserved-key prefix of every range tombstone.
pub const PREFIX: [u8; 2] = [RESERVED_PREFIX, TAG];

/// One range tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First deleted engine key.
    pub start: Bytes,
    /// First key after the range.
    pub end: Bytes,
    /// Seqno of the delete.
    pub seqno: u64,
}

impl RangeTombstone {
    /// The reserved key storing this tombstone.
    #[must_use]
    pub fn storage_key(&self) -> Vec<u8> {
        let mut out = PREFIX.to_vec();
        out.extend_from_slice(&self.seqno.to_be_bytes());
        out
    }

    /// The stored value.
    #[must_use]
    pub fn storage_value(&self) -> Vec<u8> {
        let len = u32::try_from(self.start.len()).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(4 + self.start.len() + self.end.len());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&self.start);
        out.extend_from_slice(&self.end);
        out
    }

    /// Decodes a stored tombstone; `None` when the bytes are not one.
    #[must_use]
    pub fn decode(key: &[u8], value: &[u8]) -> Option<Self> {
        let seqno = key.strip_prefix(&PREFIX[..])?;
        let seqno = u64::from_be_bytes(seqno.try_into().ok()?);
        let len = u32::from_le_bytes(value.get(..4)?.try_into().ok()?);
        let split = 4usize.checked_add(usize::try_from(len).ok()?)?;
        Some(Self {
            start: Bytes::copy_from_slice(value.get(4..split)?),
            end: Bytes::copy_from_slice(value.get(split..)?),
            seqno,
        })
    }

    /// True when this tombstone hides version `seqno` of `key` for a reader at `snapshot`.
    #[must_use]
    pub fn hides(&self, key: &[u8], seqno: u64, snapshot: u64) -> bool {
        seqno < self.seqno
            && self.seqno <= snapshot
            && &self.start[..] <= key
            && key < &self.end[..]
    }
}

/// The set of live range tombstones, shared copy-on-write by readers.
#[derive(Debug, Clone, Default)]
pub struct RangeTombstones(Arc<Vec<RangeTombstone>>);

impl RangeTombstones {
    /// True when version `seqno` of `key` is hidden for a reader at `snapshot`.
    #[must_use]
    pub fn hides(&self, key: &[u8], seqno: u64, snapshot: u64) -> bool {
        self.0.iter().any(|t| t.hides(key, seqno, snapshot))
    }

    /// True when there is no tombstone.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A copy with `more` added.
    #[must_use]
    pub fn with(&self, more: impl IntoIterator<Item = RangeTombstone>) -> Self {
        let mut all = (*self.0).clone();
        all.extend(more);
        Self(Arc::new(all))
    }

    /// Number of tombstones.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The tombstones with seqno `<= seqno` (those already persisted in segment files,
    /// which compaction may apply: a tombstone still only in the WAL must not delete data
    /// from files yet).
    #[must_use]
    pub fn up_to(&self, seqno: u64) -> Self {
        Self(Arc::new(
            self.0
                .iter()
                .filter(|t| t.seqno <= seqno)
                .cloned()
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_round_trip_and_cover() {
        let t = RangeTombstone {
            start: Bytes::from_static(b"b"),
            end: Bytes::from_static(b"d"),
            seqno: 10,
        };
        let back = RangeTombstone::decode(&t.storage_key(), &t.storage_value()).unwrap();
        assert_eq!(back, t);
        assert!(t.hides(b"b", 9, 10));
        assert!(t.hides(b"c", 1, 99));
        assert!(!t.hides(b"d", 1, 99), "end is exclusive");
        assert!(!t.hides(b"a", 1, 99));
        assert!(!t.hides(b"c", 10, 99), "not older than the tombstone");
        assert!(!t.hides(b"c", 1, 9), "snapshot before the tombstone");
        assert!(RangeTombstone::decode(&t.storage_key(), &[9, 0, 0, 0, 1]).is_none());
    }
}
