//! The fixed-size footer at the end of every segment file.
//!
//! Layout (53 bytes, integers little-endian):
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..12 | index handle (top-level index block) |
//! | 12..24 | filter handle |
//! | 24..36 | properties handle |
//! | 36 | index levels: 1 (the index block points at data blocks) or 2 (it points at index partitions) |
//! | 37..41 | format version (`u32`) |
//! | 41..45 | masked CRC-32 of bytes 0..41 |
//! | 45..53 | magic (`u64`) |

use memforest_codec::checksum::masked_crc32;
use memforest_codec::{ByteReader, DecodeError};

use crate::block_handle::BlockHandle;

/// Footer length in bytes.
pub const FOOTER_LEN: usize = 53;

/// Bytes covered by the footer CRC.
const CRC_COVERED: usize = 41;

/// Magic number at the very end of a segment file (`"MFSSTv01"` read as `u64` LE).
pub const MAGIC: u64 = u64::from_le_bytes(*b"MFSSTv01");

/// The format version this crate writes by default (3: cache-local bloom filters that
/// record their [`crate::FilterScope`]).
pub const FORMAT_VERSION: u32 = 3;

/// The oldest format version this crate reads (and writes when asked,
/// [`crate::SstOptions::format_version`]); versions differ only in their filter block
/// (layout, [`crate::bloom::FilterLayout`], and from 3 on a scope id).
pub const MIN_FORMAT_VERSION: u32 = 1;

/// Decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Top-level index block.
    pub index: BlockHandle,
    /// Bloom filter block.
    pub filter: BlockHandle,
    /// Properties block.
    pub properties: BlockHandle,
    /// 1 or 2.
    pub index_levels: u8,
    /// Format version, [`MIN_FORMAT_VERSION`]..=[`FORMAT_VERSION`].
    pub version: u32,
}

impl Footer {
    /// The 53-byte encoding.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        out.extend_from_slice(&self.index.encode());
        out.extend_from_slice(&self.filter.encode());
        out.extend_from_slice(&self.properties.encode());
        out.push(self.index_levels);
        out.extend_from_slice(&self.version.to_le_bytes());
        let crc = masked_crc32(&[&out]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out
    }

    /// Decodes and checks a footer (magic, CRC, version, index levels).
    ///
    /// # Errors
    /// A [`DecodeError`] with the offset inside the footer.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != FOOTER_LEN {
            return Err(DecodeError::new(0, "footer length"));
        }
        let mut r = ByteReader::new(bytes);
        let index = BlockHandle::decode_from(&mut r)?;
        let filter = BlockHandle::decode_from(&mut r)?;
        let properties = BlockHandle::decode_from(&mut r)?;
        let index_levels = r.u8("index levels")?;
        let version = r.u32("format version")?;
        let crc = r.u32("footer checksum")?;
        let magic = r.u64("magic")?;
        if magic != MAGIC {
            return Err(DecodeError::new(
                45,
                "bad magic: not a MemForest segment file",
            ));
        }
        let covered = bytes.get(..CRC_COVERED).unwrap_or_default();
        if masked_crc32(&[covered]) != crc {
            return Err(DecodeError::new(CRC_COVERED, "footer checksum mismatch"));
        }
        if !(MIN_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(DecodeError::new(37, "unsupported format version"));
        }
        if !(1..=2).contains(&index_levels) {
            return Err(DecodeError::new(36, "index levels must be 1 or 2"));
        }
        Ok(Self {
            index,
            filter,
            properties,
            index_levels,
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_offsets_past_4_gib_and_every_flip_caught() {
        let f = Footer {
            index: BlockHandle {
                offset: u64::from(u32::MAX) + 17,
                size: 4096,
            },
            filter: BlockHandle {
                offset: 6 << 30,
                size: u32::MAX,
            },
            properties: BlockHandle {
                offset: u64::from(u32::MAX) - 3,
                size: 1,
            },
            index_levels: 2,
            version: MIN_FORMAT_VERSION,
        };
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&bytes).unwrap(), f);
        for i in 0..FOOTER_LEN {
            let mut bad = bytes.clone();
            bad[i] ^= 0xff;
            assert!(Footer::decode(&bad).is_err(), "flip at {i}");
        }
        for (version, known) in [
            (0, false),
            (FORMAT_VERSION, true),
            (FORMAT_VERSION + 1, false),
        ] {
            let other = Footer { version, ..f }.encode();
            assert_eq!(Footer::decode(&other).is_ok(), known, "version {version}");
        }
    }
}
