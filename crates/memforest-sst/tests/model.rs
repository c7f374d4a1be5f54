//! Model test: files, in-memory runs and merges of them against a `BTreeMap` model, at
//! random snapshots, with many versions per key, tombstones, empty values, values larger
//! than a block and a few 1 MiB values, under random block / index / compression options.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use bytes::Bytes;
use common::{all_rows, build, sort_rows, LeaveOut, Row};
use memforest_sst::{
    BoxedSource, Compression, CursorMerge, Entry, EntryCursor, EntrySource, FilterScope, Kind,
    Lookup, MergeIterator, ScanOptions, SortedRun, SstOptions, SstReader, FORMAT_VERSION,
    MAX_SEQNO, MIN_FORMAT_VERSION,
};
use proptest::prelude::*;

type Model = BTreeMap<(Vec<u8>, Reverse<u64>), (Kind, Vec<u8>)>;

/// The keys the generator draws from, plus keys it never uses (for missing lookups).
fn universe() -> Vec<Vec<u8>> {
    let mut keys = vec![Vec::new()];
    for a in b"abcd" {
        keys.push(vec![*a]);
        for b in b"abcd" {
            keys.push(vec![*a, *b]);
        }
    }
    keys.push(b"zz-missing".to_vec());
    keys
}

fn value_for(seqno: u64, len: usize) -> Vec<u8> {
    let start = seqno.wrapping_mul(31).to_le_bytes()[0];
    (0..len)
        .map(|i| start.wrapping_add(i.to_le_bytes()[0]))
        .collect()
}

fn len_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![
        20 => Just(0usize),
        60 => 1usize..64,
        12 => 4_097usize..9_000,
        1 => Just(1usize << 20),
    ]
}

fn rows_strategy() -> impl Strategy<Value = Vec<Row>> {
    let key = proptest::collection::vec(proptest::sample::select(b"abcd".to_vec()), 0..3);
    proptest::collection::vec((key, any::<bool>(), len_strategy(), 0usize..3), 1..120).prop_map(
        |raw| {
            // Unique seqnos: position in the generated list (the input order is the write
            // order), offset so seqno 0 and large values both appear.
            let mut rows: Vec<Row> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (key, put, len, _))| {
                    let seqno = i as u64 * 3 + 1;
                    let kind = if put { Kind::Put } else { Kind::Tombstone };
                    let value = if put {
                        value_for(seqno, len)
                    } else {
                        Vec::new()
                    };
                    Row {
                        key,
                        seqno,
                        kind,
                        value,
                    }
                })
                .collect();
            sort_rows(&mut rows);
            rows
        },
    )
}

fn options_strategy() -> impl Strategy<Value = SstOptions> {
    (
        prop_oneof![Just(64usize), Just(256), Just(4096)],
        1usize..17,
        prop_oneof![
            Just(Compression::None),
            Just(Compression::Zstd { level: 1 })
        ],
        prop_oneof![Just(0usize), Just(64 << 10)],
        prop_oneof![Just(32usize), Just(256)],
        MIN_FORMAT_VERSION..=FORMAT_VERSION,
        any::<bool>(),
    )
        .prop_map(
            |(
                block_size,
                restart_interval,
                compression,
                max_single,
                partition,
                version,
                scoped,
            )| {
                SstOptions {
                    block_size,
                    restart_interval,
                    compression,
                    bloom_bits_per_key: 10,
                    index_partition_size: partition,
                    max_single_level_index_size: max_single,
                    format_version: version,
                    filter_scope: scoped.then(|| LeaveOut::new(1, b"b") as Arc<dyn FilterScope>),
                }
            },
        )
}

fn model_of(rows: &[Row]) -> Model {
    rows.iter()
        .map(|r| ((r.key.clone(), Reverse(r.seqno)), (r.kind, r.value.clone())))
        .collect()
}

/// Newest version of `key` with seqno <= snap.
fn model_get(model: &Model, key: &[u8], snap: u64) -> Option<Lookup> {
    model
        .range((key.to_vec(), Reverse(snap))..=(key.to_vec(), Reverse(0)))
        .next()
        .map(|((_, Reverse(seqno)), (kind, value))| match kind {
            Kind::Put => Lookup::Put {
                value: Bytes::from(value.clone()),
                seqno: *seqno,
            },
            Kind::Tombstone => Lookup::Tombstone { seqno: *seqno },
        })
}

