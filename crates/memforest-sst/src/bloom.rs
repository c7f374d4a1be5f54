//! Bloom filter over user keys (RocksDB's full filter, simplified).
//!
//! Each key is hashed once to 64 bits by [`hash64`]. The number of probes is
//! `round(bits_per_key * ln 2)`, clamped to 1..=30, which minimises the false-positive rate
//! of the whole-array layout and (computed for Poisson line loads) also of the cache-local
//! one at 10 bits per key.
//! Where the probes land is the filter's [`FilterLayout`], fixed by the file's format
//! version:
//!
//! - [`FilterLayout::Whole`] (format version 1): probe `i` (0-based) is bit
//!   `(h1 + i * h2) mod m` of the whole array, where `h1` and `h2` are the low and high 32
//!   bits of the hash and `m` the number of bits (Kirsch and Mitzenmacher, "Less hashing,
//!   same performance", 2006); about 0.8% false positives at 10 bits per key, and one cache
//!   miss per probe when the filter is larger than the CPU caches.
//! - [`FilterLayout::CacheLocal`] (format versions 2 and 3, 3 written by default; 3 also
//!   records the filter's scope, [`crate::filter_scope`]): the high 32 bits pick one
//!   512-bit line (64 bytes, a cache line) and every probe lands inside it, so building
//!   or probing a key touches one line (the idea of RocksDB's format_version 5
//!   filter; the bit addressing here is our own). Lines fill unevenly, which costs some
//!   accuracy: about 1% false positives at 10 bits per key.
//!
//! Filter payload: the bit array (bit `b` is bit `b % 8` of byte `b / 8`; whole 64-byte
//! lines in the cache-local layout), then the probe count (`u8`). It is stored
//! uncompressed, with a block trailer, after the scope id in format version 3
//! ([`crate::filter_scope`]).

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

/// Bits in one line of the cache-local layout (64 bytes).
const LINE_BITS: u64 = 512;

/// Most lines a cache-local filter may have (so the line pick `((h >> 32) * lines) >> 32`
/// stays in 64 bits): a 256 GiB filter. A filter read from a file is far below it (a
/// block's size is a `u32`); the bound keeps the arithmetic safe for any caller.
const MAX_LINES: u64 = 1 << 32;

/// How a filter's probes are placed in its bit array; set by the segment file's format
/// version ([`FilterLayout::for_format_version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterLayout {
    /// Probes spread over the whole array (format version 1).
    Whole,
    /// Every probe of a key inside one 64-byte line (format versions 2 and 3; 3 adds the
    /// filter's scope, [`crate::filter_scope`]).
    CacheLocal,
}

impl FilterLayout {
    /// The layout of segment files of format version `version` (`None` for a version
    /// without filters this crate knows).
    #[must_use]
    pub fn for_format_version(version: u32) -> Option<Self> {
        match version {
            1 => Some(Self::Whole),
            2 | 3 => Some(Self::CacheLocal),
            _ => None,
        }
    }

    /// Bytes of the bit array for `keys` keys at `bits_per_key` (at least 64 bits; whole
    /// lines for the cache-local layout).
    fn array_bytes(self, keys: usize, bits_per_key: u32) -> usize {
        let wanted = (keys as u64).saturating_mul(u64::from(bits_per_key));
        let bytes = match self {
            Self::Whole => wanted.max(64).div_ceil(8),
            Self::CacheLocal => wanted.div_ceil(LINE_BITS).clamp(1, MAX_LINES) * (LINE_BITS / 8),
        };
        usize::try_from(bytes).unwrap_or(usize::MAX)
    }

    /// Whether `visit` holds for every probe bit of `hash` in an array of `num_bits` bits
    /// (stops at the first that does not).
    fn all_probes(
        self,
        hash: u64,
        num_probes: u8,
        num_bits: u64,
        visit: impl FnMut(u64) -> bool,
    ) -> bool {
        match self {
            Self::Whole => probes(hash, num_probes, num_bits).all(visit),
            Self::CacheLocal => line_probes(hash, num_probes, num_bits).all(visit),
        }
    }
}

