//! Flush: a sealed memtable becomes a level-0 segment file.

use std::path::Path;
use std::sync::Arc;

use memforest_io::Storage;
use memforest_sst::{SstBuilder, SstMeta, SstOptions};

use crate::error::Result;
use crate::memtable::MemTable;

/// Writes every version in `mem` to segment file `id` in `dir` (fsynced and renamed into
/// place by the builder). Nothing is dropped: a flush keeps all versions, compaction
/// decides what is garbage.
///
/// # Errors
/// [`crate::Error::Sst`] on I/O errors; the temporary file is removed.
pub fn write_l0(
    storage: &Arc<dyn Storage>,
    mem: &MemTable,
    dir: &Path,
    id: u64,
    options: &SstOptions,
) -> Result<SstMeta> {
    let mut builder = SstBuilder::new_with(Arc::clone(storage), dir, id, options.clone())?;
    mem.try_for_each_version(|key, seqno, kind, value| builder.add(key, seqno, kind, value))?;
    Ok(builder.finish()?)
}
