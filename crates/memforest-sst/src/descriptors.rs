//! [`DescriptorTable`]: a bounded set of open segment-file descriptors, shared by every
//! engine in the process, through which point lookups read their data block with `pread`
//! once the store has outgrown its residency budget (the role of RocksDB's table cache
//! under `max_open_files`, and of fjall's descriptor table).
//!
//! Why not always the mapping: a point lookup reads one scattered block (about 4 KiB) of a
//! file. Through the mapping that read faults in a whole page-cache folio (up to 2 MiB on
//! Linux 6.18, see [`crate::Residency`]); while the residency budget has room, that is the
//! cheapest read there is (the next reads of the folio are plain loads, and the value is a
//! zero-copy slice). Once the files outgrow the budget, each such fault charges a window
//! that a later shrink drops with `MADV_DONTNEED` (a page-table walk and a TLB shootdown
//! across the process's threads), and dropped pages fault back in later. So once the
//! budget has released a file, a point lookup whose block is not charged already copies
//! the block with `pread` instead: nothing is mapped, charged or released
//! ([`crate::Residency`]'s admission rule). Always copying would slow random reads of a
//! store that fits the budget (a system call and a copy where a load would do); mapping
//! whenever the budget had room would churn once the files outgrow it (each shrink frees a
//! quarter of the budget, which lookups fill again). Iterators
//! (compaction, scans, scrubs) always read through the mapping, whose readahead suits
//! sequential reads.
//!
//! Why bounded: a descriptor per file would make a large engine hold hundreds,
//! and a process holding many engines (a test binary, a server with one engine per user)
//! would run out (fjall issue 247: "too many open files" under macOS's default limit of
//! 256). So the table holds at most [`DescriptorTable::capacity`] descriptors across every
//! engine that shares it; when full, the least recently read files' descriptors are closed
//! until at most three quarters of the capacity are open, and a lookup in a file whose
//! descriptor was closed opens it again (if the table is still full, another thread
//! shrinking it, that descriptor serves the one read and closes). A lookup that cannot open
//! the file (`EMFILE` included) reads through the mapping as before: the table only ever
//! saves work, it never fails a read. A descriptor closed while a read is using it closes
//! when that read ends, so the process may hold more than the capacity by the reads in
//! flight at that moment.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::recency::{LastUse, Recency};

/// The shared table's capacity is the process's soft open-file limit divided by this: with
/// macOS's 256, 32 descriptors; with Linux's usual 1,024, 128.
const LIMIT_SHARE: u64 = 8;

/// The shared table's capacity never exceeds this many descriptors.
const MAX_SHARED: u64 = 4096;

/// A bounded set of open segment-file descriptors (see the module docs).
#[derive(Debug)]
pub struct DescriptorTable {
    capacity: usize,
    open: AtomicUsize,
    files: Recency<Descriptor>,
}

impl DescriptorTable {
    /// A table of at most `capacity` open descriptors (0: none; every read then goes
    /// through the mapping).
    #[must_use]
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            capacity,
            open: AtomicUsize::new(0),
            files: Recency::new(),
        })
    }

    /// The table every engine of this process shares: its capacity is an eighth of the
    /// soft `RLIMIT_NOFILE` read at first use, at most 4,096 (no limit: 4,096; 0 where the
    /// platform has no such limit or `pread`).
    #[must_use]
    pub fn shared() -> &'static Arc<Self> {
        static SHARED: OnceLock<Arc<DescriptorTable>> = OnceLock::new();
        SHARED.get_or_init(|| {
            let share = soft_open_file_limit().map_or(MAX_SHARED, |limit| limit / LIMIT_SHARE);
            Self::new(usize::try_from(share.min(MAX_SHARED)).unwrap_or(0))
        })
    }

    /// The most descriptors the table holds open at once (besides reads in flight).
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Descriptors it holds open now.
    #[must_use]
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// A descriptor slot for the OS file at `path`, which `file` (the caller's descriptor,
    /// not kept) has open. The slot opens `path` on its first read and again after its
    /// descriptor was closed, and reads through it only while `path` still names the same
    /// file (device and inode).
    pub(crate) fn register(self: &Arc<Self>, path: PathBuf, file: &File) -> Arc<Descriptor> {
        let descriptor = Arc::new(Descriptor {
            table: Arc::clone(self),
            path,
            identity: identity(file),
            file: Mutex::new(None),
            last_use: AtomicU64::new(0),
        });
        self.files.add(&descriptor);
        descriptor
    }

    /// Counts one more open descriptor if the table has room (closing the least recently
    /// used ones first when it has none); false when it still has none.
    fn admit(&self) -> bool {
        if self.capacity == 0 {
            return false;
        }
        for attempt in 0..2 {
            if self.open.fetch_add(1, Ordering::Relaxed) < self.capacity {
                return true;
            }
            self.open.fetch_sub(1, Ordering::Relaxed);
            if attempt == 0 {
                self.shrink();
            }
        }
        false
    }

    /// Closes the least recently read files' descriptors until at most 3/4 of the capacity
    /// is open (one fewer than the capacity when that is under 4). One caller at a time
    /// picks the files to close; the others go on.
    fn shrink(&self) {
        let target = self.capacity.saturating_sub((self.capacity / 4).max(1));
        self.files
            .shrink(|| self.open() <= target, Descriptor::close);
    }
}

