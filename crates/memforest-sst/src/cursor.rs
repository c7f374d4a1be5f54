//! [`EntryCursor`]: an [`EntrySource`] that also lends the entry it would hand out next, so
//! a consumer that only copies entries elsewhere (compaction into a new file) pays no
//! allocation or reference count per entry ([`crate::CursorMerge`]).

use crate::error::Result;
use crate::internal_key::EntryRef;
use crate::source::EntrySource;

/// A source whose next entry can be read in place.
pub trait EntryCursor: EntrySource {
    /// The entry [`EntrySource::next_entry`] would return, borrowed (None at the end). May
    /// move to the next data block or file first, as `next_entry` would.
    ///
    /// # Errors
    /// Corruption or I/O errors of the underlying storage.
    fn peek(&mut self) -> Result<Option<EntryRef<'_>>>;

    /// Moves past the entry [`EntryCursor::peek`] returns (a no-op at the end).
    ///
    /// # Errors
    /// Corruption or I/O errors of the underlying storage.
    fn skip(&mut self) -> Result<()>;
}
