//! [`Retention`]: which versions of a key a flush or a compaction writes out (RocksDB's
//! `CompactionIterator` visibility rule, simplified to one boundary).
//!
//! Given versions in internal-key order (user key ascending, seqno descending) and the
//! oldest seqno any reader may still use (the oldest live snapshot, else the latest
//! published seqno), a version is kept when it is newer than that seqno, or when it is the
//! newest version at or below it. Every other version is shadowed for every reader, live or
//! future, and is dropped. A range tombstone (persisted, passed in by compaction) drops the
//! versions it hides from every reader; point tombstones are dropped only at the bottom
//! (no file below the output can hold an older version they must keep hiding).
//!
//! A reader that is not a registered snapshot must read the latest seqno while the engine
//! state stays the same (`Core::latest`: the same state before and after the seqno, else a
//! snapshot pinned while the state is taken): every file in that state was then written
//! under an oldest seqno at or below the reader's, so what was dropped was shadowed for it
//! too.

use memforest_sst::Kind;

use crate::range_del::RangeTombstones;

/// Decides, version by version, what a flush or a compaction keeps.
#[derive(Debug)]
pub struct Retention<'a> {
    oldest_snapshot: u64,
    bottom: bool,
    tombstones: &'a RangeTombstones,
    key: Vec<u8>,
    started: bool,
    last_seqno: u64,
    /// The newest version at or below the oldest snapshot has been seen for `key`.
    settled: bool,
    /// The version last passed to [`Retention::keep`] was the first of its user key.
    first_version: bool,
}

impl<'a> Retention<'a> {
    /// Retention for readers at `oldest_snapshot` or later; `bottom` when nothing lies below
    /// the output (tombstones can go); `tombstones` the persisted range tombstones.
    #[must_use]
    pub fn new(oldest_snapshot: u64, bottom: bool, tombstones: &'a RangeTombstones) -> Self {
        Self {
            oldest_snapshot,
            bottom,
            tombstones,
            key: Vec::new(),
            started: false,
            last_seqno: 0,
            settled: false,
            first_version: false,
        }
    }

    /// Whether to keep this version; call once per version, in internal-key order.
    pub fn keep(&mut self, user_key: &[u8], seqno: u64, kind: Kind) -> bool {
        self.first_version = !self.started || self.key != user_key;
        if self.first_version {
            self.started = true;
            self.key.clear();
            self.key.extend_from_slice(user_key);
            self.settled = false;
        } else if seqno == self.last_seqno {
            // The same version in two inputs (a flush replayed after a crash).
            return false;
        }
        self.last_seqno = seqno;
        if self.settled {
            return false;
        }
        if seqno > self.oldest_snapshot {
            return true;
        }
        self.settled = true;
        if self.tombstones.hides(user_key, seqno, self.oldest_snapshot) {
            return false;
        }
        !(kind == Kind::Tombstone && self.bottom)
    }

    /// Whether the version last passed to [`Retention::keep`] was the first (newest) of its
    /// user key. A key whose first version is dropped has every version dropped, so among
    /// kept versions this says "a user key other than the last kept one's" without a
    /// second comparison (compaction cuts output files only there).
    #[must_use]
    pub fn first_version(&self) -> bool {
        self.first_version
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::range_del::RangeTombstone;

    type Version = (&'static [u8], u64, Kind);

    fn kept(versions: &[Version], oldest: u64, bottom: bool, t: &RangeTombstones) -> Vec<u64> {
        let mut r = Retention::new(oldest, bottom, t);
        versions
            .iter()
            .filter(|(k, s, kind)| r.keep(k, *s, *kind))
            .map(|v| v.1)
            .collect()
    }

    #[test]
    fn keeps_what_snapshots_need() {
        let none = RangeTombstones::default();
        let v: [Version; 6] = [
            (b"a", 9, Kind::Put),
            (b"a", 7, Kind::Tombstone),
            (b"a", 5, Kind::Put),
            (b"a", 5, Kind::Put),
            (b"a", 2, Kind::Put),
            (b"b", 3, Kind::Tombstone),
        ];
        // Oldest snapshot 6: 9 and 7 are newer; 5 is the newest at or below it.
        assert_eq!(kept(&v, 6, false, &none), vec![9, 7, 5, 3]);
        assert_eq!(kept(&v, 6, true, &none), vec![9, 7, 5]);
        // No snapshot: only the newest version; the bottom drops tombstones.
        assert_eq!(kept(&v, 100, true, &none), vec![9]);
        assert_eq!(kept(&v, 100, false, &none), vec![9, 3]);
        let t = RangeTombstones::default().with([RangeTombstone {
            start: Bytes::from_static(b"a"),
            end: Bytes::from_static(b"c"),
            seqno: 8,
        }]);
        assert_eq!(
            kept(&v, 100, false, &t),
            vec![9],
            "b@3 is hidden from every reader"
        );
        assert_eq!(
            kept(&v, 7, false, &t),
            vec![9, 7, 3],
            "a range tombstone newer than the oldest snapshot hides nothing yet"
        );
    }

    #[test]
    fn first_version_marks_each_user_keys_newest_version_kept_or_not() {
        let none = RangeTombstones::default();
        let v: [Version; 6] = [
            (b"", 9, Kind::Put),
            (b"a", 9, Kind::Tombstone),
            (b"a", 5, Kind::Put),
            (b"a", 5, Kind::Put),
            (b"ab", 4, Kind::Put),
            (b"ab", 3, Kind::Put),
        ];
        let mut r = Retention::new(100, true, &none);
        let marks: Vec<(bool, bool)> = v
            .iter()
            .map(|(k, s, kind)| (r.keep(k, *s, *kind), r.first_version()))
            .collect();
        assert_eq!(
            marks,
            vec![
                (true, true),
                (false, true), // a bottom tombstone: dropped, yet the key's first version
                (false, false),
                (false, false),
                (true, true), // "ab" after its prefix "a"
                (false, false),
            ]
        );
    }

    #[test]
    fn an_empty_first_key_is_a_key_like_any_other() {
        let none = RangeTombstones::default();
        let v: [Version; 3] = [
            (b"", 4, Kind::Put),
            (b"", 3, Kind::Put),
            (b"x", 2, Kind::Put),
        ];
        assert_eq!(kept(&v, 10, false, &none), vec![4, 2]);
    }
}
