//! Flush: a sealed memtable becomes a level-0 segment file.

use std::path::Path;
use std::sync::Arc;

use memforest_io::Storage;
use memforest_sst::{SstBuilder, SstMeta, SstOptions};

use crate::error::Result;
use crate::memtable::MemTable;
use crate::range_del::RangeTombstones;
use crate::retention::Retention;

/// Writes the versions of `mem` that a reader at `oldest_snapshot` or later can see to
/// segment file `id` in `dir` (fsynced and renamed into place by the builder): every
/// version newer than `oldest_snapshot` and each key's newest version at or below it
/// ([`Retention`]; RocksDB's flush drops shadowed versions the same way). A key rewritten
/// many times while the memtable was active (a MemTree page, a session record) reaches
/// level 0 once, not once per write. Tombstones and range-deleted versions are kept:
/// compaction drops them.
///
/// # Errors
/// [`crate::Error::Sst`] on I/O errors; the temporary file is removed.
pub fn write_l0(
    storage: &Arc<dyn Storage>,
    mem: &MemTable,
    dir: &Path,
    id: u64,
    options: &SstOptions,
    oldest_snapshot: u64,
) -> Result<SstMeta> {
    let mut builder = SstBuilder::new_with(Arc::clone(storage), dir, id, options.clone())?;
    let none = RangeTombstones::default();
    let mut keep = Retention::new(oldest_snapshot, false, &none);
    mem.try_for_each_version(|key, seqno, kind, value| {
        if keep.keep(key, seqno, kind) {
            builder.add(key, seqno, kind, value)?;
        }
        Ok::<(), memforest_sst::SstError>(())
    })?;
    Ok(builder.finish()?)
}

#[cfg(test)]
mod tests {
    use memforest_sst::{EntrySource, Kind, SstReader};

    use super::*;

    /// `(key, seqno)` of every version `write_l0` keeps at `oldest`.
    fn flushed(mem: &MemTable, oldest: u64) -> Vec<(Vec<u8>, u64)> {
        let dir = tempfile::tempdir().unwrap();
        let fs = memforest_io::default_storage();
        let meta = write_l0(&fs, mem, dir.path(), 1, &SstOptions::default(), oldest).unwrap();
        let reader = SstReader::open(&meta.path).unwrap();
        let mut it = reader.iter().unwrap();
        let mut out = Vec::new();
        while let Some(e) = it.next_entry().unwrap() {
            out.push((e.user_key.to_vec(), e.seqno));
        }
        assert_eq!(meta.entry_count, out.len() as u64);
        out
    }

    #[test]
    fn shadowed_versions_stay_in_the_memtable_and_snapshots_keep_theirs() {
        let mem = MemTable::new();
        mem.insert(b"page", 1, Kind::Put, b"v1");
        mem.insert(b"page", 2, Kind::Put, b"v2");
        mem.insert(b"page", 4, Kind::Put, b"v4");
        mem.insert(b"gone", 3, Kind::Put, b"x");
        mem.insert(b"gone", 5, Kind::Tombstone, b"");
        let k = |s: &str, n| (s.as_bytes().to_vec(), n);
        // No snapshot: each key's newest version; the tombstone stays for compaction.
        assert_eq!(flushed(&mem, 5), vec![k("gone", 5), k("page", 4)]);
        // A snapshot at 2 still needs page@2 (and everything newer), not page@1.
        assert_eq!(
            flushed(&mem, 2),
            vec![k("gone", 5), k("gone", 3), k("page", 4), k("page", 2)]
        );
    }
}
