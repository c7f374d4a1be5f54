//! Scoped bloom filters (format version 3): the builder leaves out the keys a scope
//! excludes, and every lookup still finds every key, whichever scope the reader has.
#![allow(clippy::unwrap_used, reason = "tests: a panic is a failed assertion")]

mod common;

use std::sync::Arc;

use common::{build, LeaveOut, Row};
use memforest_sst::{FilterScope, Kind, Lookup, SstOptions, SstReader};

/// The scope of these tests: id `id`, leaving out the scan keys `s/NNNN`.
fn no_scan_keys(id: u32) -> Arc<LeaveOut> {
    LeaveOut::new(id, b"s/")
}

/// 1,000 point keys `p/NNNN` and 3,000 scan keys `s/NNNN`, in key order.
fn rows() -> Vec<Row> {
    let mut rows: Vec<Row> = (0..1_000)
        .map(|i| format!("p/{i:04}"))
        .chain((0..3_000).map(|i| format!("s/{i:04}")))
        .map(|k| Row {
            key: k.into_bytes(),
            seqno: 1,
            kind: Kind::Put,
            value: b"v".to_vec(),
        })
        .collect();
    common::sort_rows(&mut rows);
    rows
}

fn options(version: u32, scope: Option<Arc<LeaveOut>>) -> SstOptions {
    SstOptions {
        format_version: version,
        filter_scope: scope.map(|s| s as Arc<dyn FilterScope>),
        ..SstOptions::default()
    }
}

fn open(dir: &std::path::Path, id: u64, scope: Option<Arc<LeaveOut>>) -> SstReader {
    let path = dir.join(memforest_sst::file_name(id));
    SstReader::open(path)
        .unwrap()
        .with_filter_scope(scope.map(|s| s as Arc<dyn FilterScope>))
}

fn finds_every_key(reader: &SstReader, rows: &[Row]) {
    for r in rows {
        assert!(
            matches!(reader.get(&r.key, 1).unwrap(), Some(Lookup::Put { .. })),
            "{:?} not found",
            String::from_utf8_lossy(&r.key)
        );
    }
    assert_eq!(reader.get(b"p/9999", 1).unwrap(), None);
    assert_eq!(reader.get(b"s/9999", 1).unwrap(), None);
}

#[test]
fn a_scoped_filter_holds_only_the_included_keys() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    build(dir.path(), 1, &rows, options(3, None));
    build(dir.path(), 2, &rows, options(3, Some(no_scan_keys(5))));
    let every = open(dir.path(), 1, None).properties().filter_size;
    let scoped = open(dir.path(), 2, None).properties().filter_size;
    // 4,000 keys at 10 bits against 1,000: a quarter of the lines (plus trailers).
    assert!(scoped * 3 < every, "scoped {scoped} B, every key {every} B");
}

#[test]
fn every_key_is_found_under_any_reader_scope() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    build(dir.path(), 1, &rows, options(3, Some(no_scan_keys(5))));
    let same = no_scan_keys(5);
    let other = no_scan_keys(6);
    finds_every_key(&open(dir.path(), 1, Some(Arc::clone(&same))), &rows);
    finds_every_key(&open(dir.path(), 1, Some(Arc::clone(&other))), &rows);
    finds_every_key(&open(dir.path(), 1, None), &rows);
    // The filter is read under the scope that built it, and only under that one.
    assert!(same.asked() >= rows.len());
    assert_eq!(other.asked(), 0);
}

#[test]
fn older_versions_ignore_the_scope_and_filter_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    for (id, version) in [(1, 1), (2, 2)] {
        build(
            dir.path(),
            id,
            &rows,
            options(version, Some(no_scan_keys(5))),
        );
        build(dir.path(), id + 10, &rows, options(version, None));
        assert_eq!(
            open(dir.path(), id, None).properties().filter_size,
            open(dir.path(), id + 10, None).properties().filter_size
        );
        let scope = no_scan_keys(5);
        finds_every_key(&open(dir.path(), id, Some(Arc::clone(&scope))), &rows);
        assert_eq!(scope.asked(), 0, "version {version}");
    }
}