/// One segment file's slot in a [`DescriptorTable`].
#[derive(Debug)]
pub(crate) struct Descriptor {
    table: Arc<DescriptorTable>,
    path: PathBuf,
    /// Device and inode of the file the reader mapped (None: unknown; never reopened). The
    /// mapping keeps that inode alive, so no other file can take its number meanwhile.
    identity: Option<(u64, u64)>,
    /// The open descriptor, if the table holds one for this file.
    file: Mutex<Option<Arc<File>>>,
    /// The table's clock at the last read ([`Recency`]).
    last_use: AtomicU64,
}

impl Descriptor {
    /// The `len` bytes at `offset`, read with `pread`, opening the file again if its
    /// descriptor was closed. None when no descriptor is to be had (the caller reads
    /// through its mapping); otherwise the read's outcome (`UnexpectedEof` when the file
    /// ends first).
    pub(crate) fn read(&self, offset: u64, len: usize) -> Option<io::Result<Vec<u8>>> {
        let file = self.file()?;
        let mut buf = vec![0u8; len];
        Some(pread(&file, offset, &mut buf).map(|()| buf))
    }

    /// The held descriptor; else the file opened again, kept if the table admits it (a
    /// descriptor it does not admit serves this read and closes after it). None in a table
    /// of no descriptors, or when the file cannot be opened or its path now names another
    /// file.
    fn file(&self) -> Option<Arc<File>> {
        let table = &self.table;
        if table.capacity == 0 {
            return None;
        }
        table.files.touch(self);
        if let Some(file) = &*self.file.lock() {
            return Some(Arc::clone(file));
        }
        let opened = File::open(&self.path).ok()?;
        if self.identity.is_none() || identity(&opened) != self.identity {
            return None;
        }
        let opened = Arc::new(opened);
        if table.admit() {
            let mut slot = self.file.lock();
            if let Some(raced) = &*slot {
                // Another lookup reopened it meanwhile: keep theirs.
                table.open.fetch_sub(1, Ordering::Relaxed);
                return Some(Arc::clone(raced));
            }
            *slot = Some(Arc::clone(&opened));
        }
        Some(opened)
    }

