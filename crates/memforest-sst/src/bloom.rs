//! Bloom filter over user keys (RocksDB's legacy full filter, simplified).
//!
//! Each key is hashed once to 64 bits by [`hash64`]; probe `i` (0-based) sets or tests bit
//! `(h1 + i * h2) mod m`, where `h1` and `h2` are the low and high 32 bits of the hash and `m`
//! the number of bits (Kirsch and Mitzenmacher, "Less hashing, same performance", 2006).
//! The number of probes is `round(bits_per_key * ln 2)`, clamped to 1..=30, which minimises
//! the false-positive rate (about 0.8% at 10 bits per key).
//!
//! Filter block payload: the bit array (`ceil(m / 8)` bytes, bit `b` is bit `b % 8` of byte
//! `b / 8`), then the probe count (`u8`). It is stored uncompressed, with a block trailer.

/// Largest probe count accepted from a file.
const MAX_PROBES: u8 = 30;

const P1: u64 = 0x9e37_79b1_85eb_ca87;
const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const P3: u64 = 0x1656_67b1_9e37_79f9;

/// The 64-bit hash of a user key used by the filter (part of the file format: changing it
/// changes which bits a file's filter has set).
///
/// Construction: 8-byte little-endian words (the tail zero-padded) each multiplied, rotated
/// and multiplied into an accumulator seeded with the length (the round of xxHash64), then
/// the MurmurHash3 64-bit finaliser.
#[must_use]
pub fn hash64(key: &[u8]) -> u64 {
    let mut h = P3 ^ (key.len() as u64).wrapping_mul(P1);
    let mut chunks = key.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix(h, u64::from_le_bytes(word));
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut word = [0u8; 8];
        word.iter_mut().zip(tail).for_each(|(w, t)| *w = *t);
        h = mix(h, u64::from_le_bytes(word));
    }
    fmix64(h)
}

fn mix(h: u64, word: u64) -> u64 {
    let k = word.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    (h ^ k).rotate_left(27).wrapping_mul(P1).wrapping_add(P3)
}

fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The probe positions of `hash` in a filter of `num_bits` (> 0) bits: `(h1 + i * h2) mod
/// m`, computed as `(h1 mod m) + i * (h2 mod m)` reduced step by step, so two divisions
/// per key instead of one per probe (the same bits: the filter format does not change).
fn probes(hash: u64, num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
    let m = num_bits.max(1);
    let step = (hash >> 32) % m;
    let mut bit = (hash & 0xffff_ffff) % m;
    (0..num_probes).map(move |_| {
        let at = bit;
        // Both terms are below m < 2^63, so the sum does not overflow.
        bit += step;
        if bit >= m {
            bit -= m;
        }
        at
    })
}

/// Collects key hashes during a build and produces the filter block payload.
#[derive(Debug, Default)]
pub struct BloomBuilder {
    hashes: Vec<u64>,
}

impl BloomBuilder {
    /// Adds a user key (callers add each distinct user key once).
    pub fn add_key(&mut self, user_key: &[u8]) {
        self.hashes.push(hash64(user_key));
    }

    /// The filter block payload at `bits_per_key` (RocksDB `NewBloomFilterPolicy(bits_per_key)`;
    /// 0 is taken as 1). At least 64 bits.
    #[must_use]
    pub fn finish(&self, bits_per_key: u32) -> Vec<u8> {
        let bits_per_key = bits_per_key.max(1);
        let num_probes = probe_count(bits_per_key);
        let wanted = (self.hashes.len() as u64).saturating_mul(u64::from(bits_per_key));
        let num_bytes = usize::try_from(wanted.max(64).div_ceil(8)).unwrap_or(usize::MAX);
        let mut out = vec![0u8; num_bytes];
        let num_bits = (num_bytes as u64) * 8;
        for &hash in &self.hashes {
            for bit in probes(hash, num_probes, num_bits) {
                if let Some(byte) = usize::try_from(bit / 8).ok().and_then(|i| out.get_mut(i)) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        out.push(num_probes);
        out
    }
}

/// `round(bits_per_key * ln 2)` clamped to 1..=30.
fn probe_count(bits_per_key: u32) -> u8 {
    let k = (f64::from(bits_per_key) * std::f64::consts::LN_2).round();
    // Clamped to 1..=30 first, so the cast is exact.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 1..=30"
    )]
    let k = k.clamp(1.0, f64::from(MAX_PROBES)) as u8;
    k
}

