//! A fast hasher for integer ids (Fibonacci multiplicative hashing), for the in-memory sets
//! and maps keyed by node id. Not for anything persisted: use [`crate::hash`] there.

use std::hash::{BuildHasherDefault, Hasher};

/// 2^64 divided by the golden ratio, odd: spreads consecutive ids across the high bits.
const FIBONACCI: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hashes the `u64` words it is fed; other input is folded in a byte at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(FIBONACCI);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `BuildHasher` for [`IdHasher`].
pub type IdBuildHasher = BuildHasherDefault<IdHasher>;
