//! Damaged `CURRENT`, manifest or segment files make open (or the read that meets the
//! damage) fail with an error naming the file and the byte offset.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "test code"
)]

use std::fs;
use std::path::{Path, PathBuf};

use memforest_engine::{Db, Durability, Error, Options, Table, TenantId};
use memforest_sst::SstError;

fn populated() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let t = TenantId::new("t").unwrap();
    for i in 0..200u32 {
        db.put(
            &t,
            Table::new(3),
            &i.to_be_bytes(),
            &[7u8; 100],
            Durability::Buffered,
        )
        .unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    dir
}

fn find(dir: &Path, pred: impl Fn(&str) -> bool) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| pred(p.file_name().unwrap().to_str().unwrap()))
        .unwrap()
}

fn flip(path: &Path, offset: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset] ^= 0x5A;
    fs::write(path, bytes).unwrap();
}

#[test]
fn corrupt_current_names_file_and_offset() {
    let dir = populated();
    let current = dir.path().join("CURRENT");
    flip(&current, 3);
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Corrupt { path, offset, .. }) => {
            assert_eq!(path, current);
            assert_eq!(offset, 16, "the CRC after the 15-byte name and newline");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn corrupt_manifest_names_file_and_offset() {
    let dir = populated();
    let manifest = find(dir.path(), |n| n.starts_with("MANIFEST-"));
    flip(&manifest, 40);
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Corrupt {
            path,
            offset,
            reason,
        }) => {
            assert_eq!(path, manifest);
            assert_eq!(offset, 0, "the first record starts at 0: {reason}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn corrupt_segment_footer_fails_open_naming_file_and_offset() {
    let dir = populated();
    let sst = find(dir.path(), |n| n.ends_with(".sst"));
    let len = fs::metadata(&sst).unwrap().len() as usize;
    flip(&sst, len - 3);
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Sst(SstError::Corrupt { path, offset, .. })) => {
            assert_eq!(path, sst);
            assert!(
                offset as usize >= len - 64 && (offset as usize) < len,
                "{offset}"
            );
        }
        other => panic!("expected a segment corruption, got {other:?}"),
    }
}

/// Opens the database and reads every key.
fn open_and_read_all(dir: &Path) -> Result<usize, Error> {
    let db = Db::open(dir, Options::default())?;
    let t = TenantId::new("t").unwrap();
    let scan = db.scan(
        &t,
        Table::new(3),
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        None,
    )?;
    Ok(scan.collect::<Result<Vec<_>, _>>()?.len())
}

#[test]
fn corrupt_segment_data_block_fails_open_or_the_read_naming_file_and_offset() {
    let dir = populated();
    let sst = find(dir.path(), |n| n.ends_with(".sst"));
    assert_eq!(open_and_read_all(dir.path()).unwrap(), 200);
    flip(&sst, 100);
    // Whether the segment reader verifies data blocks at open or when they are loaded,
    // the error names the file and an offset in the damaged first block.
    match open_and_read_all(dir.path()) {
        Err(Error::Sst(SstError::Corrupt { path, offset, .. })) => {
            assert_eq!(path, sst);
            // The first data block (about 4 KiB) holds byte 100; its trailer's CRC is where
            // the mismatch is detected.
            assert!(offset < 8192, "{offset}");
        }
        other => panic!("expected a segment corruption, got {other:?}"),
    }
}

/// A listed segment file that is gone, or replaced by a file of another length, refuses
/// every open naming it; repair then rebuilds the store from what is left and reports the
/// lost file instead of passing over it.
#[test]
fn a_missing_or_replaced_segment_refuses_to_open_and_repair_reports_it_lost() {
    let dir = populated();
    let sst = find(dir.path(), |n| n.ends_with(".sst"));
    let bytes = fs::read(&sst).unwrap();
    let refused = |why: &str| {
        for read_only in [false, true] {
            let opened = if read_only {
                Db::open_read_only(dir.path(), Options::default())
            } else {
                Db::open(dir.path(), Options::default())
            };
            match opened {
                Err(Error::Corrupt { path, reason, .. }) => {
                    assert_eq!(path, sst);
                    assert!(reason.contains(why), "{reason}");
                }
                other => panic!("expected Corrupt naming the file, got {other:?}"),
            }
        }
    };
    fs::write(&sst, &bytes[..bytes.len() / 2]).unwrap();
    refused(&format!("the manifest records {}", bytes.len()));
    fs::remove_file(&sst).unwrap();
    refused("listed in the manifest is missing");

    let report = Db::repair(dir.path(), Options::default()).unwrap();
    let name = sst.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(report.segments_lost, [name]);
    Db::open(dir.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
}
