//! The 5-byte block trailer: compression type (`u8`) then the masked CRC-32 (`u32` LE) of
//! the stored payload followed by the type byte (RocksDB `BlockBasedTable` trailer).

use memforest_codec::checksum::masked_crc32;

/// Length of a block trailer, in bytes.
pub const TRAILER_LEN: usize = 5;

/// How a block payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionType {
    /// Stored as is.
    None = 0,
    /// `varint64 uncompressed_len` then one zstd frame (see [`super::compression`]).
    Zstd = 1,
}

/// The trailer for `payload` stored as `kind`.
#[must_use]
pub fn encode(payload: &[u8], kind: CompressionType) -> [u8; TRAILER_LEN] {
    let type_byte = [kind as u8];
    let crc = masked_crc32(&[payload, &type_byte]);
    let [c0, c1, c2, c3] = crc.to_le_bytes();
    [kind as u8, c0, c1, c2, c3]
}

/// Whether `block`, a stored payload followed by its trailer, verifies (for a reader
/// deciding whether to keep a copy of it; the block is checked again when it is read).
#[must_use]
pub fn verifies(block: &[u8]) -> bool {
    let Some(split) = block.len().checked_sub(TRAILER_LEN) else {
        return false;
    };
    let (payload, trailer) = block.split_at(split);
    trailer
        .try_into()
        .is_ok_and(|t: [u8; TRAILER_LEN]| verify(payload, t).is_ok())
}

/// Checks `trailer` against `payload` and returns the compression type.
///
/// # Errors
/// `(offset within the trailer, reason)` on a CRC mismatch or an unknown type byte (the CRC
/// is checked first, so a flipped type byte reads as a CRC mismatch).
pub fn verify(
    payload: &[u8],
    trailer: [u8; TRAILER_LEN],
) -> Result<CompressionType, (usize, &'static str)> {
    let [type_byte, c0, c1, c2, c3] = trailer;
    let stored = u32::from_le_bytes([c0, c1, c2, c3]);
    if masked_crc32(&[payload, &[type_byte]]) != stored {
        return Err((1, "block checksum mismatch"));
    }
    match type_byte {
        0 => Ok(CompressionType::None),
        1 => Ok(CompressionType::Zstd),
        _ => Err((0, "unknown block compression type")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_single_byte_flip_is_caught() {
        let payload = b"some block payload".to_vec();
        let trailer = encode(&payload, CompressionType::Zstd);
        assert_eq!(verify(&payload, trailer), Ok(CompressionType::Zstd));
        for i in 0..payload.len() {
            let mut bad = payload.clone();
            bad[i] ^= 0x40;
            assert!(verify(&bad, trailer).is_err());
        }
        for i in 0..TRAILER_LEN {
            let mut bad = trailer;
            bad[i] ^= 0x01;
            assert!(verify(&payload, bad).is_err());
        }
    }
}
