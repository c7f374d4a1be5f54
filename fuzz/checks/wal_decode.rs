//! Check for the `wal_decode` fuzz target: arbitrary bytes as WAL segment 1, replayed under
//! every recovery mode. Shared (via `#[path]`) with `crates/memforest-wal/tests/fuzz_corpus.rs`.
//!
//! Properties: nothing panics; salvage (`SkipAnyCorrupted`) never fails; every prefix mode
//! recovers a prefix of what salvage recovers; `AbsoluteConsistency` succeeds only when
//! there was no damage at all; `PointInTime` never fails; an error names segment 1 and an
//! offset inside the input; and the prefix kept by recovery, replayed on its own, is a clean
//! log holding exactly the same batches.

use memforest_wal::recovery::{plan, SegmentImage};
use memforest_wal::{RecoveryMode, WalError};

/// Runs every property on `data`.
pub fn check(data: &[u8]) {
    let image = [SegmentImage { id: 1, bytes: data }];
    let Ok(salvage) = plan(
        &image,
        RecoveryMode::SkipAnyCorrupted,
        &|_| None,
        &|_, _| false,
    ) else {
        unreachable!("salvage never refuses a log");
    };
    for mode in [
        RecoveryMode::TolerateCorruptedTail,
        RecoveryMode::PointInTime,
        RecoveryMode::AbsoluteConsistency,
    ] {
        match plan(&image, mode, &|_| None, &|_, _| false) {
            Ok(p) => {
                assert!(p.batches.len() <= salvage.batches.len(), "{mode:?}");
                assert!(
                    salvage.batches.iter().zip(&p.batches).all(|(a, b)| a == b),
                    "{mode:?} recovered something salvage did not"
                );
                if mode == RecoveryMode::AbsoluteConsistency {
                    assert!(salvage.report.skipped.is_empty());
                    assert_eq!(p.batches, salvage.batches);
                }
                // The kept prefix is a clean log with the same batches (when nothing is
                // kept, the segment is deleted and nothing was recovered).
                let Some(kept) = p.kept.last() else {
                    assert!(p.batches.is_empty());
                    continue;
                };
                let len = usize::try_from(kept.valid_len).unwrap_or(usize::MAX);
                assert!(len <= data.len());
                let prefix = [SegmentImage {
                    id: 1,
                    bytes: data.get(..len).unwrap_or_default(),
                }];
                match plan(
                    &prefix,
                    RecoveryMode::AbsoluteConsistency,
                    &|_| None,
                    &|_, _| false,
                ) {
                    Ok(again) => assert_eq!(again.batches, p.batches, "{mode:?}"),
                    Err(e) => unreachable!("{mode:?}: kept prefix is not clean: {e}"),
                }
            }
            Err(WalError::Corruption {
                segment, offset, ..
            }) => {
                assert_ne!(mode, RecoveryMode::PointInTime);
                assert_eq!(segment, 1);
                assert!(offset <= data.len() as u64);
            }
            Err(e) => unreachable!("{mode:?}: unexpected error {e}"),
        }
    }
}
