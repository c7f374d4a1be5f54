//! proptest: random batches, a random cut or flipped byte anywhere in the log, reopen under
//! every mode: the result is always a prefix of what was written (a subsequence for
//! salvage) or the mode's corruption error, never garbage, never a panic.
#![allow(
    clippy::cast_possible_truncation,
    reason = "offsets and sizes in test logs are small"
)]

mod common;

use common::{contents, copy_dir, open, seg};
use memforest_wal::{
    Compression, Durability, LogReader, RecordKind, RecoveryMode, Wal, WalError, WalOptions,
    WriteBatch,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Damage {
    /// Truncate segment `seg % n` at `at % len`.
    Cut { seg: usize, at: usize },
    /// XOR the byte at `at % len` of segment `seg % n` with `mask` (non-zero).
    Flip { seg: usize, at: usize, mask: u8 },
}

fn batches() -> impl Strategy<Value = Vec<WriteBatch>> {
    let entry = (
        0u8..3,
        prop::collection::vec(any::<u8>(), 0..8),
        0usize..3000,
    );
    let batch = prop::collection::vec(entry, 0..4).prop_map(|entries| {
        let mut b = WriteBatch::new();
        for (kind, key, len) in entries {
            b.push(kind, key, vec![kind; len]);
        }
        b
    });
    prop::collection::vec(batch, 1..25)
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(seg, at)| Damage::Cut { seg, at }),
        (any::<usize>(), any::<usize>(), 1u8..).prop_map(|(seg, at, mask)| Damage::Flip {
            seg,
            at,
            mask
        }),
    ]
}

/// End offsets of the data records of segment `id`.
#[allow(clippy::unwrap_used, reason = "test helper")]
fn record_ends(dir: &std::path::Path, id: u64) -> Vec<u64> {
    let bytes = std::fs::read(seg(dir, id)).unwrap();
    LogReader::new(&bytes, id)
        .map(Result::unwrap)
        .filter(|r| r.kind == RecordKind::Data)
        .map(|r| r.end)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn damage_yields_a_prefix_or_the_modes_error(
        written in batches(),
        compress in any::<bool>(),
        damage in damage(),
    ) {
        let src = tempfile::tempdir().unwrap();
        let opts = WalOptions {
            segment_size: 8 * 1024,
            compression: Compression { threshold: compress.then_some(512), level: 1 },
            ..WalOptions::default()
        };
        let (wal, _) = Wal::open(src.path(), opts).unwrap();
        let seqnos: Vec<u64> = written
            .iter()
            .map(|b| wal.append(b, Durability::Buffered).unwrap())
            .collect();
        let ids = wal.segment_ids();
        drop(wal);

        let (Damage::Cut { seg: s, at } | Damage::Flip { seg: s, at, .. }) = damage;
        let id = ids[s % ids.len()];
        let last = id == *ids.last().unwrap();
        let before_damaged: usize = ids.iter().take_while(|&&i| i < id).map(|&i| record_ends(src.path(), i).len()).sum();
        let ends = record_ends(src.path(), id);
        let path = seg(src.path(), id);
        let mut bytes = std::fs::read(&path).unwrap();
        let at = at % bytes.len();
        match damage {
            Damage::Cut { .. } => bytes.truncate(at),
            Damage::Flip { mask, .. } => bytes[at] ^= mask,
        }
        std::fs::write(&path, &bytes).unwrap();

        for mode in RecoveryMode::ALL {
            let dir = copy_dir(src.path());
            match open(dir.path(), mode) {
                Ok((_, rec)) => {
                    let got = contents(&rec);
                    let got_seqnos: Vec<u64> = rec.batches.iter().map(|b| b.first_seqno).collect();
                    if mode == RecoveryMode::SkipAnyCorrupted {
                        // A subsequence of what was written, with the original seqnos.
                        let mut it = written.iter().zip(&seqnos);
                        for (b, s) in got.iter().zip(&got_seqnos) {
                            prop_assert!(it.any(|(w, ws)| w == b && ws == s));
                        }
                    } else {
                        prop_assert_eq!(&got[..], &written[..got.len()], "{:?}", mode);
                        prop_assert_eq!(&got_seqnos[..], &seqnos[..got.len()]);
                    }
                    if let (Damage::Cut { .. }, true, true) = (&damage, last, mode != RecoveryMode::AbsoluteConsistency) {
                        // A cut of the last segment loses exactly the records it touches.
                        let kept = ends.iter().filter(|&&e| e <= at as u64).count();
                        let want = if at == 0 { before_damaged } else { before_damaged + kept };
                        prop_assert_eq!(got.len(), want, "{:?}", mode);
                    }
                    // What a prefix mode recovered reopens cleanly under the strictest mode
                    // (salvage leaves damaged bytes before its last valid record).
                    if mode != RecoveryMode::SkipAnyCorrupted {
                        let (_, again) = open(dir.path(), RecoveryMode::AbsoluteConsistency).unwrap();
                        prop_assert_eq!(contents(&again), got);
                    }
                }
                Err(WalError::Corruption { segment, .. }) => {
                    prop_assert!(mode != RecoveryMode::PointInTime && mode != RecoveryMode::SkipAnyCorrupted);
                    prop_assert!(ids.contains(&segment));
                }
                Err(e) => prop_assert!(false, "{:?}: unexpected error {}", mode, e),
            }
        }
    }
}
