//! Segment-file benchmarks, each beside a peer measured in the same run (the machine is
//! shared and noisy, so read the ratios):
//!
//! - `sst_build`: build throughput (MB/s of raw key + value bytes) without compression and
//!   with zstd level 3, against `raw_write_fsync`, a buffered sequential write plus fsync of
//!   as many bytes as the uncompressed file has.
//! - `sst_get`: point lookups on a 1 M-entry file (hot page cache), random existing keys and
//!   random missing keys (inside the key range, so only the bloom filter can rule them out),
//!   against a `BTreeMap` and a sorted `Vec` binary search over the same keys in memory.
//! - `sst_scan`: a full scan (MB/s of raw key + value bytes) against iterating the same
//!   entries in a `BTreeMap`.
//!
//! Run: `cargo bench -p memforest-benches --bench sst`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup: a failure aborts the run"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::Write;
use std::path::Path;

use criterion::{criterion_main, BatchSize, Criterion, Throughput};
use memforest_sst::{
    Compression, EntrySource, Kind, ScanOptions, SstBuilder, SstOptions, SstReader, MAX_SEQNO,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Entries per build iteration.
const BUILD_ENTRIES: u64 = 50_000;
/// Entries in the lookup / scan file.
const LOOKUP_ENTRIES: u64 = 1_000_000;
/// Value length in bytes.
const VALUE_LEN: usize = 100;

/// Key `i` (16 bytes). Existing keys are even `i`, missing ones odd.
fn key(i: u64) -> Vec<u8> {
    format!("user{:012}", i).into_bytes()
}

/// Somewhat compressible values: words drawn from a small vocabulary, like agent memory text.
/// `n` entries `(key(2 i), value)`, keys ascending.
fn dataset(n: u64, seed: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let vals = values(n, &mut rng);
    vals.into_iter()
        .enumerate()
        .map(|(i, v)| (key(2 * i as u64), v))
        .collect()
}

fn values(n: u64, rng: &mut StdRng) -> Vec<Vec<u8>> {
    const WORDS: [&str; 16] = [
        "the ",
        "user ",
        "prefers ",
        "tea ",
        "in ",
        "mornings ",
        "and ",
        "works ",
        "on ",
        "rust ",
        "storage ",
        "engines ",
        "at ",
        "night ",
        "with ",
        "music ",
    ];
    (0..n)
        .map(|_| {
            let mut v = Vec::with_capacity(VALUE_LEN);
            while v.len() < VALUE_LEN {
                v.extend_from_slice(WORDS[rng.gen_range(0..WORDS.len())].as_bytes());
            }
            v.truncate(VALUE_LEN);
            v
        })
        .collect()
}

fn build(dir: &Path, id: u64, entries: &[(Vec<u8>, Vec<u8>)], compression: Compression) -> u64 {
    let options = SstOptions {
        compression,
        ..SstOptions::default()
    };
    let mut b = SstBuilder::new(dir, id, options).unwrap();
    for (k, v) in entries {
        b.add(k, 1, Kind::Put, v).unwrap();
    }
    let meta = b.finish().unwrap();
    meta.file_size
}

fn raw_bytes(entries: &[(Vec<u8>, Vec<u8>)]) -> u64 {
    entries
        .iter()
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum()
}

fn bench_build(c: &mut Criterion) {
    let vals = dataset(BUILD_ENTRIES, 1);
    let dir = tempfile::tempdir().unwrap();
    let mut next_id = 0u64;
    let file_size = build(dir.path(), u64::MAX, &vals, Compression::None);
    let mut group = c.benchmark_group("sst_build");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(raw_bytes(&vals)));
    for (name, compression) in [
        ("none", Compression::None),
        ("zstd3", Compression::Zstd { level: 3 }),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    next_id += 1;
                    next_id
                },
                |id| {
                    build(dir.path(), id, &vals, compression);
                    std::fs::remove_file(dir.path().join(memforest_sst::file_name(id))).unwrap();
                },
                BatchSize::PerIteration,
            );
        });
    }
    let chunk = vec![0x5au8; 1 << 20];
    group.bench_function("raw_write_fsync", |b| {
        b.iter(|| {
            let path = dir.path().join("raw.bin");
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            let mut left = usize::try_from(file_size).unwrap();
            while left > 0 {
                let n = left.min(chunk.len());
                f.write_all(&chunk[..n]).unwrap();
                left -= n;
            }
            f.into_inner().unwrap().sync_all().unwrap();
            std::fs::remove_file(&path).unwrap();
        });
    });
    group.finish();
}

