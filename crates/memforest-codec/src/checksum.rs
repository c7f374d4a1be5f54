//! CRC-32 and checksum masking.
//!
//! Checksums are CRC-32 (IEEE polynomial, as computed by `crc32fast`). Checksums stored next
//! to the data they cover are *masked* as in RocksDB (`util/crc32c.h`, `Mask`): rotate right
//! by 15 bits and add a constant. A CRC of data that itself contains CRCs is then unlikely to
//! be degenerate, and an all-zero header (a preallocated or torn tail) never verifies, because
//! `mask(crc32(zeros))` is not zero.

/// RocksDB's masking constant (`kMaskDelta`).
const MASK_DELTA: u32 = 0xa282_ead8;

/// CRC-32 of `bytes`.
#[must_use]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// CRC-32 of the concatenation of `parts`, without copying them together.
#[must_use]
pub fn crc32_parts(parts: &[&[u8]]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize()
}

/// Masks a CRC for storage: `rotate_right(crc, 15) + 0xa282ead8` (wrapping).
#[must_use]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverts [`mask`].
#[must_use]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// Masked CRC-32 of the concatenation of `parts`: what the formats store.
#[must_use]
pub fn masked_crc32(parts: &[&[u8]]) -> u32 {
    mask(crc32_parts(parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn unmask_inverts_mask(crc: u32) {
            prop_assert_eq!(unmask(mask(crc)), crc);
        }

        #[test]
        fn parts_equal_whole(data: Vec<u8>, cut in 0usize..64) {
            let cut = cut.min(data.len());
            let (a, b) = data.split_at(cut);
            prop_assert_eq!(crc32_parts(&[a, b]), crc32(&data));
        }
    }

    #[test]
    fn masked_crc_of_zeros_is_not_zero() {
        for len in [0usize, 1, 7, 11, 512] {
            assert_ne!(masked_crc32(&[&vec![0u8; len]]), 0, "len {len}");
        }
    }

    #[test]
    fn known_vector() {
        // The standard CRC-32 check value.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }
}
