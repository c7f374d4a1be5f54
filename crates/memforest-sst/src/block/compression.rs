//! zstd block compression. A compressed payload is `varint64 uncompressed_len` followed by
//! one zstd frame; a block is stored compressed only if that is smaller than the raw payload
//! (as RocksDB does when compression does not pay).

use memforest_codec::varint;

/// Largest uncompressed block the reader will materialise, in bytes (128 MiB). The builder
/// never writes a larger block (values are at most [`crate::MAX_VALUE_LEN`]).
pub const MAX_BLOCK_LEN: u64 = 128 << 20;

/// The compressed form of `raw` at zstd `level`, or `None` when it would not be smaller
/// (or zstd fails, which only happens on allocation failure).
#[must_use]
pub fn compress(raw: &[u8], level: i32) -> Option<Vec<u8>> {
    let frame = zstd::bulk::compress(raw, level).ok()?;
    let mut out = Vec::with_capacity(frame.len() + varint::MAX_LEN_U64);
    varint::put_u64(&mut out, raw.len() as u64);
    out.extend_from_slice(&frame);
    (out.len() < raw.len()).then_some(out)
}

/// Decompresses a payload written by [`compress`].
///
/// # Errors
/// A reason when the length prefix is missing or over [`MAX_BLOCK_LEN`], the frame does not
/// decode, or it decodes to a different length.
pub fn decompress(stored: &[u8]) -> Result<Vec<u8>, &'static str> {
    let (raw_len, used) = varint::decode_u64(stored).ok_or("compressed block length")?;
    if raw_len > MAX_BLOCK_LEN {
        return Err("compressed block length over the 128 MiB limit");
    }
    let raw_len = usize::try_from(raw_len).map_err(|_| "compressed block length")?;
    let frame = stored.get(used..).unwrap_or_default();
    let raw = zstd::bulk::decompress(frame, raw_len).map_err(|_| "zstd frame does not decode")?;
    if raw.len() != raw_len {
        return Err("zstd frame length differs from the stored length");
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let raw = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc".repeat(20);
        let packed = compress(&raw, 3).unwrap();
        assert!(packed.len() < raw.len());
        assert_eq!(decompress(&packed).unwrap(), raw);
        // Incompressible input is not stored compressed.
        assert_eq!(compress(&[1, 2, 3], 3), None);
        // A length prefix that disagrees with the frame is refused.
        let mut wrong = Vec::new();
        varint::put_u64(&mut wrong, raw.len() as u64 + 1);
        wrong.extend_from_slice(&packed[2..]);
        assert!(decompress(&wrong).is_err());
        assert!(decompress(&[0xff]).is_err());
        let mut huge = Vec::new();
        varint::put_u64(&mut huge, MAX_BLOCK_LEN + 1);
        assert!(decompress(&huge).is_err());
    }
}
