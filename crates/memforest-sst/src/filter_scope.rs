//! Filter scopes: which user keys a segment's bloom filter holds (format version 3).
//!
//! Some keys are only ever scanned, never looked up one at a time (the engine's lexical
//! postings are about three quarters of its entries). Hashing them into every file's filter
//! costs build time and memory (`bits_per_key` bits per key, held on the heap for the
//! file's life) and answers no lookup. A [`FilterScope`] says which keys a filter holds;
//! a version 3 file records the scope's id at the start of its filter block, and
//! [`crate::SstReader::get`] consults the filter for a key only when the reader was given
//! the scope that built the file and that scope includes the key. Any other lookup goes to
//! the index, so a key left out of a filter is never reported absent: a wrong or missing
//! scope costs speed, never a key. (RocksDB reaches the same end with a filter policy per
//! column family and `whole_key_filtering`.)

use std::fmt::Debug;
use std::num::NonZeroU32;

use bytes::Bytes;

/// Which user keys the bloom filters built under it hold.
pub trait FilterScope: Send + Sync + Debug {
    /// Identifies the rule; stored in every file built under it. A rule that answers
    /// [`FilterScope::includes`] differently for any key needs a new id: a reader trusts a
    /// file's filter for the keys its own scope of the same id includes, so a key the new
    /// rule includes and the old one left out would be reported absent. Ids are global to
    /// the files a reader opens; the engine's scope uses 1
    /// (`memforest::filter_scope::PointReadKeys`).
    fn id(&self) -> NonZeroU32;

    /// Whether filters built under this scope hold `user_key`.
    fn includes(&self, user_key: &[u8]) -> bool;
}

/// The scope id a file stores for a filter over every user key (and what every file of
/// format version 1 or 2 has).
pub const EVERY_KEY: u32 = 0;

/// The first format version whose filter block starts with a scope id.
const SCOPED_VERSION: u32 = 3;

/// Whether files of format `version` store a scope id.
#[must_use]
pub(crate) fn stored(version: u32) -> bool {
    version >= SCOPED_VERSION
}

/// The filter block payload of a version 3 file: `scope id (u32 LE) | filter`.
#[must_use]
pub(crate) fn encode(scope: u32, filter: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + filter.len());
    out.extend_from_slice(&scope.to_le_bytes());
    out.extend_from_slice(filter);
    out
}

/// Splits a filter block payload of a file of format `version` into its scope id
/// ([`EVERY_KEY`] before version 3) and the filter.
///
/// # Errors
/// A reason when a version 3 payload is shorter than its scope id.
pub(crate) fn decode(payload: Bytes, version: u32) -> Result<(u32, Bytes), &'static str> {
    if !stored(version) {
        return Ok((EVERY_KEY, payload));
    }
    let id: [u8; 4] = payload
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or("filter block shorter than its scope id")?;
    Ok((u32::from_le_bytes(id), payload.slice(4..)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_ids_round_trip_from_version_3_on() {
        let payload = Bytes::from(encode(7, b"bits"));
        assert_eq!(
            decode(payload.clone(), 3),
            Ok((7, Bytes::from_static(b"bits")))
        );
        assert_eq!(decode(payload.clone(), 2), Ok((EVERY_KEY, payload)));
        assert!(decode(Bytes::from_static(b"abc"), 3).is_err());
    }
}