struct Fixture {
    _dir: tempfile::TempDir,
    reader: SstReader,
    map: BTreeMap<Vec<u8>, Vec<u8>>,
    sorted: Vec<(Vec<u8>, Vec<u8>)>,
}

fn fixture() -> Fixture {
    let sorted = dataset(LOOKUP_ENTRIES, 2);
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), 1, &sorted, Compression::None);
    let reader = SstReader::open(dir.path().join(memforest_sst::file_name(1))).unwrap();
    let map = sorted.iter().cloned().collect();
    // Warm the page cache.
    black_box(reader.file_crc32().unwrap());
    Fixture {
        _dir: dir,
        reader,
        map,
        sorted,
    }
}

fn random_keys(existing: bool, n: usize) -> Vec<Vec<u8>> {
    let mut rng = StdRng::seed_from_u64(if existing { 3 } else { 4 });
    (0..n)
        .map(|_| {
            let i = rng.gen_range(0..LOOKUP_ENTRIES);
            key(2 * i + u64::from(!existing))
        })
        .collect()
}

/// Runs `lookup` over a cycle of keys, one key per iteration.
fn cycle<'a>(keys: &'a [Vec<u8>]) -> impl FnMut() -> &'a [u8] {
    let mut i = 0;
    move || {
        i = (i + 1) % keys.len();
        &keys[i]
    }
}

fn bench_get_and_scan(c: &mut Criterion) {
    // Built on first use, so a filtered run (`-- sst_build`) skips the 1 M-entry setup.
    let fx = std::cell::OnceCell::new();
    let f = || fx.get_or_init(fixture);
    let existing = random_keys(true, 1 << 16);
    let missing = random_keys(false, 1 << 16);

    let mut group = c.benchmark_group("sst_get");
    group.throughput(Throughput::Elements(1));
    for (name, keys) in [("existing", &existing), ("missing", &missing)] {
        let mut next = cycle(keys);
        group.bench_function(format!("sst_{name}"), |b| {
            let f = f();
            b.iter(|| black_box(f.reader.get(next(), MAX_SEQNO).unwrap()));
        });
        let mut next = cycle(keys);
        group.bench_function(format!("btreemap_{name}"), |b| {
            let f = f();
            b.iter(|| black_box(f.map.get(next())));
        });
        let mut next = cycle(keys);
        group.bench_function(format!("sorted_vec_{name}"), |b| {
            let f = f();
            b.iter(|| {
                let k = next();
                black_box(f.sorted.binary_search_by(|(e, _)| e.as_slice().cmp(k)).ok())
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("sst_scan");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(LOOKUP_ENTRIES * (16 + VALUE_LEN as u64)));
    group.bench_function("sst_full_scan", |b| {
        let f = f();
        b.iter(|| {
            let mut it = f.reader.iter().unwrap();
            let mut n = 0usize;
            while let Some(e) = it.next_entry().unwrap() {
                n += e.value.len();
            }
            black_box(n)
        });
    });
    group.bench_function("sst_snapshot_scan", |b| {
        let f = f();
        b.iter(|| {
            let n: usize = f
                .reader
                .scan(ScanOptions::default())
                .unwrap()
                .map(|e| e.unwrap().value.len())
                .sum();
            black_box(n)
        });
    });
    group.bench_function("btreemap_scan", |b| {
        let f = f();
        b.iter(|| black_box(f.map.values().map(Vec::len).sum::<usize>()));
    });
    group.finish();
}

/// Private, so the generated `pub fn` needs no doc comment.
mod group {
    criterion::criterion_group!(benches, super::bench_build, super::bench_get_and_scan);
}
criterion_main!(group::benches);