/// What a scan must yield: newest visible version per key, within bounds.
fn model_scan(
    model: &Model,
    snap: u64,
    drop_tombstones: bool,
    lower: &Bound<Bytes>,
    upper: &Bound<Bytes>,
) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut decided: Option<&[u8]> = None;
    for ((key, Reverse(seqno)), (kind, value)) in model {
        let bounds: (Bound<&[u8]>, Bound<&[u8]>) = (
            lower.as_ref().map(|b| &b[..]),
            upper.as_ref().map(|b| &b[..]),
        );
        let in_range = RangeBounds::<&[u8]>::contains(&bounds, &key.as_slice());
        if *seqno > snap || decided == Some(key.as_slice()) || !in_range {
            continue;
        }
        decided = Some(key);
        if *kind == Kind::Tombstone && drop_tombstones {
            continue;
        }
        out.push(Row {
            key: key.clone(),
            seqno: *seqno,
            kind: *kind,
            value: value.clone(),
        });
    }
    out
}

fn rows_of(it: impl Iterator<Item = memforest_sst::Result<Entry>>) -> Vec<Row> {
    it.map(|e| Row::from_entry(&e.unwrap())).collect()
}

fn bound_strategy() -> impl Strategy<Value = Bound<Bytes>> {
    let key = proptest::sample::select(universe()).prop_map(Bytes::from);
    prop_oneof![
        Just(Bound::Unbounded),
        key.clone().prop_map(Bound::Included),
        key.prop_map(Bound::Excluded),
    ]
}

/// `rows` dealt into three parts, row `i` into part `parts[i % parts.len()]` (each 0..3).
fn split_rows(rows: &[Row], parts: &[usize]) -> [Vec<Row>; 3] {
    let mut split: [Vec<Row>; 3] = Default::default();
    for (i, row) in rows.iter().enumerate() {
        split[parts[i % parts.len()]].push(row.clone());
    }
    split
}

