//! memforest-sst: immutable, checksummed segment files (SSTs).
//!
//! The engine flushes its memtable into segment files with [`SstBuilder`] and reads them
//! with [`SstReader`] (point lookups) and iterators: [`SstIterator`] (every entry of one
//! file), [`MergeIterator`] (several files and in-memory [`SortedRun`]s, merged),
//! [`ScanIterator`] (the snapshot view: newest version per key, tombstones hiding older
//! versions, range bounds) and [`CursorMerge`] (files merged for compaction, each entry
//! lent in place through [`EntryCursor`] rather than handed out owned). The byte layout is
//! specified in `docs/format/sst.md`.
//!
//! Every byte of a file is covered by a CRC: data, filter, index and properties blocks each
//! carry a masked CRC-32 in their trailer, and the footer carries its own. Any decoding
//! problem is an [`SstError::Corrupt`] naming the file and byte offset; nothing here panics
//! on any input bytes.
//!
//! Files are read through a read-only `mmap` (module `mmap`, the one place in MemForest
//! that uses `unsafe`). Values are [`bytes::Bytes`] slices of that mapping (zero-copy; a
//! zstd block is decompressed into an owned buffer), and the mapping lives as long as any
//! reader clone, iterator or value does. A reader opened under [`ReadBudgets`] reads a point
//! lookup's data block with `pread` through a bounded [`DescriptorTable`] instead once its
//! [`Residency`] budget has had to release pages and the block's are not charged (the
//! value is then a slice of that block's copy). A file kept elsewhere (an object in an
//! object store) opens by range instead ([`SstReader::open_ranged`] over a [`RangeRead`]):
//! its metadata in one or two reads at open, then one read per block used, each block's
//! CRC checked on every read. **Deletion:** a file must never be written or
//! truncated once finished; the engine unlinks an obsolete file only after dropping its
//! `SstReader` from every version that referenced it (its version refcount reaches zero).
//! **Memory:** a mapped page counts in the process's resident set once read; readers
//! opened with [`SstReader::open_tracked`] keep the pages of all their files under one
//! [`Residency`] byte budget. **Descriptors:** a reader holds none of its own once open;
//! only the [`DescriptorTable`] does, up to its capacity.
//! Iterators or values still alive then keep the mapping, and on Linux an unlinked file's
//! pages stay readable through it until the last one is dropped.
#![deny(clippy::indexing_slicing)]

pub mod block;
pub mod block_handle;
pub mod bloom;
mod budgets;
mod builder;
mod cursor;
mod cursor_merge;
mod descriptors;
mod error;
mod file;
pub mod filter_scope;
pub mod footer;
mod index;
pub mod internal_key;
mod iter;
mod merge;
mod mmap;
mod options;
pub mod properties;
mod range_read;
mod reader;
mod recency;
mod residency;
mod run;
mod scan;
mod source;
mod table_block;
mod writer;

pub use budgets::ReadBudgets;
pub use builder::{file_name, SstBuilder, SstMeta, MAX_KEY_LEN, MAX_VALUE_LEN};
pub use cursor::EntryCursor;
pub use cursor_merge::CursorMerge;
pub use descriptors::DescriptorTable;
pub use error::{Result, SstError};
pub use filter_scope::FilterScope;
pub use footer::{FORMAT_VERSION, MIN_FORMAT_VERSION};
pub use internal_key::{Entry, EntryRef, Kind, MAX_SEQNO};
pub use iter::SstIterator;
pub use merge::{BoxedSource, MergeIterator};
pub use options::{Compression, SstOptions};
pub use properties::Properties;
pub use range_read::RangeRead;
pub use reader::{Lookup, SstReader, OPEN_TAIL_LEN};
pub use recency::{LastUse, Recency};
pub use residency::{Residency, WINDOW as RESIDENCY_WINDOW};
pub use run::SortedRun;
pub use scan::{ScanIterator, ScanOptions};
pub use source::EntrySource;
