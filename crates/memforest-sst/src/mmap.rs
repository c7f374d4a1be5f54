//! Read-only memory mapping of finished segment files: the only `unsafe` code in MemForest.
//!
//! A mapping is shared as one [`Bytes`] whose owner is the `memmap2::Mmap`: every block,
//! key and value handed out is a slice of it, and the region is unmapped when the last
//! slice (the reader, its iterators and every value) is dropped. A [`Mapping`] handle to
//! the same region lets [`crate::Residency`] drop its resident pages
//! ([`Mapping::release`]).
#![expect(
    unsafe_code,
    reason = "memmap2::Mmap::map and MADV_DONTNEED are unsafe; this module is the single place that calls them"
)]

use std::fs::File;
use std::sync::Arc;

use bytes::Bytes;
use memmap2::{Mmap, UncheckedAdvice};

/// A handle to a read-only file mapping (shares the region with the [`Bytes`] of
/// [`map_readonly`]).
#[derive(Debug, Clone)]
pub struct Mapping(Arc<Mmap>);

/// The owner of a mapping's [`Bytes`].
struct Owner(Arc<Mmap>);

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Maps the whole of `file` read-only; returns its bytes and a handle for releasing its
/// resident pages.
///
/// # Errors
/// The OS error when the mapping fails.
pub fn map_readonly(file: &File) -> std::io::Result<(Bytes, Mapping)> {
    // SAFETY: a mapping is undefined behaviour only if the file changes underneath it
    // (its bytes, or its length: truncation turns reads into SIGBUS). MemForest maps only
    // finished segment files, and its contract is that a segment file is immutable from the
    // moment `SstBuilder::finish` renames it into place: nothing writes to it, truncates it,
    // or maps it writable afterwards; it is never reused under the same name (ids are never
    // reused), and it is unlinked only once the engine no longer references it. Unlinking a
    // mapped file is harmless on Linux: the inode lives on until the last mapping is gone.
    // External processes modifying the data directory are outside this contract, as for
    // every embedded storage engine.
    let map = Arc::new(unsafe { Mmap::map(file)? });
    Ok((Bytes::from_owner(Owner(Arc::clone(&map))), Mapping(map)))
}

impl Mapping {
    /// Drops the mapping's pages from the process's resident set (`MADV_DONTNEED`); the
    /// next read of a page maps it again from the page cache (or the file). Best effort: an
    /// error leaves the pages resident.
    pub fn release(&self) {
        // SAFETY: MADV_DONTNEED on a private or anonymous mapping discards its contents
        // (later reads see zeros or the file's bytes, not what was written); that is what
        // makes it unsafe in general. This mapping is read-only and shared (`Mmap::map`:
        // PROT_READ, MAP_SHARED) over a file that never changes (see `map_readonly`), and
        // nothing ever wrote to it: dropping a page only removes it from this process's page
        // tables, and the next access faults in the same bytes from the file. Slices borrowed
        // from the mapping stay valid and keep reading identical bytes.
        let _ = unsafe { self.0.unchecked_advise(UncheckedAdvice::DontNeed) };
    }
}