/// A filter read from a file.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    bits: bytes::Bytes,
    num_probes: u8,
}

impl BloomFilter {
    /// Parses a filter block payload.
    ///
    /// # Errors
    /// A reason when the payload has no bit array or an out-of-range probe count.
    pub fn new(payload: bytes::Bytes) -> Result<Self, &'static str> {
        let (&num_probes, bits) = payload.split_last().ok_or("empty filter block")?;
        if bits.is_empty() {
            return Err("filter block without bits");
        }
        if !(1..=MAX_PROBES).contains(&num_probes) {
            return Err("filter probe count out of range");
        }
        let bits = payload.slice(..bits.len());
        Ok(Self { bits, num_probes })
    }

    /// False only if `user_key` was certainly not added; true means "maybe".
    #[must_use]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let num_bits = (self.bits.len() as u64) * 8;
        probes(hash64(user_key), self.num_probes, num_bits).all(|bit| {
            usize::try_from(bit / 8)
                .ok()
                .and_then(|i| self.bits.get(i))
                .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(keys: impl Iterator<Item = Vec<u8>>, bits_per_key: u32) -> BloomFilter {
        let mut b = BloomBuilder::default();
        keys.for_each(|k| b.add_key(&k));
        BloomFilter::new(bytes::Bytes::from(b.finish(bits_per_key))).unwrap()
    }

    #[test]
    fn no_false_negatives_and_fp_rate_near_one_percent_at_10_bits() {
        let n = 100_000u32;
        let f = filter((0..n).map(|i| format!("user-key-{i:08}").into_bytes()), 10);
        for i in 0..n {
            assert!(
                f.may_contain(format!("user-key-{i:08}").as_bytes()),
                "false negative {i}"
            );
        }
        let probes = 200_000u32;
        let fp = (0..probes)
            .filter(|i| f.may_contain(format!("other-key-{i:08}").as_bytes()))
            .count();
        let rate = fp as f64 / f64::from(probes);
        assert!(
            (0.005..=0.015).contains(&rate),
            "false-positive rate {rate}"
        );
    }

    #[test]
    fn probes_match_the_closed_form_of_the_format() {
        let mut hash = 0x0123_4567_89ab_cdefu64;
        for num_bits in [64u64, 1000, 8 << 20, (1 << 40) + 7] {
            for _ in 0..1000 {
                hash = fmix64(hash.wrapping_add(P1));
                let (h1, h2) = (hash & 0xffff_ffff, hash >> 32);
                let closed: Vec<u64> = (0..30).map(|i| (h1 + i * h2) % num_bits).collect();
                assert_eq!(probes(hash, 30, num_bits).collect::<Vec<_>>(), closed);
            }
        }
    }

    #[test]
    fn probe_count_follows_ln2() {
        assert_eq!(probe_count(10), 7);
        assert_eq!(probe_count(1), 1);
        assert_eq!(probe_count(100), 30);
    }

    #[test]
    fn hash_is_pinned() {
        // The hash is part of the format: these values must never change.
        assert_ne!(hash64(b"a"), hash64(b"a\0"));
        assert_ne!(hash64(b"abcdefgh"), hash64(b"abcdefgi"));
        let pinned = [
            hash64(b""),
            hash64(b"memforest"),
            hash64(b"0123456789abcdef"),
        ];
        assert_eq!(pinned, PINNED);
    }

    const PINNED: [u64; 3] = [
        17_622_645_311_363_874_476,
        16_845_371_191_888_980_645,
        4_656_255_450_610_106_668,
    ];

    #[test]
    fn bad_payloads_are_refused() {
        assert!(BloomFilter::new(bytes::Bytes::new()).is_err());
        assert!(BloomFilter::new(bytes::Bytes::from_static(&[7])).is_err());
        assert!(BloomFilter::new(bytes::Bytes::from_static(&[0, 0])).is_err());
        assert!(BloomFilter::new(bytes::Bytes::from_static(&[0, 31])).is_err());
    }
}