/// The probe positions of `hash` in a cache-local filter of `num_bits` bits (whole lines,
/// at most [`MAX_LINES`]): line `((h >> 32) * lines) >> 32` (multiply-shift, no division),
/// then bit `(a + i * s) mod 512` of it, where `a` is bits 0..9 of the hash and the step
/// `s` bits 9..18 with the lowest bit set (odd, so a key's probes are distinct).
fn line_probes(hash: u64, num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64> {
    let lines = (num_bits / LINE_BITS).clamp(1, MAX_LINES);
    let start = (((hash >> 32) * lines) >> 32) * LINE_BITS;
    let first = hash & (LINE_BITS - 1);
    let step = ((hash >> 9) & (LINE_BITS - 1)) | 1;
    (0..u64::from(num_probes)).map(move |i| start + ((first + i * step) & (LINE_BITS - 1)))
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
    /// 0 is taken as 1) in `layout`.
    #[must_use]
    pub fn finish(&self, bits_per_key: u32, layout: FilterLayout) -> Vec<u8> {
        let bits_per_key = bits_per_key.max(1);
        let num_probes = probe_count(bits_per_key);
        let mut out = vec![0u8; layout.array_bytes(self.hashes.len(), bits_per_key)];
        let num_bits = (out.len() as u64) * 8;
        for &hash in &self.hashes {
            layout.all_probes(hash, num_probes, num_bits, |bit| {
                if let Some(byte) = usize::try_from(bit / 8).ok().and_then(|i| out.get_mut(i)) {
                    *byte |= 1 << (bit % 8);
                }
                true
            });
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
    layout: FilterLayout,
}

impl BloomFilter {
    /// Parses a filter block payload written in `layout`.
    ///
    /// # Errors
    /// A reason when the payload has no bit array, an out-of-range probe count, or (the
    /// cache-local layout) a bit array that is not whole 64-byte lines or is over 256 GiB.
    pub fn new(payload: bytes::Bytes, layout: FilterLayout) -> Result<Self, &'static str> {
        let (&num_probes, bits) = payload.split_last().ok_or("empty filter block")?;
        if bits.is_empty() {
            return Err("filter block without bits");
        }
        if !(1..=MAX_PROBES).contains(&num_probes) {
            return Err("filter probe count out of range");
        }
        if layout == FilterLayout::CacheLocal {
            let line_bytes = LINE_BITS / 8;
            let len = bits.len() as u64;
            if len % line_bytes != 0 {
                return Err("filter bit array is not whole 64-byte lines");
            }
            if len / line_bytes > MAX_LINES {
                return Err("filter bit array over 256 GiB");
            }
        }
        let bits = payload.slice(..bits.len());
        Ok(Self {
            bits,
            num_probes,
            layout,
        })
    }

    /// False only if `user_key` was certainly not added; true means "maybe".
    #[must_use]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        let num_bits = (self.bits.len() as u64) * 8;
        self.layout
            .all_probes(hash64(user_key), self.num_probes, num_bits, |bit| {
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

    const LAYOUTS: [FilterLayout; 2] = [FilterLayout::Whole, FilterLayout::CacheLocal];

    fn filter(
        keys: impl Iterator<Item = Vec<u8>>,
        bits_per_key: u32,
        layout: FilterLayout,
    ) -> BloomFilter {
        let mut b = BloomBuilder::default();
        keys.for_each(|k| b.add_key(&k));
        BloomFilter::new(bytes::Bytes::from(b.finish(bits_per_key, layout)), layout).unwrap()
    }

    /// The false-positive rate of a 10-bits-per-key filter of 100,000 keys, checking there
    /// are no false negatives.
    fn fp_rate(layout: FilterLayout) -> f64 {
        let n = 100_000u32;
        let f = filter(
            (0..n).map(|i| format!("user-key-{i:08}").into_bytes()),
            10,
            layout,
        );
        for i in 0..n {
            assert!(
                f.may_contain(format!("user-key-{i:08}").as_bytes()),
                "{layout:?}: false negative {i}"
            );
        }
        let probes = 200_000u32;
        let fp = (0..probes)
            .filter(|i| f.may_contain(format!("other-key-{i:08}").as_bytes()))
            .count();
        fp as f64 / f64::from(probes)
    }

    #[test]
    fn no_false_negatives_and_fp_rate_near_one_percent_at_10_bits() {
        let whole = fp_rate(FilterLayout::Whole);
        assert!((0.005..=0.011).contains(&whole), "whole: {whole}");
        // Uneven line loads cost the cache-local layout some accuracy, not much.
        let local = fp_rate(FilterLayout::CacheLocal);
        assert!((0.006..=0.015).contains(&local), "cache-local: {local}");
    }

    #[test]
    fn cache_local_probes_stay_in_one_line_and_are_distinct() {
        let mut hash = 0x0f1e_2d3c_4b5a_6978u64;
        for lines in [1u64, 3, 1000, MAX_LINES] {
            for _ in 0..1000 {
                hash = fmix64(hash.wrapping_add(P1));
                let bits: Vec<u64> = line_probes(hash, 30, lines * LINE_BITS).collect();
                let line = bits[0] / LINE_BITS;
                assert!(line < lines);
                assert!(bits.iter().all(|b| b / LINE_BITS == line), "{bits:?}");
                let mut distinct = bits.clone();
                distinct.sort_unstable();
                distinct.dedup();
                assert_eq!(distinct.len(), bits.len());
            }
        }
    }

    #[test]
    fn each_format_version_has_its_layout() {
        assert_eq!(
            FilterLayout::for_format_version(1),
            Some(FilterLayout::Whole)
        );
        for version in [2, 3] {
            assert_eq!(
                FilterLayout::for_format_version(version),
                Some(FilterLayout::CacheLocal)
            );
        }
        assert_eq!(FilterLayout::for_format_version(4), None);
        // An empty filter: 64 bits, or one whole line.
        let empty = |layout| BloomBuilder::default().finish(10, layout).len();
        assert_eq!(empty(FilterLayout::Whole), 8 + 1);
        assert_eq!(empty(FilterLayout::CacheLocal), 64 + 1);
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
        for layout in LAYOUTS {
            for bad in [&[][..], &[7], &[0, 0], &[0, 31]] {
                let payload = bytes::Bytes::copy_from_slice(bad);
                assert!(
                    BloomFilter::new(payload, layout).is_err(),
                    "{layout:?} {bad:?}"
                );
            }
        }
        // A 10-byte array is a valid whole filter but not whole lines.
        let mut ten = vec![0u8; 10];
        ten.push(7);
        let ten = bytes::Bytes::from(ten);
        assert!(BloomFilter::new(ten.clone(), FilterLayout::Whole).is_ok());
        assert!(BloomFilter::new(ten, FilterLayout::CacheLocal).is_err());
    }
}
