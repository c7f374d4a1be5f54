//! Runs the `manifest_replay` fuzz check (`fuzz/checks/manifest_replay.rs`) over its seed
//! corpus, so CI exercises it on every run. `regenerate_seed_corpus` (ignored) rewrites the
//! seeds from real databases:
//! `cargo test -p memforest-engine --test fuzz_corpus -- --ignored`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

#[path = "../../../fuzz/checks/manifest_replay.rs"]
mod manifest_replay;

use std::path::{Path, PathBuf};

use memforest_engine::manifest::{current_contents, encode_record, Edit};
use memforest_engine::version::SegmentInfo;
use memforest_engine::{Db, Durability, Options, Table, TenantId};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/manifest_replay")
}

#[test]
fn manifest_replay_seeds() {
    let mut n = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        manifest_replay::check(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 5, "only {n} seeds");
}

/// A manifest of a database that flushed and compacted, read back with log number 1.
fn real_manifest() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_size: 4 << 10,
        l0_compaction_trigger: 2,
        ..Options::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    let t = TenantId::new("seed").unwrap();
    for i in 0..300u32 {
        db.put(
            &t,
            Table::new(3),
            &i.to_be_bytes(),
            &[1; 40],
            Durability::Buffered,
        )
        .unwrap();
    }
    db.compact_all().unwrap();
    drop(db);
    let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
    let name = current.lines().next().unwrap();
    std::fs::read(dir.path().join(name)).unwrap()
}

#[test]
#[ignore = "rewrites fuzz/corpus/manifest_replay"]
fn regenerate_seed_corpus() {
    let dir = corpus();
    std::fs::create_dir_all(&dir).unwrap();
    let seg = SegmentInfo {
        id: 3,
        file_size: 100,
        smallest: b"a".to_vec(),
        largest: b"z".to_vec(),
        min_seqno: 1,
        max_seqno: 9,
        entry_count: 9,
    };
    let mut writer = memforest_wal::LogWriter::new(Vec::new(), 1);
    let records = [
        vec![Edit::NewSegment {
            level: 0,
            segment: seg.clone(),
        }],
        vec![
            Edit::Compaction {
                inputs: vec![3],
                outputs: vec![(
                    1,
                    SegmentInfo {
                        id: 4,
                        ..seg.clone()
                    },
                )],
            },
            Edit::WalObsolete { up_to: 9 },
        ],
        vec![
            Edit::DeleteSegment { id: 4 },
            Edit::NextIds { next_file_id: 10 },
        ],
    ];
    for r in &records {
        writer.add_record(&encode_record(r).unwrap()).unwrap();
    }
    let log = writer.into_inner();
    let mut seeds: Vec<(&str, Vec<u8>)> = vec![
        ("log_three_records", log.clone()),
        ("log_truncated", log[..log.len() - 5].to_vec()),
        ("record_payload", encode_record(&records[1]).unwrap()),
        ("current", current_contents(12).into_bytes()),
        ("empty", Vec::new()),
    ];
    let mut flipped = log;
    flipped[20] ^= 1;
    seeds.push(("log_flipped", flipped));
    // A real manifest's log number is its file id, not 1: re-frame its records as log 1.
    let real = real_manifest();
    let mut reframed = memforest_wal::LogWriter::new(Vec::new(), 1);
    for rec in real_manifest_records(&real) {
        reframed.add_record(&rec).unwrap();
    }
    seeds.push(("real_manifest", reframed.into_inner()));
    for (name, bytes) in seeds {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

/// The record payloads of a real manifest (any log number: the id is in each header).
fn real_manifest_records(data: &[u8]) -> Vec<Vec<u8>> {
    // Header: crc (4) | length (2) | type (1) | log number (8).
    let id = u64::from_le_bytes(data[7..15].try_into().unwrap());
    memforest_wal::LogReader::new(data, id)
        .map(|r| r.unwrap().payload)
        .collect()
}
