//! Corruption sweep: flip each byte of small files in turn, then open and read everything.
//! Every byte of a file is covered by a block CRC or the footer's (CRC-32 catches every
//! error burst of up to 32 bits, so a flipped byte never verifies), so every single flip
//! must end in a typed `Corrupt` error naming the file: never a panic, never wrong data.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a panic is a failed assertion"
)]

mod common;

use std::path::Path;

use common::{all_rows, build, Row};
use memforest_codec::checksum::masked_crc32;
use memforest_sst::footer::FOOTER_LEN;
use memforest_sst::{
    Compression, Kind, Lookup, SstError, SstOptions, SstReader, MAX_SEQNO, MIN_FORMAT_VERSION,
};

fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for i in 0..24u64 {
        let key = format!("key-{:02}", i / 2).into_bytes();
        let seqno = 100 - i;
        let kind = if i % 5 == 3 {
            Kind::Tombstone
        } else {
            Kind::Put
        };
        let value = if kind == Kind::Put {
            format!("value {i} ").repeat(3).into_bytes()
        } else {
            Vec::new()
        };
        rows.push(Row {
            key,
            seqno,
            kind,
            value,
        });
    }
    rows
}

/// Opens the file and reads it every way a client can: raw iteration, and point lookups of
/// every key (and a missing one) at the newest snapshot and at each entry's seqno.
fn read_everything(
    path: &Path,
    rows: &[Row],
) -> memforest_sst::Result<(Vec<Row>, Vec<Option<Lookup>>)> {
    let reader = SstReader::open(path)?;
    let all = all_rows(&reader)?;
    let mut lookups = Vec::new();
    for r in rows {
        lookups.push(reader.get(&r.key, MAX_SEQNO)?);
        lookups.push(reader.get(&r.key, r.seqno)?);
    }
    lookups.push(reader.get(b"missing", MAX_SEQNO)?);
    Ok((all, lookups))
}

fn sweep(options: SstOptions) {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    let meta = build(dir.path(), 1, &rows, options);
    let good = std::fs::read(&meta.path).unwrap();
    let (all, _) = read_everything(&meta.path, &rows).unwrap();
    assert_eq!(all, rows);

    let bad_path = dir.path().join("flipped.sst");
    for i in 0..good.len() {
        let mut bytes = good.clone();
        bytes[i] ^= 0xff;
        std::fs::write(&bad_path, &bytes).unwrap();
        match read_everything(&bad_path, &rows) {
            Err(SstError::Corrupt { path, offset, .. }) => {
                assert_eq!(path, bad_path, "byte {i}");
                assert!(
                    offset < good.len() as u64,
                    "byte {i}: offset {offset} outside the file"
                );
            }
            Err(other) => panic!("byte {i}: expected a Corrupt error, got {other}"),
            Ok(_) => panic!("byte {i} of {}: flip went unnoticed", good.len()),
        }
    }
    // Truncations are caught too.
    for len in [0, 1, good.len() / 2, good.len() - 1] {
        std::fs::write(&bad_path, &good[..len]).unwrap();
        assert!(
            matches!(
                read_everything(&bad_path, &rows),
                Err(SstError::Corrupt { .. })
            ),
            "len {len}"
        );
    }
}

#[test]
fn every_flipped_byte_is_caught_two_level_uncompressed() {
    sweep(SstOptions {
        block_size: 128,
        restart_interval: 4,
        max_single_level_index_size: 0,
        index_partition_size: 64,
        ..SstOptions::default()
    });
}

#[test]
fn every_flipped_byte_is_caught_single_level_zstd() {
    sweep(SstOptions {
        block_size: 256,
        compression: Compression::Zstd { level: 3 },
        ..SstOptions::default()
    });
}

#[test]
fn every_flipped_byte_is_caught_format_v2() {
    sweep(SstOptions {
        block_size: 128,
        format_version: 2,
        ..SstOptions::default()
    });
}

#[test]
fn every_flipped_byte_is_caught_format_v1() {
    sweep(SstOptions {
        block_size: 128,
        format_version: MIN_FORMAT_VERSION,
        ..SstOptions::default()
    });
}

/// A footer that names another format version than the properties block (with a valid
/// footer CRC, so only the cross-check can catch it) is corrupt at the properties block.
#[test]
fn a_footer_version_other_than_the_properties_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    let options = SstOptions {
        format_version: MIN_FORMAT_VERSION,
        ..SstOptions::default()
    };
    let meta = build(dir.path(), 1, &rows, options);
    let mut bytes = std::fs::read(&meta.path).unwrap();
    let footer = bytes.len() - FOOTER_LEN;
    bytes[footer + 37..footer + 41].copy_from_slice(&(MIN_FORMAT_VERSION + 1).to_le_bytes());
    let crc = masked_crc32(&[&bytes[footer..footer + 41]]);
    bytes[footer + 41..footer + 45].copy_from_slice(&crc.to_le_bytes());
    let properties_at = u64::from_le_bytes(bytes[footer + 24..footer + 32].try_into().unwrap());
    let bad_path = dir.path().join("resealed.sst");
    std::fs::write(&bad_path, &bytes).unwrap();
    match SstReader::open(&bad_path) {
        Err(SstError::Corrupt { offset, reason, .. }) => {
            assert_eq!(offset, properties_at, "{reason}");
        }
        other => panic!("expected a Corrupt error, got {other:?}"),
    }
}
