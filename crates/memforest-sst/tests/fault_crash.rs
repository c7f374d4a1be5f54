//! Segment files under injected crashes and I/O errors (`memforest_io::FaultStorage`):
//! a crash after any sync point or write never leaves a damaged file under a final name,
//! every file whose `finish` returned is durable and whole, and an ENOSPC/EIO at any
//! operation of a build fails that build cleanly without touching finished files.
//!
//! Long run (more seeds per crash point): `MEMFOREST_FAULT_SEEDS=200 cargo test --release
//! -p memforest-sst --test fault_crash -- --nocapture`.
#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    reason = "test code; sizes are small"
)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::{all_rows, Row};
use memforest_io::{CrashMode, Errno, Fault, FaultStorage, OpKind, Storage};
use memforest_sst::{Compression, Kind, SstBuilder, SstOptions, SstReader};

const DIR: &str = "/db/sst";
const TABLES: u64 = 4;

/// Rows of table `id`: a few hundred entries, some values spanning several blocks.
fn rows(id: u64) -> Vec<Row> {
    (0..150u64)
        .map(|i| Row {
            key: format!("t{id}-k{i:05}").into_bytes(),
            seqno: id * 1000 + i,
            kind: if i % 17 == 0 {
                Kind::Tombstone
            } else {
                Kind::Put
            },
            value: vec![(id + i) as u8; value_len(id, i)],
        })
        .collect()
}

/// Table 3 (uncompressed) is about 3 MiB, so it reaches the file in several writes (the builder
/// buffers 1 MiB) and a crash can tear it part-way; the others fit in one write.
fn value_len(id: u64, i: u64) -> usize {
    match (id == 3, i % 50 == 7) {
        (true, _) if i % 2 == 0 => 40_000,
        (_, true) => 9000,
        _ => (i % 40) as usize,
    }
}

fn options(id: u64) -> SstOptions {
    SstOptions {
        compression: if id % 2 == 0 {
            Compression::Zstd { level: 1 }
        } else {
            Compression::None
        },
        ..SstOptions::default()
    }
}

fn build(fs: &FaultStorage, id: u64) -> memforest_sst::Result<()> {
    let storage: Arc<dyn Storage> = Arc::new(fs.clone());
    let mut b = SstBuilder::new_with(storage, Path::new(DIR), id, options(id))?;
    for r in rows(id) {
        b.add(&r.key, r.seqno, r.kind, &r.value)?;
    }
    b.finish().map(drop)
}

/// Builds the tables in turn until one fails; returns the ids whose `finish` returned Ok.
fn run(fs: &FaultStorage) -> Vec<u64> {
    let mut finished = Vec::new();
    if fs.create_dir_all(Path::new(DIR)).is_err() {
        return finished;
    }
    for id in 1..=TABLES {
        if build(fs, id).is_err() {
            break;
        }
        finished.push(id);
    }
    finished
}

/// Every `.sst` file in the directory opens, verifies and holds exactly its rows; every
/// finished id has one. Returns the ids found.
fn check(fs: &FaultStorage, finished: &[u64], what: &str) -> Vec<u64> {
    let mut found = BTreeMap::new();
    let names = if fs.exists(Path::new(DIR)) {
        fs.list_dir(Path::new(DIR)).unwrap()
    } else {
        Vec::new()
    };
    for name in names {
        let Some(id) = name
            .strip_suffix(".sst")
            .and_then(|d| d.parse::<u64>().ok())
        else {
            continue;
        };
        let path = Path::new(DIR).join(&name);
        let reader = SstReader::open_with(fs, &path)
            .unwrap_or_else(|e| unreachable!("{what}: {name} does not open: {e}"));
        assert!(
            all_rows(&reader).unwrap() == rows(id),
            "{what}: {name} rows differ"
        );
        found.insert(id, ());
    }
    for id in finished {
        assert!(found.contains_key(id), "{what}: finished table {id} lost");
    }
    found.into_keys().collect()
}

/// Seeds per crash point: `MEMFOREST_FAULT_SEEDS`, default 1.
fn seeds() -> u64 {
    std::env::var("MEMFOREST_FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn crash_at_every(kinds: &[OpKind]) -> usize {
    let probe = FaultStorage::new(0);
    assert_eq!(run(&probe).len() as u64, TABLES);
    let points = probe.total(kinds);
    let mut crashes = 0;
    for n in 0..=points {
        for seed in 0..seeds() {
            for mode in CrashMode::ALL {
                let fs = FaultStorage::new((seed << 32) + (n << 2) + mode as u64);
                fs.halt_after(kinds, n);
                let finished = run(&fs);
                fs.crash(mode);
                let what = format!("crash after {kinds:?} #{n}, seed {seed}, {mode:?}");
                check(&fs, &finished, &what);
                crashes += 1;
            }
        }
    }
    eprintln!("{kinds:?}: {crashes} crashes, every finished file whole");
    crashes
}

#[test]
fn a_crash_at_any_sync_point_leaves_only_whole_files_under_final_names() {
    assert!(crash_at_every(&[OpKind::Sync, OpKind::SyncDir, OpKind::Rename]) >= 36);
}

#[test]
fn a_crash_at_any_write_leaves_only_whole_files_under_final_names() {
    assert!(crash_at_every(&[OpKind::Write]) >= 3 * TABLES as usize);
}

#[test]
fn enospc_or_eio_at_any_operation_fails_only_that_build() {
    let kinds = [
        (OpKind::Open, Errno::NoSpace),
        (OpKind::Write, Errno::NoSpace),
        (OpKind::Sync, Errno::Io),
        (OpKind::Rename, Errno::Io),
        (OpKind::SyncDir, Errno::Io),
    ];
    let probe = FaultStorage::new(0);
    run(&probe);
    for (kind, errno) in kinds {
        for nth in 1..=probe.total(&[kind]) {
            let fs = FaultStorage::new(nth);
            fs.create_dir_all(Path::new(DIR)).unwrap();
            fs.inject(Fault::once(kind, nth, errno));
            let results: Vec<bool> = (1..=TABLES).map(|id| build(&fs, id).is_ok()).collect();
            let what = format!("{kind:?} #{nth} fails with {errno:?}");
            assert_eq!(results.iter().filter(|ok| !**ok).count(), 1, "{what}");
            let finished: Vec<u64> = (1..=TABLES)
                .filter(|&id| results[id as usize - 1])
                .collect();
            let found = check(&fs, &finished, &what);
            // A failed build leaves at most a whole file (a directory sync failed after the
            // rename) and never a temporary file.
            assert!(found.len() as u64 >= TABLES - 1, "{what}");
            let names = fs.list_dir(Path::new(DIR)).unwrap();
            assert!(
                !names.iter().any(|n| n.ends_with(".tmp")),
                "{what}: {names:?}"
            );
        }
    }
}
