//! Which keys the engine's segment bloom filters hold ([`memforest_sst::filter_scope`]).
//!
//! Filters serve point reads. The read path's lexical index (table [`Table::Postings`]:
//! term postings, knowledge-update slots and occurrence entries: most of a store's
//! entries, many per fact) and the fact time index are
//! only ever scanned by prefix, so [`PointReadKeys`] leaves them out: their filters cost
//! build time and `bits_per_key` bits of heap per key for the file's life and answer no
//! lookup. Every other key is in the filter, as before. A lookup of a left-out key is
//! still answered correctly, from the index (see the SST crate's module doc).

use std::num::NonZeroU32;

use memforest_sst::FilterScope;

use crate::recall::index::{OCCURRENCE_PREFIX, SLOT_PREFIX, TERM_PREFIX};
use crate::schema::Table;
use memforest_engine::key;

/// The default [`memforest_sst::SstOptions::filter_scope`]: every key but the scan-only
/// ones (the lexical index's postings, slots and occurrences, and the fact time index).
/// Scope id [`POINT_READ_KEYS_ID`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PointReadKeys;

/// The id [`PointReadKeys`] stores in segment files (format version 3).
pub const POINT_READ_KEYS_ID: NonZeroU32 = NonZeroU32::MIN;

impl FilterScope for PointReadKeys {
    fn id(&self) -> NonZeroU32 {
        POINT_READ_KEYS_ID
    }

    /// Changing what this answers for any key needs a new id (see
    /// [`FilterScope::id`]): files already written under id 1 left out exactly the keys
    /// this rule leaves out, and readers trust their filters for every other key.
    fn includes(&self, user_key: &[u8]) -> bool {
        let Some(k) = key::decode(user_key) else {
            return true;
        };
        match Table::from_tag(k.table.tag()) {
            Some(Table::FactTimeIndex) => false,
            Some(Table::Postings) => !matches!(
                k.key.first(),
                Some(&(TERM_PREFIX | SLOT_PREFIX | OCCURRENCE_PREFIX))
            ),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::index::{
        LATEST_SESSION_KEY, OCCURRENCES_COMPLETE_KEY, STATS_KEY, VERSION_KEY,
    };
    use memforest_engine::TenantId;

    #[test]
    fn only_scan_only_keys_are_left_out() {
        let t = TenantId::new("t1").unwrap();
        let scope = PointReadKeys;
        assert_eq!(
            scope.id().get(),
            1,
            "the rule below is the one files of id 1 hold"
        );
        for scanned in [
            t.key(Table::Postings.into(), b"tword\0\0\0\0\0\0\0\0\x01"),
            t.key(Table::Postings.into(), b"kuser\0city\0\0\0\0\0\0\0\0\x01"),
            t.key(
                Table::Postings.into(),
                b"o\0\0\0\0\0\0\0\x07\0\0\0\0\0\0\0\x01",
            ),
            t.key(Table::FactTimeIndex.into(), b"\0\0\0\0\0\0\0\x01"),
        ] {
            assert!(!scope.includes(&scanned), "{scanned:?}");
        }
        for looked_up in [
            t.key(Table::Postings.into(), STATS_KEY),
            t.key(Table::Postings.into(), LATEST_SESSION_KEY),
            t.key(Table::Postings.into(), OCCURRENCES_COMPLETE_KEY),
            t.key(Table::Postings.into(), VERSION_KEY),
            t.key(Table::NodePages.into(), b"tree"),
            t.key(Table::Facts.into(), b"t"),
            t.key(Table::Memberships.into(), b"o"),
            vec![key::RESERVED_PREFIX, 1, 2],
            Vec::new(),
        ] {
            assert!(scope.includes(&looked_up), "{looked_up:?}");
        }
    }
}
