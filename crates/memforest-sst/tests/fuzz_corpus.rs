//! Replays the committed seed corpora of this crate's fuzz targets through the same checks
//! the fuzzer runs (`fuzz/checks/`), so every CI run exercises them.
//!
//! Regenerate the seeds (after a format change) with
//! `cargo test -p memforest-sst --test fuzz_corpus -- --ignored regenerate_seeds`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

#[path = "../../../fuzz/checks/sst_block_roundtrip.rs"]
mod sst_block_roundtrip;
#[path = "../../../fuzz/checks/sst_open.rs"]
mod sst_open;

mod common;

use std::path::PathBuf;

use bytes::Bytes;
use common::{build, LeaveOut, Row};
use memforest_sst::{Compression, Kind, SstOptions, SstReader, MIN_FORMAT_VERSION};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn sst_open_seed_corpus() {
    let seeds = corpus("sst_open");
    assert!(seeds.len() >= 4, "seed corpus missing");
    for (path, bytes) in seeds {
        eprintln!("{}", path.display());
        sst_open::check(&bytes);
        // Seeds named *.sst are real files: they must still open and read in full, so the
        // corpus keeps exercising the success paths after format changes.
        if path.extension().is_some_and(|e| e == "sst") {
            let reader = SstReader::from_bytes(path.clone(), Bytes::from(bytes)).unwrap();
            let rows = common::all_rows(&reader).unwrap();
            assert_eq!(rows.len() as u64, reader.properties().entry_count);
        }
    }
}

#[test]
fn sst_block_roundtrip_seed_corpus() {
    let seeds = corpus("sst_block_roundtrip");
    assert!(seeds.len() >= 4, "seed corpus missing");
    for (path, bytes) in seeds {
        eprintln!("{}", path.display());
        sst_block_roundtrip::check(&bytes);
    }
}

fn seed_rows(n: u64, versions: u64) -> Vec<Row> {
    let mut rows = Vec::new();
    for i in 0..n {
        for v in 0..versions {
            let seqno = 100 - v * 10 - i;
            let kind = if (i + v) % 4 == 3 {
                Kind::Tombstone
            } else {
                Kind::Put
            };
            let value = if kind == Kind::Put {
                format!("v{i}.{v}").into_bytes()
            } else {
                Vec::new()
            };
            rows.push(Row {
                key: format!("k{i:02}").into_bytes(),
                seqno,
                kind,
                value,
            });
        }
    }
    rows
}

#[test]
#[ignore = "rewrites fuzz/corpus; run by hand after a format change"]
fn regenerate_seeds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("tiny", seed_rows(1, 1), SstOptions::default()),
        (
            "versions",
            seed_rows(6, 3),
            SstOptions {
                block_size: 64,
                restart_interval: 2,
                ..SstOptions::default()
            },
        ),
        (
            "two_level",
            seed_rows(8, 2),
            SstOptions {
                block_size: 48,
                max_single_level_index_size: 0,
                index_partition_size: 40,
                ..SstOptions::default()
            },
        ),
        (
            "format_v1",
            seed_rows(6, 2),
            SstOptions {
                block_size: 128,
                format_version: MIN_FORMAT_VERSION,
                ..SstOptions::default()
            },
        ),
        (
            "format_v2",
            seed_rows(6, 2),
            SstOptions {
                block_size: 128,
                format_version: 2,
                ..SstOptions::default()
            },
        ),
        (
            "scoped",
            seed_rows(8, 2),
            SstOptions {
                block_size: 96,
                filter_scope: Some(LeaveOut::new(1, b"k05")),
                ..SstOptions::default()
            },
        ),
        (
            "zstd",
            seed_rows(10, 2),
            SstOptions {
                block_size: 256,
                compression: Compression::Zstd { level: 3 },
                ..SstOptions::default()
            },
        ),
    ];
    for (id, (name, rows, options)) in files.into_iter().enumerate() {
        let meta = build(dir.path(), id as u64, &rows, options);
        std::fs::copy(
            &meta.path,
            root.join("sst_open").join(format!("{name}.sst")),
        )
        .unwrap();
    }
    let blocks: [(&str, Vec<u8>); 5] = [
        ("empty", vec![15]),
        ("one", vec![0, 1, 2, b'k', b'v', b'v']),
        ("shared_prefixes", {
            let mut v = vec![3];
            for k in [
                "app", "apple", "applet", "apply", "banana", "band", "bandana",
            ] {
                v.extend([u8::try_from(k.len()).unwrap(), 3]);
                v.extend(k.bytes());
                v.extend(b"val");
            }
            v
        }),
        ("empty_key_and_value", vec![1, 0, 0, 1, 0, b'a']),
        ("raw_block", {
            // A valid raw block image as the decoder sees it: entry (0, 1, 1, "a", "b"),
            // restart array [0], count 1.
            vec![0, 1, 1, b'a', b'b', 0, 0, 0, 0, 1, 0, 0, 0]
        }),
    ];
    for (name, bytes) in blocks {
        std::fs::write(root.join("sst_block_roundtrip").join(name), bytes).unwrap();
    }
}
