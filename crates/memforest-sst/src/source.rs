//! The seam between sources of sorted entries and the iterators that combine them.

use crate::error::Result;
use crate::internal_key::Entry;

/// A cursor over entries in internal-key order (user key ascending, seqno descending), every
/// version included: an [`crate::SstIterator`], a [`crate::SortedRun`] cursor, or a
/// [`crate::MergeIterator`] over other sources.
///
/// After an error the position is unspecified: seek again or drop the source.
pub trait EntrySource {
    /// Positions before the first entry.
    ///
    /// # Errors
    /// Corruption or I/O errors of the underlying storage.
    fn seek_to_first(&mut self) -> Result<()>;

    /// Positions before the first entry at or after `(user_key, seqno)` in internal-key
    /// order, i.e. the newest version of `user_key` with a seqno `<= seqno`, or a later key.
    ///
    /// # Errors
    /// Corruption or I/O errors of the underlying storage.
    fn seek(&mut self, user_key: &[u8], seqno: u64) -> Result<()>;

    /// The next entry, or `None` at the end.
    ///
    /// # Errors
    /// Corruption or I/O errors of the underlying storage.
    fn next_entry(&mut self) -> Result<Option<Entry>>;
}
