//! Read-only memory mapping of finished segment files: the only `unsafe` code in MemForest.
//!
//! A mapping is shared as one [`Bytes`] whose owner is the `memmap2::Mmap`: every block,
//! key and value handed out is a slice of it, and the region is unmapped when the last
//! slice (the reader, its iterators and every value) is dropped.
#![expect(
    unsafe_code,
    reason = "memmap2::Mmap::map is unsafe; this module is the single place that calls it"
)]

use std::fs::File;

use bytes::Bytes;

/// Maps the whole of `file` read-only.
///
/// # Errors
/// The OS error when the mapping fails.
pub fn map_readonly(file: &File) -> std::io::Result<Bytes> {
    // SAFETY: a mapping is undefined behaviour only if the file changes underneath it
    // (its bytes, or its length: truncation turns reads into SIGBUS). MemForest maps only
    // finished segment files, and its contract is that a segment file is immutable from the
    // moment `SstBuilder::finish` renames it into place: nothing writes to it, truncates it,
    // or maps it writable afterwards; it is never reused under the same name (ids are never
    // reused), and it is unlinked only once the engine no longer references it. Unlinking a
    // mapped file is harmless on Linux: the inode lives on until the last mapping is gone.
    // External processes modifying the data directory are outside this contract, as for
    // every embedded storage engine.
    let map = unsafe { memmap2::Mmap::map(file)? };
    Ok(Bytes::from_owner(map))
}
