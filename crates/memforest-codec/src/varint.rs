//! LEB128 varints, as RocksDB's `PutVarint32` / `PutVarint64`: 7 bits per byte, low group
//! first, high bit set on every byte but the last. A `u64` takes 1 to 10 bytes.

/// Longest encoding of a `u64`, in bytes.
pub const MAX_LEN_U64: usize = 10;

/// Appends the varint encoding of `value` to `out`.
pub fn put_u64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation is the point: keep the low 7 bits and set the continuation bit.
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    // The loop left value < 0x80; the mask only tells clippy so.
    out.push((value & 0x7f) as u8);
}

/// Appends the varint encoding of `value` to `out`.
pub fn put_u32(out: &mut Vec<u8>, value: u32) {
    put_u64(out, u64::from(value));
}

/// Decodes a varint from the start of `buf`: the value and the number of bytes it took, or
/// `None` when `buf` ends inside the varint or it does not fit in 64 bits.
#[must_use]
pub fn decode_u64(buf: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in buf.iter().take(MAX_LEN_U64).enumerate() {
        let group = u64::from(byte & 0x7f);
        let shift = 7 * i;
        if shift == 63 && group > 1 {
            return None;
        }
        value |= group << shift;
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(v: u64) {
            let mut out = Vec::new();
            put_u64(&mut out, v);
            prop_assert!(out.len() <= MAX_LEN_U64);
            prop_assert_eq!(decode_u64(&out), Some((v, out.len())));
        }

        #[test]
        fn never_panics(data: Vec<u8>) {
            let _ = decode_u64(&data);
        }
    }

    #[test]
    fn boundaries() {
        for (v, len) in [
            (0u64, 1usize),
            (127, 1),
            (128, 2),
            (u64::from(u32::MAX), 5),
            (u64::MAX, 10),
        ] {
            let mut out = Vec::new();
            put_u64(&mut out, v);
            assert_eq!(out.len(), len, "{v}");
        }
        assert_eq!(decode_u64(&[0x80]), None);
        assert_eq!(decode_u64(&[0xff; 9]), None);
        // Eleven bits past 64 overflow.
        assert_eq!(
            decode_u64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            None
        );
    }
}
