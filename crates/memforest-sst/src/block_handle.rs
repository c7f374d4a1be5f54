//! Block handles: where a block lives in the file.

use memforest_codec::{ByteReader, DecodeError};

/// The position of one stored block: `offset` (`u64` LE, bytes from the start of the file)
/// and `size` (`u32` LE, bytes of the stored payload, excluding the 5-byte trailer that
/// follows it). Encoded as 12 fixed bytes. Offsets are 64-bit so files over 4 GiB work; a
/// single block is at most 4 GiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte in the file.
    pub offset: u64,
    /// Length of the stored payload in bytes (trailer not included).
    pub size: u32,
}

impl BlockHandle {
    /// Encoded length in bytes.
    pub const ENCODED_LEN: usize = 12;

    /// The 12-byte encoding.
    #[must_use]
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut out = [0u8; Self::ENCODED_LEN];
        let (offset, size) = out.split_at_mut(8);
        offset.copy_from_slice(&self.offset.to_le_bytes());
        size.copy_from_slice(&self.size.to_le_bytes());
        out
    }

    /// Reads a handle from `r`.
    ///
    /// # Errors
    /// When fewer than 12 bytes remain.
    pub fn decode_from(r: &mut ByteReader<'_>) -> Result<Self, DecodeError> {
        Ok(Self {
            offset: r.u64("block handle offset")?,
            size: r.u32("block handle size")?,
        })
    }

    /// Decodes a handle that must fill `bytes` exactly (an index entry's value).
    ///
    /// # Errors
    /// When `bytes` is not exactly 12 bytes long.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        if bytes.len() != Self::ENCODED_LEN {
            return Err(DecodeError::new(0, "block handle must be 12 bytes"));
        }
        Self::decode_from(&mut ByteReader::new(bytes))
    }

    /// Offset one past the block's trailer, or `None` on overflow.
    #[must_use]
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(u64::from(self.size))?
            .checked_add(crate::block::trailer::TRAILER_LEN as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_4_gib_round_trip() {
        for offset in [
            0,
            u64::from(u32::MAX) - 1,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            5 << 30,
            u64::MAX - 5,
        ] {
            let h = BlockHandle {
                offset,
                size: u32::MAX,
            };
            assert_eq!(BlockHandle::decode(&h.encode()).unwrap(), h);
        }
        assert_eq!(
            BlockHandle {
                offset: u64::MAX - 5,
                size: 1
            }
            .end_with_trailer(),
            None
        );
        assert!(BlockHandle::decode(&[0; 11]).is_err());
    }
}
