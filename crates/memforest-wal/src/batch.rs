//! [`WriteBatch`]: the logical record of the WAL, and its encoding.
//!
//! Payload layout (little-endian): first seqno `u64`, entry count `u32`, flags `u8`, then
//! the body. Uncompressed body: the entries back to back. Compressed body (flag bit 0):
//! uncompressed body length `u32`, then one zstd frame. Entry: kind `u8`, key length `u32`,
//! key, value length `u32`, value. Lengths are `u32` so values are not limited to 64 KiB.

use std::io::Read;

use memforest_codec::{ByteReader, DecodeError};

use crate::error::{DamageReason, WalError};

/// Largest encoded (uncompressed) body of one batch, in bytes: 1 GiB. Larger batches are
/// refused by [`encode`], and a corrupt length can never make the decoder allocate more.
pub const MAX_BATCH_BYTES: usize = 1 << 30;

/// Bytes before the body: first seqno (8) + count (4) + flags (1).
pub const HEADER_LEN: usize = 8 + 4 + 1;

/// Flags bit: the body is one zstd frame, preceded by its uncompressed length.
pub const FLAG_ZSTD: u8 = 0x01;

/// One operation in a batch. The WAL does not interpret `kind`: it is the engine's op code
/// (put, delete, range delete...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Operation code, opaque to the WAL.
    pub kind: u8,
    /// Key bytes (up to 4 GiB - 1 by format; the batch limit is [`MAX_BATCH_BYTES`]).
    pub key: Vec<u8>,
    /// Value bytes (may be empty).
    pub value: Vec<u8>,
}

impl Entry {
    /// Encoded size in bytes: kind (1) + key length (4) + key + value length (4) + value.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        1 + 4 + self.key.len() + 4 + self.value.len()
    }
}

/// An ordered group of entries written atomically: after recovery either all of a batch's
/// entries are present or none (RocksDB `WriteBatch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    entries: Vec<Entry>,
    body_len: usize,
}

impl WriteBatch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an entry.
    pub fn push(&mut self, kind: u8, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) {
        let entry = Entry {
            kind,
            key: key.into(),
            value: value.into(),
        };
        self.body_len = self.body_len.saturating_add(entry.encoded_len());
        self.entries.push(entry);
    }

    /// The entries, in insertion order.
    #[must_use]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries, in insertion order, consuming the batch (so a caller can keep the
    /// key and value buffers without copying them).
    #[must_use]
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    /// Number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the batch has no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sequence numbers the batch consumes: one per entry, and one for an empty batch (so
    /// every batch has a distinct first seqno).
    #[must_use]
    pub fn seqno_span(&self) -> u64 {
        (self.entries.len() as u64).max(1)
    }

    /// Size of the uncompressed body, in bytes.
    #[must_use]
    pub fn body_len(&self) -> usize {
        self.body_len
    }
}

/// When to compress a batch body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// Bodies of at least this many bytes are zstd-compressed; `None` disables compression.
    /// A compressed body that is not smaller is stored uncompressed.
    pub threshold: Option<usize>,
    /// zstd level (1 is fastest; RocksDB `CompressionOptions::level`).
    pub level: i32,
}

impl Compression {
    /// Bodies of 64 KiB or more at level 1: fewer WAL bytes for large batches (MemTree
    /// page rewrites) for more CPU on the writing thread.
    pub const LARGE_BATCHES: Self = Self {
        threshold: Some(64 * 1024),
        level: 1,
    };
}

impl Default for Compression {
    /// Off, as RocksDB's `wal_compression` (`kNoCompression`).
    fn default() -> Self {
        Self {
            threshold: None,
            level: 1,
        }
    }
}

/// Encodes `batch` as a logical record payload with `first_seqno`.
///
/// # Errors
/// [`WalError::BatchTooLarge`] when the body exceeds [`MAX_BATCH_BYTES`].
pub fn encode(
    first_seqno: u64,
    batch: &WriteBatch,
    compression: Compression,
) -> Result<Vec<u8>, WalError> {
    let prepared = Prepared::new(batch, compression)?;
    let mut out = Vec::with_capacity(prepared.encoded_len());
    prepared.encode_into(first_seqno, &mut out);
    Ok(out)
}

