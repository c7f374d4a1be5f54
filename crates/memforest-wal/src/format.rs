//! Physical framing constants: blocks, the record header, record types.
//!
//! The layout follows RocksDB's `db/log_format.h` (the "recyclable" header variant, which
//! carries the log number), with a 64-bit segment id. See `docs/format/wal.md` for the
//! byte-by-byte specification.

/// Size of one block, in bytes. A physical record never crosses a block boundary; a block
/// tail shorter than [`HEADER_SIZE`] is zero-filled (RocksDB `kBlockSize`).
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Size of a physical record header, in bytes:
/// masked CRC-32 (4) + payload length `u16` (2) + record type (1) + segment id `u64` (8).
pub const HEADER_SIZE: usize = 4 + 2 + 1 + 8;

/// Largest payload one physical record can carry, in bytes (a whole block minus a header).
pub const MAX_FRAGMENT_PAYLOAD: usize = BLOCK_SIZE - HEADER_SIZE;

/// First record type value reserved for metadata records; types `>= 0x80` that a reader
/// does not know are skipped (forward compatibility, as RocksDB's `kRecordTypeSafeIgnoreMask`).
pub const METADATA_TYPE_MIN: u8 = 0x80;

/// The type byte of a physical record.
///
/// `Zero` (0) is reserved: it is what a zero-filled (preallocated or never written) region
/// reads as, and it never carries a valid checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordType {
    /// A whole logical record in one physical record (RocksDB `kFullType`, 1).
    Full,
    /// The first fragment of a logical record (`kFirstType`, 2).
    First,
    /// A middle fragment (`kMiddleType`, 3).
    Middle,
    /// The last fragment (`kLastType`, 4).
    Last,
    /// A metadata record (types `0x80..=0xff`), never fragmented.
    Metadata(MetadataType),
}

impl RecordType {
    /// The byte stored in the header.
    #[must_use]
    pub fn to_byte(self) -> u8 {
        match self {
            Self::Full => 1,
            Self::First => 2,
            Self::Middle => 3,
            Self::Last => 4,
            Self::Metadata(kind) => kind.0,
        }
    }

    /// The record type for a header byte, or `None` for 0 (reserved) and the unassigned
    /// values `5..=0x7f`.
    #[must_use]
    pub fn from_byte(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(Self::Full),
            2 => Some(Self::First),
            3 => Some(Self::Middle),
            4 => Some(Self::Last),
            b => MetadataType::new(b).map(Self::Metadata),
        }
    }
}

/// A metadata record type: a byte `>= 0x80`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MetadataType(u8);

impl MetadataType {
    /// The segment metadata record that opens every WAL segment (see [`crate::segment_meta`]).
    pub const SEGMENT_META: Self = Self(0x80);

    /// A metadata type for `byte`, or `None` when `byte < 0x80`.
    #[must_use]
    pub const fn new(byte: u8) -> Option<Self> {
        if byte >= METADATA_TYPE_MIN {
            Some(Self(byte))
        } else {
            None
        }
    }

    /// The type byte.
    #[must_use]
    pub const fn byte(self) -> u8 {
        self.0
    }
}

/// Position of byte offset `pos` inside its block, in bytes (`pos % BLOCK_SIZE`).
#[must_use]
pub fn block_offset(pos: u64) -> usize {
    // The remainder is below BLOCK_SIZE, so the conversion cannot fail.
    usize::try_from(pos % BLOCK_SIZE as u64).unwrap_or(0)
}

/// Masked CRC-32 stored in a header: over the type byte, the segment id (8 bytes LE) and
/// the payload.
#[must_use]
pub fn record_crc(record_type: u8, segment_id: u64, payload: &[u8]) -> u32 {
    memforest_codec::checksum::masked_crc32(&[&[record_type], &segment_id.to_le_bytes(), payload])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_bytes_round_trip() {
        for b in 0..=u8::MAX {
            match RecordType::from_byte(b) {
                Some(t) => assert_eq!(t.to_byte(), b),
                None => assert!(b == 0 || (5..0x80).contains(&b), "{b}"),
            }
        }
    }
}
