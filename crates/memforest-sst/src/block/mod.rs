//! Blocks: the unit of checksumming, compression and caching.
//!
//! A block payload is a run of prefix-compressed entries followed by a restart array
//! (RocksDB `table/block_based/block_builder.cc`): each entry is
//! `varint32 shared | varint32 non_shared | varint32 value_len | key[shared..] | value`,
//! an entry at a restart point stores its whole key (`shared == 0`), and the payload ends
//! with the restart offsets (`u32` LE each) and their count (`u32` LE). On disk the payload
//! (possibly zstd-compressed) is followed by a 5-byte [`trailer`]. Data blocks and index
//! blocks share this layout; keys are opaque bytes compared by a caller-supplied function.

pub mod builder;
pub mod compression;
pub mod iter;
pub mod trailer;

use bytes::Bytes;
use memforest_codec::DecodeError;

/// Length of the restart count at the end of a payload, in bytes.
const COUNT_LEN: usize = 4;

/// Length of one restart offset, in bytes.
const RESTART_LEN: usize = 4;

/// A decoded (uncompressed) block payload: the entry area and the restart array.
///
/// Cheap to clone (the payload is a reference-counted [`Bytes`], usually a slice of the
/// file mapping).
#[derive(Debug, Clone)]
pub struct Block {
    data: Bytes,
    /// Offset of the restart array: entries occupy `data[..restarts_start]`.
    restarts_start: usize,
    num_restarts: usize,
}

impl Block {
    /// Splits a payload into entries and restart array.
    ///
    /// # Errors
    /// When the payload is shorter than its restart count says, or has no restart point.
    pub fn new(data: Bytes) -> Result<Self, DecodeError> {
        let count_at = data
            .len()
            .checked_sub(COUNT_LEN)
            .ok_or(DecodeError::new(0, "block shorter than its restart count"))?;
        let mut count = [0u8; COUNT_LEN];
        count.copy_from_slice(data.get(count_at..).unwrap_or_default());
        let num_restarts = usize::try_from(u32::from_le_bytes(count))
            .map_err(|_| DecodeError::new(count_at, "restart count"))?;
        if num_restarts == 0 {
            return Err(DecodeError::new(count_at, "block without restart points"));
        }
        let restarts_start = num_restarts
            .checked_mul(RESTART_LEN)
            .and_then(|len| count_at.checked_sub(len))
            .ok_or(DecodeError::new(
                count_at,
                "restart count larger than the block",
            ))?;
        Ok(Self {
            data,
            restarts_start,
            num_restarts,
        })
    }

    /// The payload bytes (entries and restart array).
    #[must_use]
    pub fn payload(&self) -> &Bytes {
        &self.data
    }

    /// Offset of restart point `index` (`index < num_restarts`).
    fn restart(&self, index: usize) -> Result<usize, DecodeError> {
        let at = self.restarts_start + index * RESTART_LEN;
        let mut raw = [0u8; RESTART_LEN];
        raw.copy_from_slice(
            self.data
                .get(at..at + RESTART_LEN)
                .ok_or(DecodeError::new(at, "restart offset"))?,
        );
        let offset = usize::try_from(u32::from_le_bytes(raw))
            .map_err(|_| DecodeError::new(at, "restart offset"))?;
        if offset > self.restarts_start {
            return Err(DecodeError::new(at, "restart offset past the entries"));
        }
        Ok(offset)
    }
}