/// A batch checked against [`MAX_BATCH_BYTES`] and, when that pays, compressed: everything
/// of its encoding that does not depend on the seqno, so the WAL can do this part before
/// taking its queue lock and write the payload straight into its queue's buffer.
#[derive(Debug)]
pub(crate) struct Prepared<'a> {
    batch: &'a WriteBatch,
    count: u32,
    /// Uncompressed body length (`u32`) and the zstd frame, when compression pays.
    compressed: Option<(u32, Vec<u8>)>,
}

impl<'a> Prepared<'a> {
    /// Checks and (per `compression`) compresses `batch`.
    ///
    /// # Errors
    /// [`WalError::BatchTooLarge`] when the body exceeds [`MAX_BATCH_BYTES`].
    pub(crate) fn new(batch: &'a WriteBatch, compression: Compression) -> Result<Self, WalError> {
        let too_large = WalError::BatchTooLarge {
            size: batch.body_len,
            limit: MAX_BATCH_BYTES,
        };
        if batch.body_len > MAX_BATCH_BYTES {
            return Err(too_large);
        }
        let count = u32::try_from(batch.entries.len()).map_err(|_| too_large)?;
        let mut prepared = Self {
            batch,
            count,
            compressed: None,
        };
        if compression.threshold.is_some_and(|t| batch.body_len >= t) {
            let mut body = Vec::with_capacity(batch.body_len);
            prepared.body_into(&mut body);
            if let Ok(frame) = zstd::bulk::compress(&body, compression.level) {
                if frame.len() + 4 < body.len() {
                    let raw_len = u32::try_from(body.len()).unwrap_or(u32::MAX);
                    prepared.compressed = Some((raw_len, frame));
                }
            }
        }
        Ok(prepared)
    }

    /// Length of the payload [`Self::encode_into`] appends, in bytes.
    pub(crate) fn encoded_len(&self) -> usize {
        HEADER_LEN
            + self
                .compressed
                .as_ref()
                .map_or(self.batch.body_len, |(_, frame)| 4 + frame.len())
    }

    /// Appends the payload with `first_seqno` to `out`.
    pub(crate) fn encode_into(&self, first_seqno: u64, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        out.extend_from_slice(&first_seqno.to_le_bytes());
        out.extend_from_slice(&self.count.to_le_bytes());
        match &self.compressed {
            Some((raw_len, frame)) => {
                out.push(FLAG_ZSTD);
                out.extend_from_slice(&raw_len.to_le_bytes());
                out.extend_from_slice(frame);
            }
            None => {
                out.push(0);
                self.body_into(out);
            }
        }
    }

