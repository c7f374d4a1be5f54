//! `sst_open`: arbitrary bytes as a segment file image. Opening and reading it every way a
//! client can (raw iteration, snapshot scans, point lookups, seeks) must return data or a
//! typed error, never panic or hang.

use std::path::PathBuf;

use bytes::Bytes;
use memforest_sst::{EntrySource, ScanOptions, SstReader};

/// Upper bound on entries visited per input, so a huge claimed file stays fast.
const MAX_ENTRIES: usize = 10_000;

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    let Ok(reader) = SstReader::from_bytes(PathBuf::from("fuzz.sst"), Bytes::copy_from_slice(data))
    else {
        return;
    };
    let mut keys = Vec::new();
    if let Ok(mut it) = reader.iter() {
        while let Ok(Some(e)) = it.next_entry() {
            keys.push(e.user_key);
            if keys.len() >= MAX_ENTRIES {
                break;
            }
        }
    }
    for snapshot in [0, 1, u64::MAX] {
        if let Ok(scan) = reader.scan(ScanOptions {
            snapshot_seqno: snapshot,
            ..ScanOptions::default()
        }) {
            for item in scan.take(MAX_ENTRIES) {
                if item.is_err() {
                    break;
                }
            }
        }
    }
    keys.push(Bytes::from_static(b"absent"));
    for key in keys.iter().take(64) {
        let _ = reader.get(key, u64::MAX);
        let _ = reader.get(key, 1);
        if let Ok(mut it) = reader.iter() {
            let _ = it.seek(key, u64::MAX);
            let _ = it.next_entry();
        }
    }
}
