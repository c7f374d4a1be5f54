//! Files opened by range (`SstReader::open_ranged`) read exactly what the mapped reader
//! reads, fetch only the blocks a read needs, and fail with typed errors naming the offset
//! when a block does not verify or a read fails.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::{all_rows, build, Row};
use memforest_sst::{
    Compression, Kind, RangeRead, ScanOptions, SstError, SstOptions, SstReader, MAX_SEQNO,
    OPEN_TAIL_LEN,
};

/// A file image read by range, counting what it serves; can be made to fail.
#[derive(Debug)]
struct Counting {
    image: Bytes,
    blocks: AtomicU64,
    once: AtomicU64,
    bytes: AtomicU64,
    fail: AtomicBool,
}

impl Counting {
    fn new(image: Bytes) -> Arc<Self> {
        Arc::new(Self {
            image,
            blocks: AtomicU64::new(0),
            once: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            fail: AtomicBool::new(false),
        })
    }

    fn serve(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        if self.fail.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("injected"));
        }
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
        self.image.read_block(offset, len, false)
    }

    fn counts(&self) -> (u64, u64, u64) {
        (
            self.once.load(Ordering::Relaxed),
            self.blocks.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

impl RangeRead for Counting {
    fn size(&self) -> u64 {
        self.image.len() as u64
    }

    fn read_block(&self, offset: u64, len: usize, _scan: bool) -> std::io::Result<Bytes> {
        self.blocks.fetch_add(1, Ordering::Relaxed);
        self.serve(offset, len)
    }

    fn read_once(&self, offset: u64, len: usize) -> std::io::Result<Bytes> {
        self.once.fetch_add(1, Ordering::Relaxed);
        self.serve(offset, len)
    }
}

/// `n` keys, every third with an older version below, every seventh newest a tombstone.
fn rows(n: u32) -> Vec<Row> {
    let mut rows = Vec::new();
    for i in 0..n {
        let key = format!("key-{i:06}").into_bytes();
        let newest = if i % 7 == 3 {
            (Kind::Tombstone, Vec::new())
        } else {
            (Kind::Put, format!("value {i} ").repeat(12).into_bytes())
        };
        rows.push(Row {
            key: key.clone(),
            seqno: 1_000_000 + u64::from(i),
            kind: newest.0,
            value: newest.1,
        });
        if i % 3 == 0 {
            rows.push(Row {
                key,
                seqno: u64::from(i),
                kind: Kind::Put,
                value: b"old".to_vec(),
            });
        }
    }
    rows
}

/// A mapped reader and a ranged one of the same file, and the ranged one's source.
fn both(rows: &[Row], options: SstOptions) -> (SstReader, SstReader, Arc<Counting>) {
    let dir = tempfile::tempdir().unwrap();
    let meta = build(dir.path(), 1, rows, options);
    let mapped = SstReader::open(&meta.path).unwrap();
    let source = Counting::new(Bytes::from(std::fs::read(&meta.path).unwrap()));
    let ranged = SstReader::open_ranged(PathBuf::from("object/1.sst"), source.clone()).unwrap();
    (mapped, ranged, source)
}

fn two_level(compression: Compression) -> SstOptions {
    SstOptions {
        compression,
        max_single_level_index_size: 512,
        ..SstOptions::default()
    }
}

#[test]
fn a_ranged_reader_reads_what_the_mapped_reader_reads() {
    let rows = rows(6_000);
    for options in [
        SstOptions::default(),
        two_level(Compression::None),
        two_level(Compression::Zstd { level: 3 }),
    ] {
        let (mapped, ranged, _) = both(&rows, options);
        assert_eq!(ranged.file_size(), mapped.file_size());
        assert_eq!(ranged.properties(), mapped.properties());
        assert_eq!(ranged.file_crc32().unwrap(), mapped.file_crc32().unwrap());
        assert_eq!(all_rows(&ranged).unwrap(), all_rows(&mapped).unwrap());
        for r in rows.iter().step_by(5) {
            for snapshot in [MAX_SEQNO, r.seqno, r.seqno.saturating_sub(1)] {
                assert_eq!(
                    ranged.get(&r.key, snapshot).unwrap(),
                    mapped.get(&r.key, snapshot).unwrap()
                );
            }
        }
        assert_eq!(ranged.get(b"key-", MAX_SEQNO).unwrap(), None);
        assert_eq!(ranged.get(b"zzz", MAX_SEQNO).unwrap(), None);
        let scan = || ScanOptions {
            snapshot_seqno: 1_002_000,
            ..ScanOptions::default()
        };
        let mut a = ranged.scan(scan()).unwrap();
        let mut b = mapped.scan(scan()).unwrap();
        a.seek(b"key-001234").unwrap();
        b.seek(b"key-001234").unwrap();
        let a: Vec<_> = a.collect::<Result<_, _>>().unwrap();
        let b: Vec<_> = b.collect::<Result<_, _>>().unwrap();
        assert!(a.len() > 1_000, "{} entries", a.len());
        assert_eq!(a, b);
    }
}

#[test]
fn a_point_read_fetches_only_the_tail_and_its_blocks() {
    let (_, ranged, source) = both(&rows(30_000), two_level(Compression::None));
    let size = ranged.file_size();
    assert!(size > 4 * OPEN_TAIL_LEN, "file of {size} bytes");
    let (once, blocks, opened) = source.counts();
    assert_eq!((once, blocks), (1, 0), "the open reads the tail once");
    assert_eq!(opened, OPEN_TAIL_LEN);

    assert!(ranged.get(b"key-012345", MAX_SEQNO).unwrap().is_some());
    let (_, blocks, read) = source.counts();
    assert_eq!(blocks, 2, "one index partition and one data block");
    assert!(
        read - opened < 16 << 10,
        "{} bytes for one get",
        read - opened
    );
}

#[test]
fn metadata_larger_than_the_tail_takes_a_second_read() {
    let options = SstOptions {
        bloom_bits_per_key: 100,
        ..SstOptions::default()
    };
    let rows = rows(30_000);
    let (mapped, ranged, source) = both(&rows, options);
    assert_eq!(source.counts().0, 2);
    for r in rows.iter().step_by(97) {
        assert_eq!(
            ranged.get(&r.key, MAX_SEQNO).unwrap(),
            mapped.get(&r.key, MAX_SEQNO).unwrap()
        );
    }
}

#[test]
fn a_corrupt_block_or_a_failed_read_names_the_offset() {
    let rows = rows(2_000);
    let dir = tempfile::tempdir().unwrap();
    let meta = build(dir.path(), 1, &rows, SstOptions::default());
    let mut image = std::fs::read(&meta.path).unwrap();
    image[100] ^= 0x40;
    let source = Counting::new(Bytes::from(image));
    let ranged = SstReader::open_ranged(PathBuf::from("object/1.sst"), source.clone()).unwrap();
    match ranged.get(&rows[0].key, MAX_SEQNO) {
        Err(SstError::Corrupt { path, offset, .. }) => {
            assert_eq!(path, PathBuf::from("object/1.sst"));
            assert!(offset < 8192, "offset {offset}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }

    source.fail.store(true, Ordering::Relaxed);
    let last = &rows.last().unwrap().key;
    match ranged.get(last, MAX_SEQNO) {
        Err(SstError::Fetch {
            path, offset, len, ..
        }) => {
            assert_eq!(path, PathBuf::from("object/1.sst"));
            assert!(offset > 0 && len > 0, "{offset} {len}");
        }
        other => panic!("expected Fetch, got {other:?}"),
    }
    source.fail.store(false, Ordering::Relaxed);
    assert!(ranged.get(last, MAX_SEQNO).unwrap().is_some());

    source.fail.store(true, Ordering::Relaxed);
    assert!(matches!(
        SstReader::open_ranged(PathBuf::from("object/1.sst"), source.clone()),
        Err(SstError::Fetch { offset: 0, .. })
    ));
}
