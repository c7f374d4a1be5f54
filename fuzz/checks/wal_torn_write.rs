//! Check for the `wal_torn_write` fuzz target. The input bytes drive the generation of a
//! log (batches, compression, a rotation point), written in memory with the WAL's own
//! framing; then one fault hits a segment: a truncation, a bit flip, or a 512-byte sector
//! zeroed or filled with garbage. Every recovery mode must return a prefix of what was
//! written (a subsequence for salvage) or, for the strict modes, a corruption error; no
//! record that ends before the fault may be lost by a mode that succeeds; and a truncation
//! of the last segment loses exactly the records it cuts. Shared (via `#[path]`) with
//! `crates/memforest-wal/tests/fuzz_corpus.rs`.

use memforest_wal::batch::{encode, Compression, WriteBatch};
use memforest_wal::format::MetadataType;
use memforest_wal::recovery::{plan, SegmentImage};
use memforest_wal::segment_meta::SegmentMeta;
use memforest_wal::{LogWriter, RecoveryMode, WalError};

/// Reads the input a byte at a time; zeros once it is exhausted.
struct Input<'a>(std::slice::Iter<'a, u8>);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        self.0.next().copied().unwrap_or(0)
    }
    fn u16(&mut self) -> usize {
        usize::from(self.byte()) << 8 | usize::from(self.byte())
    }
}

/// The fault applied to one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Truncate,
    FlipBit,
    ZeroSector,
    GarbageSector,
}

/// A written batch: its seqno, contents, segment and end offset there.
struct Written {
    seqno: u64,
    batch: WriteBatch,
    segment: u64,
    end: u64,
}

fn generate(input: &mut Input<'_>) -> (Vec<Vec<u8>>, Vec<Written>) {
    let count = usize::from(input.byte() % 12) + 1;
    let rotate_at = usize::from(input.byte()) % (count + 1);
    let compression = Compression {
        threshold: (input.byte() % 2 == 1).then_some(256),
        level: 1,
    };
    let mut segments = Vec::new();
    let mut written = Vec::<Written>::new();
    let mut next_seqno = 1u64;
    let mut writer = None::<LogWriter<Vec<u8>>>;
    for i in 0..count {
        if writer.is_none() || i == rotate_at {
            let id = segments.len() as u64 + u64::from(writer.is_some()) + 1;
            if let Some(done) = writer.take() {
                segments.push(done.into_inner());
            }
            let meta = SegmentMeta {
                segment_id: id,
                predecessor_id: id - 1,
                predecessor_last_seqno: next_seqno - 1,
            };
            let mut w = LogWriter::new(Vec::new(), id);
            assert!(w
                .add_metadata(MetadataType::SEGMENT_META, &meta.encode())
                .is_ok());
            writer = Some(w);
        }
        let mut batch = WriteBatch::new();
        for _ in 0..input.byte() % 4 {
            let kind = input.byte();
            let key = vec![kind; usize::from(input.byte() % 16)];
            // Mostly small values; a high bit asks for one that spans blocks.
            let len = match input.byte() {
                b if b >= 0xf0 => 30_000 + input.u16(),
                b => usize::from(b) * 7,
            };
            batch.push(kind, key, vec![input.byte(); len]);
        }
        let Some(w) = writer.as_mut() else {
            unreachable!()
        };
        let Ok(payload) = encode(next_seqno, &batch, compression) else {
            unreachable!("small batches always encode");
        };
        assert!(w.add_record(&payload).is_ok());
        written.push(Written {
            seqno: next_seqno,
            segment: segments.len() as u64 + 1,
            end: w.len(),
            batch: batch.clone(),
        });
        next_seqno += batch.seqno_span();
    }
    if let Some(w) = writer {
        segments.push(w.into_inner());
    }
    (segments, written)
}

/// Runs every property on the log and fault `data` describes.
pub fn check(data: &[u8]) {
    let mut input = Input(data.iter());
    let (mut segments, written) = generate(&mut input);
    let fault = match input.byte() % 4 {
        0 => Fault::Truncate,
        1 => Fault::FlipBit,
        2 => Fault::ZeroSector,
        _ => Fault::GarbageSector,
    };
    let victim = usize::from(input.byte()) % segments.len();
    let victim_id = victim as u64 + 1;
    let is_last = victim + 1 == segments.len();
    let Some(bytes) = segments.get_mut(victim) else {
        return;
    };
    let at = (usize::from(input.byte()) << 16 | input.u16()) % bytes.len().max(1);
    // Where the fault starts: no record ending at or before it may be lost.
    let fault_start = match fault {
        Fault::Truncate => {
            bytes.truncate(at);
            at
        }
        Fault::FlipBit => {
            let bit = input.byte() % 8;
            if let Some(b) = bytes.get_mut(at) {
                *b ^= 1 << bit;
            }
            at
        }
        Fault::ZeroSector | Fault::GarbageSector => {
            let sector = at / 512 * 512;
            let seed = input.byte();
            let end = (sector + 512).min(bytes.len());
            let region = bytes.get_mut(sector..end).unwrap_or_default();
            for (b, i) in region.iter_mut().zip((0..=u8::MAX).cycle()) {
                *b = if fault == Fault::ZeroSector {
                    0
                } else {
                    i.wrapping_mul(seed | 1).wrapping_add(seed)
                };
            }
            sector
        }
    };
    let images: Vec<SegmentImage<'_>> = (1u64..)
        .zip(&segments)
        .map(|(id, bytes)| SegmentImage { id, bytes })
        .collect();
    // Batches that precede the fault are safe.
    let safe = written
        .iter()
        .take_while(|w| {
            w.segment < victim_id || (w.segment == victim_id && w.end <= fault_start as u64)
        })
        .count();

    for mode in RecoveryMode::ALL {
        match plan(&images, mode, &|_| None, &|_, _| false) {
            Ok(p) => {
                let got: Vec<(u64, &WriteBatch)> = p
                    .batches
                    .iter()
                    .map(|b| (b.first_seqno, &b.batch))
                    .collect();
                let want: Vec<(u64, &WriteBatch)> =
                    written.iter().map(|w| (w.seqno, &w.batch)).collect();
                if mode == RecoveryMode::SkipAnyCorrupted {
                    let mut rest = want.iter();
                    assert!(
                        got.iter().all(|g| rest.any(|w| w == g)),
                        "salvage invented a batch"
                    );
                } else {
                    assert_eq!(
                        got.as_slice(),
                        want.get(..got.len()).unwrap_or_default(),
                        "{mode:?}"
                    );
                    assert!(got.len() >= safe, "{mode:?} lost a batch before the fault");
                    let exact = fault == Fault::Truncate && is_last;
                    if exact && mode != RecoveryMode::AbsoluteConsistency {
                        assert_eq!(got.len(), safe, "{mode:?} truncation at {at}");
                    }
                }
            }
            Err(WalError::Corruption { segment, .. }) => {
                assert!(
                    matches!(
                        mode,
                        RecoveryMode::TolerateCorruptedTail | RecoveryMode::AbsoluteConsistency
                    ),
                    "{mode:?} refused to open"
                );
                assert!(segment >= 1 && segment <= segments.len() as u64);
            }
            Err(e) => unreachable!("{mode:?}: unexpected error {e}"),
        }
    }
}
