//! [`CrashMode`]: what a simulated power loss does to a file's unsynced data.

use rand::rngs::StdRng;
use rand::Rng;

/// Size of a disk sector, the unit [`CrashMode::Sectors`] keeps or loses, in bytes.
pub const SECTOR: usize = 512;

/// What happens to the data written to a file since its last sync when
/// [`crate::FaultStorage::crash`] simulates a power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashMode {
    /// All of it is lost: the file holds exactly what was last synced.
    DropAll,
    /// A random prefix of it survives (possibly none or all): writes reached the disk in
    /// order and stopped somewhere, maybe mid-write.
    Prefix,
    /// The file keeps its new length, but each 512-byte sector holding unsynced data
    /// independently keeps the new bytes or reverts to the old ones (zeros past the old
    /// end): out-of-order writeback, torn pages, holes.
    Sectors,
}

impl CrashMode {
    /// All modes, for crash loops.
    pub const ALL: [Self; 3] = [Self::DropAll, Self::Prefix, Self::Sectors];

    /// The file contents after a crash, given what was last `synced` and what the file
    /// held (`current`, as readers saw it).
    pub(crate) fn apply(self, synced: &[u8], current: &[u8], rng: &mut StdRng) -> Vec<u8> {
        let common = synced
            .iter()
            .zip(current)
            .take_while(|(a, b)| a == b)
            .count();
        if common == synced.len() && common == current.len() {
            return current.to_vec();
        }
        match self {
            Self::DropAll => synced.to_vec(),
            Self::Prefix => {
                if current.len() <= common {
                    // An unsynced truncation: it either reached the disk or it did not.
                    if rng.gen_bool(0.5) { current } else { synced }.to_vec()
                } else {
                    let keep = rng.gen_range(common..=current.len());
                    current.get(..keep).unwrap_or_default().to_vec()
                }
            }
            Self::Sectors => {
                let mut out = current.to_vec();
                let first = common / SECTOR;
                for (i, chunk) in out.chunks_mut(SECTOR).enumerate().skip(first) {
                    if rng.gen_bool(0.5) {
                        continue;
                    }
                    let start = i * SECTOR;
                    for (j, byte) in chunk.iter_mut().enumerate() {
                        *byte = synced.get(start + j).copied().unwrap_or(0);
                    }
                }
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn old_and_new() -> (Vec<u8>, Vec<u8>) {
        let synced = vec![1u8; 1000];
        let mut current = synced.clone();
        current.extend(std::iter::repeat_n(2u8, 4000));
        (synced, current)
    }

    #[test]
    fn drop_all_keeps_exactly_the_synced_bytes() {
        let (synced, current) = old_and_new();
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(
            CrashMode::DropAll.apply(&synced, &current, &mut rng),
            synced
        );
    }

    #[test]
    fn prefix_keeps_the_synced_bytes_and_a_prefix_of_the_rest() {
        let (synced, current) = old_and_new();
        let mut rng = StdRng::seed_from_u64(2);
        let mut lengths = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let out = CrashMode::Prefix.apply(&synced, &current, &mut rng);
            assert!(out.len() >= synced.len());
            assert_eq!(out[..], current[..out.len()]);
            lengths.insert(out.len());
        }
        assert!(lengths.len() > 50, "prefix lengths vary: {}", lengths.len());
    }

    #[test]
    fn sectors_mix_old_and_new_sectors_and_never_touch_synced_ones() {
        let (synced, current) = old_and_new();
        let mut rng = StdRng::seed_from_u64(3);
        let out = CrashMode::Sectors.apply(&synced, &current, &mut rng);
        assert_eq!(out.len(), current.len());
        assert_eq!(out[..512], synced[..512], "a fully synced sector is kept");
        let sectors: Vec<&[u8]> = out[1024..4608].chunks(SECTOR).collect();
        assert!(
            sectors.iter().any(|s| s.iter().all(|&b| b == 0)),
            "some hole"
        );
        assert!(
            sectors.iter().any(|s| s.iter().all(|&b| b == 2)),
            "some kept"
        );
        // Sector 1 straddles the old end: reverting it restores old bytes, then zeros.
        let s1 = &out[512..1024];
        assert!(
            s1 == &current[512..1024]
                || (s1[..488] == synced[512..] && s1[488..].iter().all(|&b| b == 0))
        );
    }

    #[test]
    fn an_unsynced_truncation_either_happened_or_not() {
        let synced = vec![7u8; 100];
        let current = vec![7u8; 40];
        let mut rng = StdRng::seed_from_u64(4);
        for mode in CrashMode::ALL {
            let out = mode.apply(&synced, &current, &mut rng);
            assert!(out == synced || out == current, "{mode:?}");
        }
    }
}