    /// Appends the uncompressed body (the entries back to back) to `out`.
    fn body_into(&self, out: &mut Vec<u8>) {
        for e in &self.batch.entries {
            out.push(e.kind);
            put_bytes(out, &e.key);
            put_bytes(out, &e.value);
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // The batch limit keeps every length below 4 GiB.
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Decodes a logical record payload into its first seqno and batch.
///
/// # Errors
/// [`DamageReason::BadBatch`] with the payload offset and what was expected there.
pub fn decode(payload: &[u8]) -> Result<(u64, WriteBatch), DamageReason> {
    let bad = |e: DecodeError| DamageReason::BadBatch {
        offset: e.offset,
        reason: e.reason,
    };
    let mut r = ByteReader::new(payload);
    let first_seqno = r.u64("first seqno").map_err(bad)?;
    let count = r.u32("entry count").map_err(bad)?;
    let flags = r.u8("flags").map_err(bad)?;
    let body_start = r.position();
    let body = r.bytes(r.remaining(), "body").map_err(bad)?;
    let decompressed;
    let (body, body_start) = match flags {
        0 => (body, body_start),
        FLAG_ZSTD => {
            decompressed = decompress(body).map_err(|reason| DamageReason::BadBatch {
                offset: body_start,
                reason,
            })?;
            // Offsets inside a decompressed body are reported relative to that body.
            (decompressed.as_slice(), 0)
        }
        _ => return Err(bad(DecodeError::new(body_start - 1, "unknown flags"))),
    };
    if first_seqno.checked_add(u64::from(count).max(1)).is_none() {
        return Err(bad(DecodeError::new(0, "sequence number overflow")));
    }
    let at = |e: DecodeError| bad(DecodeError::new(body_start + e.offset, e.reason));
    let mut r = ByteReader::new(body);
    let mut batch = WriteBatch::new();
    for _ in 0..count {
        let kind = r.u8("entry kind").map_err(at)?;
        let key = r.len_prefixed("key").map_err(at)?;
        let value = r.len_prefixed("value").map_err(at)?;
        batch.push(kind, key, value);
    }
    if !r.is_empty() {
        return Err(at(DecodeError::new(
            r.position(),
            "bytes after the last entry",
        )));
    }
    Ok((first_seqno, batch))
}

fn decompress(body: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut r = ByteReader::new(body);
    let raw_len = r.u32("uncompressed length").map_err(|e| e.reason)?;
    let raw_len = usize::try_from(raw_len).map_err(|_| "uncompressed length")?;
    if raw_len > MAX_BATCH_BYTES {
        return Err("uncompressed length over the batch limit");
    }
    let frame = r.bytes(r.remaining(), "zstd frame").map_err(|e| e.reason)?;
    let decoder = zstd::stream::read::Decoder::new(frame).map_err(|_| "zstd frame")?;
    let mut out = Vec::new();
    // Read at most one byte more than promised, so a lying length cannot grow the buffer.
    decoder
        .take(raw_len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|_| "zstd frame")?;
    if out.len() != raw_len {
        return Err("uncompressed length does not match the zstd frame");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[usize]) -> WriteBatch {
        let mut b = WriteBatch::new();
        for (i, &n) in (0u8..).zip(values) {
            b.push(i, format!("k{i}"), vec![b'v'; n]);
        }
        b
    }

    #[test]
    fn round_trip_plain_and_compressed() {
        for threshold in [None, Some(0)] {
            let batch = sample(&[0, 1, 5000]);
            let c = Compression {
                threshold,
                level: 1,
            };
            let bytes = encode(42, &batch, c).unwrap();
            assert_eq!(bytes[12], if threshold.is_some() { FLAG_ZSTD } else { 0 });
            assert_eq!(decode(&bytes).unwrap(), (42, batch));
        }
    }

    #[test]
    fn incompressible_body_stays_plain() {
        let mut b = WriteBatch::new();
        b.push(
            1,
            vec![],
            (0..200u8)
                .map(|i| i.wrapping_mul(151) ^ 0x5a)
                .collect::<Vec<_>>(),
        );
        let bytes = encode(
            1,
            &b,
            Compression {
                threshold: Some(0),
                level: 1,
            },
        )
        .unwrap();
        assert_eq!(bytes[12], 0);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = encode(
            7,
            &sample(&[3, 4]),
            Compression {
                threshold: None,
                level: 1,
            },
        )
        .unwrap();
        for cut in 0..bytes.len() {
            assert!(
                matches!(decode(&bytes[..cut]), Err(DamageReason::BadBatch { .. })),
                "{cut}"
            );
        }
    }

    #[test]
    fn lying_uncompressed_length_is_an_error() {
        let batch = sample(&[1000]);
        let mut bytes = encode(
            1,
            &batch,
            Compression {
                threshold: Some(0),
                level: 1,
            },
        )
        .unwrap();
        bytes[13] = bytes[13].wrapping_add(1);
        assert!(decode(&bytes).is_err());
        bytes[13..17].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&bytes).is_err());
    }
}
