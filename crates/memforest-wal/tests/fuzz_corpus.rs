//! Runs the fuzz targets' checks (`fuzz/checks/wal_*.rs`) over their seed corpora, so CI
//! exercises them on every run. `regenerate_seed_corpus` (ignored) rewrites the seeds:
//! `cargo test -p memforest-wal --test fuzz_corpus -- --ignored`.
#![allow(clippy::unwrap_used, reason = "test code")]

#[path = "../../../fuzz/checks/wal_decode.rs"]
mod wal_decode;
#[path = "../../../fuzz/checks/wal_torn_write.rs"]
mod wal_torn_write;

use std::path::{Path, PathBuf};

use memforest_wal::format::MetadataType;
use memforest_wal::segment_meta::SegmentMeta;
use memforest_wal::{batch, Compression, LogWriter, WriteBatch};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn replay(target: &str, check: fn(&[u8])) {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus(target)).unwrap() {
        let path = entry.unwrap().path();
        check(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 5, "{target}: only {n} seeds");
}

#[test]
fn wal_decode_seeds() {
    replay("wal_decode", wal_decode::check);
}

#[test]
fn wal_torn_write_seeds() {
    replay("wal_torn_write", wal_torn_write::check);
}

/// A small valid segment 1 holding `batches`, and the same with a torn or zeroed end.
fn segment(batches: &[WriteBatch], compression: Compression) -> Vec<u8> {
    let mut w = LogWriter::new(Vec::new(), 1);
    let meta = SegmentMeta {
        segment_id: 1,
        predecessor_id: 0,
        predecessor_last_seqno: 0,
    };
    w.add_metadata(MetadataType::SEGMENT_META, &meta.encode())
        .unwrap();
    let mut seqno = 1;
    for b in batches {
        w.add_record(&batch::encode(seqno, b, compression).unwrap())
            .unwrap();
        seqno += b.seqno_span();
    }
    w.into_inner()
}

#[test]
#[ignore = "rewrites fuzz/corpus/wal_*; run by hand after a format change"]
fn regenerate_seed_corpus() {
    let plain = Compression {
        threshold: None,
        level: 1,
    };
    let small: Vec<WriteBatch> = (0..4u8)
        .map(|i| {
            let mut b = WriteBatch::new();
            for j in 0..i {
                b.push(j, vec![b'k', i, j], vec![i; usize::from(j) * 20]);
            }
            b
        })
        .collect();
    // A batch ending near a block's end, so the next one is fragmented (First + Last).
    let mut near_end = WriteBatch::new();
    near_end.push(1, b"big".to_vec(), vec![0u8; 32_600]);
    let mut spanning = small.clone();
    spanning.insert(1, near_end);
    let mut compressible = WriteBatch::new();
    compressible.push(2, b"z".to_vec(), vec![b'z'; 4000]);

    let clean = segment(&small, plain);
    let mut torn = clean.clone();
    torn.truncate(clean.len() - 7);
    let mut zero_tail = clean.clone();
    zero_tail.resize(clean.len() + 600, 0);
    let mut zeros_then_data = zero_tail.clone();
    zeros_then_data.push(0x42);
    let mut flipped = clean.clone();
    flipped[80] ^= 0x04;
    let decode_seeds = [
        ("clean", clean.clone()),
        ("torn", torn),
        ("zero_tail", zero_tail),
        ("zeros_then_data", zeros_then_data),
        ("flipped", flipped),
        ("spanning", segment(&spanning, plain)),
        (
            "compressed",
            segment(
                &[compressible],
                Compression {
                    threshold: Some(0),
                    level: 1,
                },
            ),
        ),
        ("empty", Vec::new()),
    ];
    write_seeds("wal_decode", &decode_seeds);

    // Generator inputs: count, rotation, compression, then per batch its entries, then the
    // fault kind, victim, offset (3 bytes) and bit/seed.
    let torn_seeds: [(&str, Vec<u8>); 6] = [
        (
            "truncate_last",
            vec![
                5, 3, 0, 2, 1, 4, 9, 3, 2, 2, 5, 1, 0, 0, 1, 0, 0, 1, 0x00, 0x90, 0,
            ],
        ),
        (
            "flip_first",
            vec![
                6, 0, 1, 1, 7, 3, 40, 8, 2, 1, 1, 10, 9, 1, 0, 0, 0, 0x20, 0x01, 0x40, 5,
            ],
        ),
        (
            "zero_sector",
            vec![
                9, 4, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 2, 1, 0, 0x02, 0x10, 0,
            ],
        ),
        (
            "garbage_sector",
            vec![
                9, 4, 1, 3, 1, 2, 200, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 3, 0, 0, 0x01, 0x00, 77,
            ],
        ),
        (
            "spanning_torn",
            vec![
                3, 9, 0, 1, 5, 2, 0xf8, 0x10, 0x00, 7, 1, 0, 1, 1, 0, 0, 0, 0, 0x90, 0x00, 0,
            ],
        ),
        (
            "flip_rotated",
            vec![
                11, 6, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 0, 0x00, 0x33, 2,
            ],
        ),
    ];
    write_seeds("wal_torn_write", &torn_seeds);
}

fn write_seeds(target: &str, seeds: &[(&str, Vec<u8>)]) {
    let dir = corpus(target);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in seeds {
        std::fs::write(dir.join(format!("seed-{name}")), bytes).unwrap();
    }
}
