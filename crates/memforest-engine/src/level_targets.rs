//! Target sizes of the levels for leveled compaction, and the level that level 0 compacts
//! into: static (`max_bytes_for_level_base * multiplier^(i-1)` from level 1 down) or dynamic
//! (RocksDB `level_compaction_dynamic_level_bytes`).
//!
//! Dynamic targets are derived from the largest level instead of from level 1: the last
//! level holds whatever it holds, each level above it a `level_size_multiplier`-th of the
//! one below, and the *base level* (where level 0 goes) is the highest level whose target
//! is still at least `max_bytes_for_level_base / multiplier`; the levels above it stay
//! empty. So the last level always holds about `m / (m + 1)` of the data and the levels
//! above it (where overwritten and deleted versions wait to be merged away) the rest,
//! whatever the database size: space amplification stays near `1 + 1/m`. With static
//! targets a small database keeps most of its bytes in level 1, garbage included, until
//! level 1 reaches its full target, so space amplification is highest in small stores.

use crate::options::Options;
use crate::version::Version;

/// Where level 0 compacts to, and each level's target size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelTargets {
    /// The level level-0 files are compacted into (1 with static targets).
    pub base: usize,
    /// `bytes[i]`: target of level `i` (0 above the base level and for level 0, `u64::MAX`
    /// for the last level, which has no target).
    pub bytes: Vec<u64>,
}

impl LevelTargets {
    /// The targets for `version` under `options`.
    #[must_use]
    pub fn new(version: &Version, options: &Options) -> Self {
        let sizes: Vec<u64> = (0..version.levels.len())
            .map(|l| version.level_bytes(l))
            .collect();
        Self::from_sizes(&sizes, options)
    }

    /// The targets for levels holding `sizes[i]` bytes (one entry per level, at least 2).
    #[must_use]
    pub fn from_sizes(sizes: &[u64], options: &Options) -> Self {
        let levels = sizes.len().max(2);
        let last = levels - 1;
        let mut bytes = vec![0u64; levels];
        let base = if options.dynamic_level_bytes {
            dynamic_base(sizes, options, last, &mut bytes)
        } else {
            for (level, slot) in bytes.iter_mut().enumerate().skip(1) {
                *slot = options.level_target_bytes(level);
            }
            1
        };
        if let Some(slot) = bytes.get_mut(last) {
            *slot = u64::MAX;
        }
        Self { base, bytes }
    }

    /// Target bytes of `level` (0 when out of range).
    #[must_use]
    pub fn target(&self, level: usize) -> u64 {
        self.bytes.get(level).copied().unwrap_or(0)
    }
}

/// RocksDB's `CalculateBaseBytes`: the base level is the first non-empty level, moved up
/// while its share of the largest level exceeds `max_bytes_for_level_base`; fills `bytes`
/// from the base level down and returns the base level.
fn dynamic_base(sizes: &[u64], options: &Options, last: usize, bytes: &mut [u64]) -> usize {
    let mult = options.level_size_multiplier.max(2);
    let size_of = |l: usize| sizes.get(l).copied().unwrap_or(0);
    let largest = (1..=last).map(size_of).max().unwrap_or(0);
    let first = (1..=last).find(|&l| size_of(l) > 0).unwrap_or(last);
    let mut size = largest;
    for _ in first..last {
        size /= mult;
    }
    let mut base = first;
    while base > 1 && size > options.max_bytes_for_level_base {
        size /= mult;
        base -= 1;
    }
    let mut target = size.max(options.max_bytes_for_level_base / mult).max(1);
    for slot in bytes.iter_mut().take(last).skip(base) {
        *slot = target;
        target = target.saturating_mul(mult);
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    /// RocksDB's multiplier, 10, so the targets below read as powers of ten.
    fn options(dynamic: bool) -> Options {
        Options {
            dynamic_level_bytes: dynamic,
            level_size_multiplier: 10,
            ..Options::default()
        }
    }

    #[test]
    fn static_targets_start_at_level_1() {
        let t = LevelTargets::from_sizes(&[0, 217 * MB, 59 * MB, 0, 0, 0, 0], &options(false));
        assert_eq!(t.base, 1);
        assert_eq!(t.target(1), 256 * MB);
        assert_eq!(t.target(2), 2560 * MB);
        assert_eq!(t.target(6), u64::MAX);
    }

    #[test]
    fn a_small_database_compacts_level_0_into_the_last_level() {
        for sizes in [[0u64; 7], [3 * MB, 0, 0, 0, 0, 0, 200 * MB]] {
            let t = LevelTargets::from_sizes(&sizes, &options(true));
            assert_eq!(t.base, 6, "{sizes:?}");
            assert!(t.bytes[1..6].iter().all(|&b| b == 0), "{t:?}");
        }
    }

    #[test]
    fn the_base_level_moves_up_as_the_last_level_grows() {
        let o = options(true);
        let t = LevelTargets::from_sizes(&[0, 0, 0, 0, 0, 10 * MB, 300 * MB], &o);
        assert_eq!(t.base, 5);
        assert_eq!(t.target(5), 30 * MB);
        let t = LevelTargets::from_sizes(&[0, 0, 0, 0, 40 * MB, 300 * MB, 20_000 * MB], &o);
        assert_eq!(t.base, 4);
        assert_eq!((t.target(4), t.target(5)), (200 * MB, 2000 * MB));
        // Past 256 MiB at level 4 the base moves up again.
        let t = LevelTargets::from_sizes(&[0, 0, 0, 0, 40 * MB, 300 * MB, 30_000 * MB], &o);
        assert_eq!((t.base, t.target(3)), (3, 30 * MB));
        // Every level from the base down targets a tenth of the next.
        assert!(t.bytes[4] * 10 == t.bytes[5] && t.target(6) == u64::MAX);
    }

    #[test]
    fn the_base_level_never_skips_a_non_empty_level() {
        // A store written with static targets: data in levels 1 and 2, none below.
        let t = LevelTargets::from_sizes(&[0, 217 * MB, 59 * MB, 0, 0, 0, 0], &options(true));
        assert_eq!(t.base, 1);
        assert!(t.target(1) > 0 && t.target(1) < 217 * MB, "{t:?}");
    }
}
