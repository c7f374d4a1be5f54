//! Segment files: naming (`{id:020}.wal`), listing, creation, directory syncs.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use memforest_io::{Storage, WritableFile};

use crate::error::{Result, WalError};
use crate::format::MetadataType;
use crate::record_writer::LogWriter;
use crate::segment_meta::SegmentMeta;

/// Suffix of segment file names.
pub const SUFFIX: &str = ".wal";

/// Capacity of the write buffer in front of a segment file, in bytes.
const WRITE_BUFFER: usize = 256 * 1024;

/// The file name of segment `id`: 20 zero-padded decimal digits and `.wal`, so names sort
/// like ids.
#[must_use]
pub fn file_name(id: u64) -> String {
    format!("{id:020}{SUFFIX}")
}

/// The segment id in a file name written by [`file_name`], or `None` for any other name.
#[must_use]
pub fn parse_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The id of the segment after `id` in `dir`.
///
/// # Errors
/// [`WalError::Io`] when `id` is the largest id (a file named with it, another program's,
/// would otherwise wrap the log around to id 0).
pub(crate) fn next_id(dir: &Path, id: u64) -> Result<u64> {
    id.checked_add(1).ok_or_else(|| {
        WalError::io(
            path(dir, id),
            io::Error::other(
                "no segment id follows this one; move the file out of the WAL directory",
            ),
        )
    })
}

/// Path of segment `id` in `dir`.
#[must_use]
pub fn path(dir: &Path, id: u64) -> PathBuf {
    dir.join(file_name(id))
}

/// Ids of the segment files in `dir`, ascending. Other files are ignored.
pub(crate) fn list(storage: &dyn Storage, dir: &Path) -> Result<Vec<u64>> {
    let names = storage.list_dir(dir).map_err(|e| WalError::io(dir, e))?;
    let mut ids: Vec<u64> = names.iter().filter_map(|n| parse_file_name(n)).collect();
    ids.sort_unstable();
    Ok(ids)
}

/// fsyncs `dir`, making created, renamed and deleted entries durable.
pub(crate) fn sync_dir(storage: &dyn Storage, dir: &Path) -> Result<()> {
    storage.sync_dir(dir).map_err(|e| WalError::io(dir, e))
}

/// The buffered framing writer every active segment uses.
pub(crate) type SegmentWriter = LogWriter<BufWriter<SegmentFile>>;

/// The file under a segment's write buffer. Once [`abandon`]ed it refuses every write, so
/// bytes of a failed group still in the buffer can never reach the file later (not even
/// when the buffer is dropped and flushes itself).
#[derive(Debug)]
pub(crate) struct SegmentFile {
    file: Box<dyn WritableFile>,
    abandoned: bool,
}

impl SegmentFile {
    fn new(file: Box<dyn WritableFile>) -> Self {
        Self {
            file,
            abandoned: false,
        }
    }

    /// The file, to sync it.
    pub(crate) fn file(&self) -> &dyn WritableFile {
        &*self.file
    }
}

impl Write for SegmentFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.abandoned {
            return Err(io::Error::other("segment abandoned after a failed write"));
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// After a group failed to be written or synced: stops the segment taking any more bytes
/// and cuts it back to `valid_len` (the end of the last group written in full), so the
/// unacknowledged group is not found by recovery. Best effort: if the cut itself fails,
/// recovery still sees at most a torn tail or whole records that were never acknowledged.
pub(crate) fn abandon(writer: &mut SegmentWriter, valid_len: u64) {
    let segment = writer.get_mut().get_mut();
    segment.abandoned = true;
    // Errors are ignored: the caller reports the failure that got us here.
    if segment.file.set_len(valid_len).is_ok() {
        let _ = segment.file.sync_data();
    }
}

/// Opens an existing segment for appending after its first `valid_len` bytes, cutting off
/// anything beyond them and syncing the cut before returning.
pub(crate) fn reopen(
    storage: &dyn Storage,
    dir: &Path,
    id: u64,
    valid_len: u64,
) -> Result<SegmentWriter> {
    let p = path(dir, id);
    let io = |e| WalError::io(&p, e);
    let file = storage.open_append(&p).map_err(io)?;
    if file.current_len().map_err(io)? != valid_len {
        file.set_len(valid_len).map_err(io)?;
        file.sync_all().map_err(io)?;
    }
    let buf = BufWriter::with_capacity(WRITE_BUFFER, SegmentFile::new(file));
    Ok(LogWriter::resume(buf, id, valid_len))
}

/// Creates segment `meta.segment_id` holding only its metadata record, fdatasyncs it and
/// fsyncs the directory, so the segment exists durably before anything is written to it.
pub(crate) fn create(
    storage: &dyn Storage,
    dir: &Path,
    meta: &SegmentMeta,
) -> Result<SegmentWriter> {
    let p = path(dir, meta.segment_id);
    let io = |e| WalError::io(&p, e);
    let file = storage.create_new(&p).map_err(io)?;
    let mut writer = LogWriter::new(
        BufWriter::with_capacity(WRITE_BUFFER, SegmentFile::new(file)),
        meta.segment_id,
    );
    writer
        .add_metadata(MetadataType::SEGMENT_META, &meta.encode())
        .map_err(io)?;
    writer.get_mut().flush().map_err(io)?;
    writer.get_ref().get_ref().file().sync_data().map_err(io)?;
    sync_dir(storage, dir)?;
    Ok(writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort() {
        assert_eq!(file_name(42), "00000000000000000042.wal");
        assert_eq!(parse_file_name(&file_name(u64::MAX)), Some(u64::MAX));
        for bad in [
            "42.wal",
            "0000000000000000004a.wal",
            "00000000000000000042.log",
            "",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
        assert!(file_name(9) < file_name(10));
    }
}