fn snapshots(rows: &[Row], picks: &[usize]) -> Vec<u64> {
    let max = rows.len() as u64 * 3 + 2;
    let mut snaps = vec![0, MAX_SEQNO, u64::MAX];
    snaps.extend(picks.iter().map(|p| *p as u64 % max));
    snaps
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn one_file_matches_the_model(
        rows in rows_strategy(),
        options in options_strategy(),
        picks in proptest::collection::vec(any::<usize>(), 3),
        lower in bound_strategy(),
        upper in bound_strategy(),
        drop_tombstones: bool,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let meta = build(dir.path(), 7, &rows, options);
        let model = model_of(&rows);
        let reader = SstReader::open(&meta.path)
            .unwrap()
            .with_filter_scope(Some(LeaveOut::new(1, b"b")));
        prop_assert_eq!(meta.entry_count, rows.len() as u64);
        prop_assert_eq!(reader.file_crc32().unwrap(), meta.file_crc32);
        prop_assert_eq!(reader.properties().entry_count, rows.len() as u64);
        prop_assert_eq!(all_rows(&reader).unwrap(), rows.clone());

        for snap in snapshots(&rows, &picks) {
            for key in universe() {
                prop_assert_eq!(reader.get(&key, snap).unwrap(), model_get(&model, &key, snap),
                    "get {:?} at {}", key, snap);
            }
            let options = ScanOptions { snapshot_seqno: snap, drop_tombstones, lower: lower.clone(), upper: upper.clone() };
            let want = model_scan(&model, snap, drop_tombstones, &lower, &upper);
            let mut scan = reader.scan(options).unwrap();
            prop_assert_eq!(rows_of(&mut scan), want.clone());
            // Seek to every key: the scan resumes at the first visible key >= it.
            for key in universe() {
                scan.seek(&key).unwrap();
                let got = scan.next().transpose().unwrap().map(|e| Row::from_entry(&e));
                let expect = want.iter().find(|r| r.key >= key).cloned();
                prop_assert_eq!(got, expect, "seek {:?} at {}", key, snap);
            }
        }
    }

    #[test]
    fn merge_of_files_and_a_run_matches_the_model(
        rows in rows_strategy(),
        options in options_strategy(),
        parts in proptest::collection::vec(0usize..3, 120),
        picks in proptest::collection::vec(any::<usize>(), 3),
        lower in bound_strategy(),
        upper in bound_strategy(),
        drop_tombstones: bool,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let split = split_rows(&rows, &parts);
        let mut readers = Vec::new();
        for (id, part) in split[..2].iter().enumerate() {
            if !part.is_empty() {
                let meta = build(dir.path(), id as u64, part, options.clone());
                readers.push(SstReader::open(&meta.path).unwrap());
            }
        }
        let run = SortedRun::new(split[2].iter().map(|r| Entry {
            user_key: Bytes::from(r.key.clone()),
            seqno: r.seqno,
            kind: r.kind,
            value: Bytes::from(r.value.clone()),
        }).collect()).unwrap();
        let sources = || -> Vec<BoxedSource> {
            let mut s: Vec<BoxedSource> = vec![Box::new(run.clone())];
            s.extend(readers.iter().map(|r| Box::new(r.iter().unwrap()) as BoxedSource));
            s
        };
        let model = model_of(&rows);
        // The raw merge yields every entry in internal-key order.
        let mut raw = MergeIterator::new(sources()).unwrap();
        prop_assert_eq!(common::drain(&mut raw).unwrap(), rows.clone());
        for snap in snapshots(&rows, &picks) {
            let options = ScanOptions { snapshot_seqno: snap, drop_tombstones, lower: lower.clone(), upper: upper.clone() };
            let want = model_scan(&model, snap, drop_tombstones, &lower, &upper);
            let mut scan = MergeIterator::scan(sources(), options).unwrap();
            prop_assert_eq!(rows_of(&mut scan), want.clone());
            for key in universe() {
                scan.seek(&key).unwrap();
                let got = scan.next().transpose().unwrap().map(|e| Row::from_entry(&e));
                prop_assert_eq!(got, want.iter().find(|r| r.key >= key).cloned());
            }
        }
        // Raw seek lands on the newest version at or below the snapshot.
        let mut raw = MergeIterator::new(sources()).unwrap();
        for key in universe() {
            raw.seek(&key, 10).unwrap();
            let got = raw.next_entry().unwrap().map(|e| Row::from_entry(&e));
            let want = model
                .range((key.clone(), Reverse(10))..)
                .next()
                .map(|((k, Reverse(s)), (kind, v))| Row { key: k.clone(), seqno: *s, kind: *kind, value: v.clone() });
            prop_assert_eq!(got, want);
        }
    }

    /// The lending merge compaction runs yields every entry of its files in internal-key
    /// order; a peek does not move a cursor, and an
    /// `SstIterator` stepped by `skip` or by `next_entry` (chosen per entry) moves the same.
    #[test]
    fn cursor_merge_of_files_matches_the_model(
        rows in rows_strategy(),
        options in options_strategy(),
        parts in proptest::collection::vec(0usize..3, 120),
        steps in proptest::collection::vec(any::<bool>(), 64),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let split = split_rows(&rows, &parts);
        let readers: Vec<SstReader> = split
            .iter()
            .enumerate()
            .filter(|(_, part)| !part.is_empty())
            .map(|(id, part)| SstReader::open(&build(dir.path(), id as u64, part, options.clone()).path).unwrap())
            .collect();
        let mut merge = CursorMerge::new(readers.iter().map(|r| r.iter().unwrap()).collect()).unwrap();
        let mut merged = Vec::new();
        while let Some(e) = merge.peek().unwrap() {
            let row = Row::from_ref(&e);
            prop_assert_eq!(merge.peek().unwrap().map(|again| again.seqno), Some(row.seqno));
            merged.push(row);
            merge.skip().unwrap();
        }
        prop_assert_eq!(merged, rows.clone());
        for (reader, part) in readers.iter().zip(split.iter().filter(|p| !p.is_empty())) {
            let mut it = reader.iter().unwrap();
            let mut seen = Vec::new();
            for i in 0.. {
                let Some(e) = it.peek().unwrap() else { break };
                let row = Row::from_ref(&e);
                if steps[i % steps.len()] {
                    it.skip().unwrap();
                } else {
                    prop_assert_eq!(it.next_entry().unwrap().map(|e| Row::from_entry(&e)), Some(row.clone()));
                }
                seen.push(row);
            }
            prop_assert_eq!(&seen, part);
            prop_assert!(it.next_entry().unwrap().is_none());
        }
    }
}
