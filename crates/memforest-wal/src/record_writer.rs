//! [`LogWriter`]: frames logical records into 32 KiB blocks of physical records.

use std::io::{self, Write};

use crate::format::{record_crc, MetadataType, RecordType, BLOCK_SIZE, HEADER_SIZE};

/// Zero bytes used to pad a block tail too short for a header.
const ZEROS: [u8; HEADER_SIZE] = [0; HEADER_SIZE];

/// Writes logical records to `W` using the WAL's physical framing (RocksDB `log::Writer`).
///
/// A logical record of any length is split into `First`, `Middle`..., `Last` fragments so
/// that no physical record crosses a 32 KiB block boundary; one that fits is a single `Full`
/// record. A block tail shorter than a header is filled with zeros. Every header carries the
/// `log_number` (the WAL segment id), which is covered by the checksum.
///
/// The writer does no buffering of its own and never syncs: wrap `W` in a `BufWriter` and
/// sync the underlying file yourself. The MemForest manifest reuses this framing.
#[derive(Debug)]
pub struct LogWriter<W: Write> {
    dest: W,
    log_number: u64,
    /// Bytes written so far, including what `dest` held when the writer was created.
    len: u64,
}

impl<W: Write> LogWriter<W> {
    /// A writer for an empty log identified by `log_number`.
    pub fn new(dest: W, log_number: u64) -> Self {
        Self::resume(dest, log_number, 0)
    }

    /// A writer appending to a log that already holds `existing_len` bytes (its last valid
    /// record ends there), so block boundaries stay where a reader expects them.
    pub fn resume(dest: W, log_number: u64, existing_len: u64) -> Self {
        Self {
            dest,
            log_number,
            len: existing_len,
        }
    }

    /// Appends one logical record, fragmenting it across blocks as needed.
    ///
    /// # Errors
    /// Whatever `W::write_all` returns; the log is then in an unknown state.
    pub fn add_record(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut rest = payload;
        let mut first = true;
        loop {
            let room = self.start_fragment()?;
            let take = rest.len().min(room);
            let (fragment, tail) = rest.split_at(take);
            let last = tail.is_empty();
            let kind = match (first, last) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, false) => RecordType::Middle,
                (false, true) => RecordType::Last,
            };
            self.emit(kind, fragment)?;
            if last {
                return Ok(());
            }
            rest = tail;
            first = false;
        }
    }

    /// Appends one metadata record (a type `>= 0x80`, never fragmented).
    ///
    /// # Errors
    /// `InvalidInput` when the payload does not fit in one block (more than
    /// [`crate::format::MAX_FRAGMENT_PAYLOAD`] bytes); otherwise what `W::write_all` returns.
    pub fn add_metadata(&mut self, kind: MetadataType, payload: &[u8]) -> io::Result<()> {
        if payload.len() > crate::format::MAX_FRAGMENT_PAYLOAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "metadata record larger than one block",
            ));
        }
        if self.start_fragment()? < payload.len() {
            self.pad_block()?;
        }
        self.emit(RecordType::Metadata(kind), payload)
    }

    /// Total length of the log in bytes, including bytes present before [`Self::resume`].
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the log holds no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The destination.
    pub fn get_ref(&self) -> &W {
        &self.dest
    }

    /// The destination, mutably (to flush or sync it).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.dest
    }

    /// The destination, consuming the writer.
    pub fn into_inner(self) -> W {
        self.dest
    }

    /// Pads the block tail if no header fits; returns the payload room left in this block.
    fn start_fragment(&mut self) -> io::Result<usize> {
        if self.block_left() < HEADER_SIZE {
            self.pad_block()?;
        }
        Ok(self.block_left() - HEADER_SIZE)
    }

    fn block_left(&self) -> usize {
        BLOCK_SIZE - crate::format::block_offset(self.len)
    }

    fn pad_block(&mut self) -> io::Result<()> {
        let left = self.block_left();
        let mut remaining = left;
        while remaining > 0 {
            let n = remaining.min(ZEROS.len());
            self.dest.write_all(ZEROS.get(..n).unwrap_or_default())?;
            remaining -= n;
        }
        self.len += left as u64;
        Ok(())
    }

    fn emit(&mut self, kind: RecordType, fragment: &[u8]) -> io::Result<()> {
        let type_byte = kind.to_byte();
        let len = u16::try_from(fragment.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "fragment too long"))?;
        let mut header = [0u8; HEADER_SIZE];
        let crc = record_crc(type_byte, self.log_number, fragment);
        for (dst, src) in header.iter_mut().zip(
            crc.to_le_bytes()
                .into_iter()
                .chain(len.to_le_bytes())
                .chain([type_byte])
                .chain(self.log_number.to_le_bytes()),
        ) {
            *dst = src;
        }
        self.dest.write_all(&header)?;
        self.dest.write_all(fragment)?;
        self.len += (HEADER_SIZE + fragment.len()) as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_short_block_tails_with_zeros() {
        let mut w = LogWriter::new(Vec::new(), 7);
        // Leave 10 bytes in the first block: less than a header.
        w.add_record(&vec![1u8; BLOCK_SIZE - HEADER_SIZE - 10])
            .unwrap();
        assert_eq!(w.len(), (BLOCK_SIZE - 10) as u64);
        w.add_record(b"x").unwrap();
        let bytes = w.into_inner();
        assert_eq!(bytes.len(), BLOCK_SIZE + HEADER_SIZE + 1);
        assert!(bytes[BLOCK_SIZE - 10..BLOCK_SIZE].iter().all(|&b| b == 0));
        assert_eq!(bytes[BLOCK_SIZE + 6], RecordType::Full.to_byte());
    }

    #[test]
    fn fragments_large_records() {
        let mut w = LogWriter::new(Vec::new(), 1);
        w.add_record(&vec![9u8; 3 * BLOCK_SIZE]).unwrap();
        let bytes = w.into_inner();
        let types: Vec<u8> = (0..4).map(|b| bytes[b * BLOCK_SIZE + 6]).collect();
        assert_eq!(types, [2, 3, 3, 4]);
    }
}