    /// Closes the held descriptor, if any (reads using it finish first).
    fn close(&self) {
        if self.file.lock().take().is_some() {
            self.table.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl LastUse for Descriptor {
    fn last_use(&self) -> &AtomicU64 {
        &self.last_use
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(unix)]
fn pread(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn pread(_: &File, _: u64, _: &mut [u8]) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

/// The device and inode of `file`.
#[cfg(unix)]
fn identity(file: &File) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// No stable file identity here: files are never reopened.
#[cfg(not(unix))]
fn identity(_: &File) -> Option<(u64, u64)> {
    None
}

/// The soft open-file limit (None: unlimited).
#[cfg(unix)]
fn soft_open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// No `pread` here: the shared table holds nothing.
#[cfg(not(unix))]
fn soft_open_file_limit() -> Option<u64> {
    Some(0)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::cast_possible_truncation,
        reason = "test code"
    )]

    use super::*;

    /// `count` files in `dir`, file `i` holding 4 KiB of byte `i`; their slots in `table`.
    fn files(
        dir: &std::path::Path,
        table: &Arc<DescriptorTable>,
        count: u8,
    ) -> Vec<Arc<Descriptor>> {
        (0..count)
            .map(|i| {
                let path = dir.join(format!("f{i}"));
                std::fs::write(&path, vec![i; 4096]).unwrap();
                table.register(path.clone(), &File::open(&path).unwrap())
            })
            .collect()
    }

    /// Whether the slot holds a descriptor now.
    fn held(d: &Descriptor) -> bool {
        d.file.lock().is_some()
    }

    #[test]
    fn the_table_holds_at_most_its_capacity_and_reopens_closed_files() {
        let dir = tempfile::tempdir().unwrap();
        let table = DescriptorTable::new(4);
        let slots = files(dir.path(), &table, 10);
        assert_eq!(table.open(), 0, "nothing is opened before a read needs it");
        for round in 0..3 {
            for (i, d) in slots.iter().enumerate() {
                let bytes = d.read(100 * round, 16).unwrap().unwrap();
                assert_eq!(bytes, vec![i as u8; 16]);
                assert!(held(d), "a read leaves the file's descriptor open");
                assert!(table.open() <= table.capacity());
                assert_eq!(table.open(), slots.iter().filter(|d| held(d)).count());
            }
        }
        assert_eq!(
            table.open(),
            4,
            "each open past the fourth closes the oldest"
        );
        let err = slots[0].read(4090, 16).unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        drop(slots);
        assert_eq!(table.open(), 0, "dropping a slot closes its descriptor");
    }

    /// The least recently read file loses its descriptor; once its path is gone, or names
    /// another file, a read gets no descriptor (the reader then uses its mapping), and the
    /// table still serves the other files.
    #[test]
    fn a_closed_file_whose_path_changed_gets_no_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let table = DescriptorTable::new(1);
        let slots = files(dir.path(), &table, 2);
        assert_eq!(slots[0].read(0, 8).unwrap().unwrap(), vec![0u8; 8]);
        assert_eq!(slots[1].read(0, 8).unwrap().unwrap(), vec![1u8; 8]);
        assert!(
            !held(&slots[0]) && held(&slots[1]),
            "the newer read took the one place"
        );
        // Another file renamed over the path: created while f0 still exists, so it has
        // another inode (a reader's mapping keeps its file's inode alive the same way).
        let f0 = dir.path().join("f0");
        let other = dir.path().join("other");
        std::fs::write(&other, vec![9u8; 4096]).unwrap();
        std::fs::rename(&other, &f0).unwrap();
        assert!(slots[0].read(0, 8).is_none());
        std::fs::remove_file(&f0).unwrap();
        assert!(slots[0].read(0, 8).is_none());
        assert_eq!(table.open(), 1);
        assert_eq!(slots[1].read(0, 8).unwrap().unwrap(), vec![1u8; 8]);
    }

    #[test]
    fn a_table_of_no_descriptors_serves_no_reads() {
        let dir = tempfile::tempdir().unwrap();
        let table = DescriptorTable::new(0);
        let slots = files(dir.path(), &table, 2);
        assert!(slots.iter().all(|d| d.read(0, 8).is_none()));
        assert_eq!(table.open(), 0);
    }

    /// Threads reading 32 files through 5 descriptors: every few reads close and reopen
    /// descriptors while others read; every read returns its file's bytes, and the count
    /// matches the slots that hold one.
    #[test]
    fn concurrent_reads_and_shrinks_keep_the_count_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let table = DescriptorTable::new(5);
        let slots = files(dir.path(), &table, 32);
        std::thread::scope(|s| {
            for seed in 0..4u64 {
                let slots = &slots;
                s.spawn(move || {
                    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                    for _ in 0..2_000 {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let i = (x % 32) as usize;
                        if let Some(read) = slots[i].read(x % 4000, 64) {
                            assert_eq!(read.unwrap(), vec![i as u8; 64]);
                        }
                    }
                });
            }
        });
        assert!(table.open() <= table.capacity());
        assert_eq!(table.open(), slots.iter().filter(|d| held(d)).count());
    }
}
