//! A small, stable 64-bit hash for summary inputs: FNV-1a (Fowler–Noll–Vo, 64-bit offset basis
//! `0xcbf29ce484222325`, prime `0x100000001b3`).
//!
//! The value must be the same on every run and platform (it is stored in node pages), so
//! std's randomly seeded `DefaultHasher` is not an option. Integers are fed little-endian and
//! variable-length fields are length-prefixed, so field boundaries cannot be confused. FNV is
//! not collision resistant against an adversary; it only has to tell a changed input from an
//! unchanged one.

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// An FNV-1a 64 hasher.
#[derive(Debug, Clone, Copy)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        Self(OFFSET_BASIS)
    }
}

impl StableHasher {
    /// A fresh hasher.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds raw bytes (no length prefix).
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(PRIME);
        }
    }

    /// Feeds a `u64`, little-endian.
    pub fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }

    /// Feeds an `i64`, little-endian.
    pub fn write_i64(&mut self, v: i64) {
        self.write(&v.to_le_bytes());
    }

    /// Feeds a string as its byte length (`u64`) then its UTF-8 bytes.
    pub fn write_str(&mut self, s: &str) {
        self.write_u64(s.len() as u64);
        self.write(s.as_bytes());
    }

    /// The hash so far.
    #[must_use]
    pub fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_fnv1a_vectors() {
        let hash = |s: &[u8]| {
            let mut h = StableHasher::new();
            h.write(s);
            h.finish()
        };
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn length_prefix_separates_fields() {
        let pair = |a: &str, b: &str| {
            let mut h = StableHasher::new();
            h.write_str(a);
            h.write_str(b);
            h.finish()
        };
        assert_ne!(pair("ab", "c"), pair("a", "bc"));
    }
}
