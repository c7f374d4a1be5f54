//! Builder contract and file lifecycle: out-of-order input, limits, temporary files,
//! metadata, no replacement of finished files, and reads after unlink.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use common::{all_rows, build, Row};
use memforest_sst::{
    file_name, Kind, Lookup, SstBuilder, SstError, SstOptions, SstReader, MAX_SEQNO,
};

fn tmp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn out_of_order_and_duplicate_keys_are_errors_and_leave_no_file() {
    let cases: [&[(&[u8], u64)]; 3] = [
        &[(b"b", 1), (b"a", 2)], // user keys descending
        &[(b"a", 1), (b"a", 2)], // seqnos ascending for one key
        &[(b"a", 5), (b"a", 5)], // duplicate internal key
    ];
    for entries in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut b = SstBuilder::new(dir.path(), 3, SstOptions::default()).unwrap();
        b.add(entries[0].0, entries[0].1, Kind::Put, b"v").unwrap();
        let err = b
            .add(entries[1].0, entries[1].1, Kind::Tombstone, b"")
            .unwrap_err();
        assert!(
            matches!(err, SstError::OutOfOrder { index: 1, .. }),
            "{err}"
        );
        // The builder refuses to go on and cannot produce a file.
        assert!(b.add(b"z", 1, Kind::Put, b"").is_err());
        assert!(b.finish().is_err());
        assert!(
            tmp_files(dir.path()).is_empty(),
            "{:?}",
            tmp_files(dir.path())
        );
    }
}

#[test]
fn limits_and_empty_input_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SstBuilder::new(dir.path(), 1, SstOptions::default()).unwrap();
    assert!(matches!(
        b.add(b"k", MAX_SEQNO + 1, Kind::Put, b""),
        Err(SstError::InvalidInput { .. })
    ));
    let mut b = SstBuilder::new(dir.path(), 2, SstOptions::default()).unwrap();
    let long_key = vec![0u8; memforest_sst::MAX_KEY_LEN + 1];
    assert!(matches!(
        b.add(&long_key, 1, Kind::Put, b""),
        Err(SstError::InvalidInput { .. })
    ));
    let b = SstBuilder::new(dir.path(), 3, SstOptions::default()).unwrap();
    assert!(matches!(b.finish(), Err(SstError::InvalidInput { .. })));
    for format_version in [0, memforest_sst::FORMAT_VERSION + 1] {
        let options = SstOptions {
            format_version,
            ..SstOptions::default()
        };
        assert!(matches!(
            SstBuilder::new(dir.path(), 5, options),
            Err(SstError::InvalidInput { .. })
        ));
    }
    // Dropping an unfinished builder removes its temporary file.
    let mut b = SstBuilder::new(dir.path(), 4, SstOptions::default()).unwrap();
    b.add(b"k", 1, Kind::Put, b"v").unwrap();
    assert_eq!(tmp_files(dir.path()), vec![format!("{}.tmp", file_name(4))]);
    drop(b);
    assert!(tmp_files(dir.path()).is_empty());
}

#[test]
fn metadata_describes_the_file_and_finished_files_are_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let rows = vec![
        Row {
            key: b"apple".to_vec(),
            seqno: 9,
            kind: Kind::Put,
            value: b"red".to_vec(),
        },
        Row {
            key: b"apple".to_vec(),
            seqno: 4,
            kind: Kind::Tombstone,
            value: Vec::new(),
        },
        Row {
            key: b"pear".to_vec(),
            seqno: 7,
            kind: Kind::Put,
            value: Vec::new(),
        },
    ];
    let meta = build(dir.path(), 42, &rows, SstOptions::default());
    let bytes = std::fs::read(&meta.path).unwrap();
    assert_eq!(meta.path, dir.path().join("00000000000000000042.sst"));
    assert_eq!(meta.file_size, bytes.len() as u64);
    assert_eq!(meta.file_crc32, memforest_codec::checksum::crc32(&bytes));
    assert_eq!(
        (&meta.smallest_user_key[..], &meta.largest_user_key[..]),
        (&b"apple"[..], &b"pear"[..])
    );
    assert_eq!(
        (
            meta.min_seqno,
            meta.max_seqno,
            meta.entry_count,
            meta.tombstone_count
        ),
        (4, 9, 3, 1)
    );
    let reader = SstReader::open(&meta.path).unwrap();
    let p = reader.properties();
    assert_eq!(
        (p.entry_count, p.tombstone_count, p.min_seqno, p.max_seqno),
        (3, 1, 4, 9)
    );
    assert_eq!((p.raw_key_bytes, p.raw_value_bytes), (14, 3));
    assert_eq!(p.data_block_count, 1);
    assert!(p.data_size + p.filter_size + p.index_size < meta.file_size);
    assert!(p.creation_time_unix_s > 1_600_000_000);

    // Building the same id again fails and leaves the first file intact.
    let mut b = SstBuilder::new(dir.path(), 42, SstOptions::default()).unwrap();
    b.add(b"x", 1, Kind::Put, b"y").unwrap();
    assert!(matches!(b.finish(), Err(SstError::InvalidInput { .. })));
    assert_eq!(std::fs::read(&meta.path).unwrap(), bytes);
    assert_eq!(tmp_files(dir.path()).len(), 1);
}

