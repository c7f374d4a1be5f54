//! Internal keys: a user key, a sequence number and a kind.
//!
//! Encoded (in blocks) as the user key bytes followed by an 8-byte little-endian trailer
//! `seqno << 8 | kind`, as RocksDB's `InternalKey` (`db/dbformat.h`). Ordering: user key
//! ascending (bytewise), then seqno descending, so the newest version of a key comes first.
//! A sequence number therefore has 56 bits ([`MAX_SEQNO`]).

use std::cmp::Ordering;

use bytes::Bytes;

/// Largest sequence number the format can hold: 2^56 - 1.
pub const MAX_SEQNO: u64 = (1 << 56) - 1;

/// Length of the encoded trailer after the user key, in bytes.
pub const TRAILER_LEN: usize = 8;

/// What an entry records about its user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A deletion marker: the key has no value as of this seqno.
    Tombstone = 0,
    /// A value.
    Put = 1,
}

impl Kind {
    /// The kind stored in the low byte of a trailer, or `None` for an unknown byte.
    #[must_use]
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            0 => Some(Self::Tombstone),
            1 => Some(Self::Put),
            _ => None,
        }
    }
}

/// Appends the encoding of `(user_key, seqno, kind)` to `out`. `seqno` must be at most
/// [`MAX_SEQNO`] (callers check; higher bits are dropped).
pub fn encode_into(out: &mut Vec<u8>, user_key: &[u8], seqno: u64, kind: Kind) {
    out.extend_from_slice(user_key);
    out.extend_from_slice(&((seqno << 8) | kind as u64).to_le_bytes());
}

/// The encoded key that sorts before every version of `user_key` visible at
/// `snapshot_seqno` (seqno `<= snapshot_seqno`) and after every newer version.
#[must_use]
pub fn seek_key(user_key: &[u8], snapshot_seqno: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    encode_into(&mut out, user_key, snapshot_seqno.min(MAX_SEQNO), Kind::Put);
    out
}

/// Splits an encoded key into the user key and the raw trailer, never panicking. A key
/// shorter than the trailer is taken as a user key with trailer 0 (only corrupt input can
/// produce one; [`decode`] rejects it).
fn split(encoded: &[u8]) -> (&[u8], u64) {
    match encoded
        .len()
        .checked_sub(TRAILER_LEN)
        .map(|cut| encoded.split_at(cut))
    {
        Some((user_key, trailer)) => {
            let mut raw = [0u8; TRAILER_LEN];
            raw.copy_from_slice(trailer);
            (user_key, u64::from_le_bytes(raw))
        }
        None => (encoded, 0),
    }
}

/// Compares two encoded internal keys: user key ascending, then seqno descending. Total and
/// panic-free on any bytes.
#[must_use]
pub fn compare_encoded(a: &[u8], b: &[u8]) -> Ordering {
    let (ua, ta) = split(a);
    let (ub, tb) = split(b);
    ua.cmp(ub).then_with(|| (tb >> 8).cmp(&(ta >> 8)))
}

/// The user key of an encoded internal key (the whole slice if it is too short).
#[must_use]
pub fn user_key(encoded: &[u8]) -> &[u8] {
    split(encoded).0
}

/// Decodes an encoded internal key into `(user_key, seqno, kind)`.
///
/// # Errors
/// A reason string when the key is shorter than the trailer or the kind byte is unknown.
pub fn decode(encoded: &[u8]) -> Result<(&[u8], u64, Kind), &'static str> {
    if encoded.len() < TRAILER_LEN {
        return Err("internal key shorter than its 8-byte trailer");
    }
    let (user_key, trailer) = split(encoded);
    let kind = Kind::from_byte((trailer & 0xff) as u8).ok_or("unknown entry kind")?;
    Ok((user_key, trailer >> 8, kind))
}

/// One version of one user key, as iterators hand it out. Keys and values are
/// reference-counted [`Bytes`]; values read from an uncompressed block borrow the file
/// mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The user key.
    pub user_key: Bytes,
    /// Sequence number of this version (at most [`MAX_SEQNO`]).
    pub seqno: u64,
    /// Put or tombstone.
    pub kind: Kind,
    /// The value (conventionally empty for a tombstone).
    pub value: Bytes,
}

/// One version of one user key, borrowed from where a [`crate::EntryCursor`] stands (valid
/// until the cursor moves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRef<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// Sequence number of this version.
    pub seqno: u64,
    /// Put or tombstone.
    pub kind: Kind,
    /// The value (conventionally empty for a tombstone).
    pub value: &'a [u8],
}

impl Entry {
    /// Internal-key order of two entries: user key ascending, seqno descending.
    #[must_use]
    pub fn cmp_key(&self, other: &Self) -> Ordering {
        self.user_key
            .cmp(&other.user_key)
            .then_with(|| other.seqno.cmp(&self.seqno))
    }

    /// The encoded internal key of this entry.
    #[must_use]
    pub fn encoded_key(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.user_key.len() + TRAILER_LEN);
        encode_into(&mut out, &self.user_key, self.seqno, self.kind);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc(k: &[u8], s: u64, kind: Kind) -> Vec<u8> {
        let mut v = Vec::new();
        encode_into(&mut v, k, s, kind);
        v
    }

    proptest! {
        #[test]
        fn order_matches_tuple_order(
            a in proptest::collection::vec(0u8..4, 0..4), sa in 0..MAX_SEQNO,
            b in proptest::collection::vec(0u8..4, 0..4), sb in 0..MAX_SEQNO,
        ) {
            let model = a.cmp(&b).then(sb.cmp(&sa));
            prop_assert_eq!(compare_encoded(&enc(&a, sa, Kind::Put), &enc(&b, sb, Kind::Tombstone)), model);
        }

        #[test]
        fn round_trip(k: Vec<u8>, s in 0..=MAX_SEQNO, put: bool) {
            let kind = if put { Kind::Put } else { Kind::Tombstone };
            let e = enc(&k, s, kind);
            prop_assert_eq!(decode(&e), Ok((&k[..], s, kind)));
        }

        #[test]
        fn garbage_never_panics(a: Vec<u8>, b: Vec<u8>) {
            let _ = compare_encoded(&a, &b);
            let _ = decode(&a);
        }
    }

    #[test]
    fn seek_key_sorts_between_versions() {
        let newer = enc(b"k", 9, Kind::Put);
        let visible = enc(b"k", 5, Kind::Tombstone);
        let target = seek_key(b"k", 5);
        assert_eq!(compare_encoded(&newer, &target), Ordering::Less);
        assert_eq!(compare_encoded(&target, &visible), Ordering::Equal);
        assert!(decode(&[1, 2, 3]).is_err());
        assert!(decode(
            &enc(b"k", 1, Kind::Put)[..8]
                .iter()
                .map(|_| 7u8)
                .collect::<Vec<_>>()
        )
        .is_err());
    }
}