#[test]
fn an_unlinked_file_stays_readable_through_live_readers_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Row> = (0..2000u64)
        .map(|i| Row {
            key: format!("k{i:05}").into_bytes(),
            seqno: 1,
            kind: Kind::Put,
            value: format!("v{i}").into_bytes(),
        })
        .collect();
    let meta = build(dir.path(), 1, &rows, SstOptions::default());
    let reader = SstReader::open(&meta.path).unwrap();
    let Some(Lookup::Put { value, .. }) = reader.get(b"k00007", 5).unwrap() else {
        panic!("missing")
    };
    let mut iter = reader.iter().unwrap();
    // The engine's deletion: drop the file from the version, unlink it.
    std::fs::remove_file(&meta.path).unwrap();
    assert!(SstReader::open(&meta.path).is_err());
    assert_eq!(common::drain(&mut iter).unwrap(), rows);
    assert_eq!(all_rows(&reader).unwrap(), rows);
    drop(reader);
    drop(iter);
    // A value outlives the reader and iterators: it owns a share of the mapping.
    assert_eq!(&value[..], b"v7");
}

#[test]
fn readers_are_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SstReader>();
    fn send<T: Send>() {}
    send::<memforest_sst::SstIterator>();
    send::<memforest_sst::MergeIterator>();

    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Row> = (0..500u64)
        .map(|i| Row {
            key: format!("k{i:04}").into_bytes(),
            seqno: i + 1,
            kind: Kind::Put,
            value: i.to_le_bytes().to_vec(),
        })
        .collect();
    let meta = build(
        dir.path(),
        1,
        &rows,
        SstOptions {
            block_size: 256,
            max_single_level_index_size: 0,
            index_partition_size: 64,
            ..SstOptions::default()
        },
    );
    let reader = SstReader::open(&meta.path).unwrap();
    std::thread::scope(|s| {
        for t in 0..4usize {
            let reader = reader.clone();
            let rows = &rows;
            s.spawn(move || {
                for r in rows.iter().skip(t).step_by(4) {
                    let got = reader.get(&r.key, MAX_SEQNO).unwrap();
                    assert_eq!(
                        got,
                        Some(Lookup::Put {
                            value: r.value.clone().into(),
                            seqno: r.seqno
                        })
                    );
                }
            });
        }
    });
}

/// `in_use` counts reader clones and iterators, not the index partitions a lookup loaded
/// into the reader itself, and clears when they are gone.
#[test]
fn in_use_counts_clones_and_iterators_only_while_they_live() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<Row> = (0..5000u32)
        .map(|i| Row {
            key: format!("k{i:06}").into_bytes(),
            seqno: 1,
            kind: Kind::Put,
            value: vec![b'v'; 64],
        })
        .collect();
    let options = SstOptions {
        index_partition_size: 256,
        max_single_level_index_size: 256,
        ..SstOptions::default()
    };
    let meta = build(dir.path(), 1, &rows, options);
    let reader = SstReader::open(&meta.path).unwrap();
    assert!(!reader.in_use());
    // Lookups load index partitions into the reader: still only its own handles.
    for i in (0..5000u32).step_by(97) {
        let key = format!("k{i:06}");
        assert!(reader.get(key.as_bytes(), MAX_SEQNO).unwrap().is_some());
    }
    assert!(!reader.in_use());
    let clone = reader.clone();
    assert!(reader.in_use());
    drop(clone);
    assert!(!reader.in_use());
    let it = reader.iter().unwrap();
    assert!(reader.in_use());
    drop(it);
    assert!(!reader.in_use());
}
