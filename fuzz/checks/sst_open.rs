//! `sst_open`: arbitrary bytes as a segment file image. Opening and reading it every way a
//! client can (raw iteration, snapshot scans, point lookups, seeks) must return data or a
//! typed error, never panic or hang.
//!
//! Each input is tried twice: as given, and "resealed" (footer magic and CRC, and the
//! trailers of the blocks the footer names, recomputed) so that the fuzzer also reaches the
//! decoding of footer, properties, filter and index contents that random bytes would
//! otherwise never get past the checksums to. Data-block decoding behind the CRC is
//! fuzzed directly by `sst_block_roundtrip`.

use std::path::PathBuf;

use bytes::Bytes;
use memforest_codec::checksum::masked_crc32;
use memforest_sst::block::trailer::{self, CompressionType, TRAILER_LEN};
use memforest_sst::footer::{FOOTER_LEN, MAGIC};
use memforest_sst::{EntrySource, ScanOptions, SstReader};

/// Upper bound on entries visited per input, so a huge claimed file stays fast.
const MAX_ENTRIES: usize = 10_000;

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    read_all(data);
    if let Some(resealed) = reseal(data) {
        read_all(&resealed);
    }
}

/// `data` with the footer's magic and CRC and the trailers of the properties, filter and
/// top-level index blocks recomputed (`None` when there is no room for a footer).
fn reseal(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = data.to_vec();
    let footer_at = out.len().checked_sub(FOOTER_LEN)?;
    out[footer_at + 45..].copy_from_slice(&MAGIC.to_le_bytes());
    let crc = masked_crc32(&[&out[footer_at..footer_at + 41]]);
    out[footer_at + 41..footer_at + 45].copy_from_slice(&crc.to_le_bytes());
    for i in 0..3 {
        let at = footer_at + 12 * i;
        let offset = u64::from_le_bytes(out[at..at + 8].try_into().ok()?);
        let size = u32::from_le_bytes(out[at + 8..at + 12].try_into().ok()?);
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        if end.checked_add(TRAILER_LEN)? > footer_at {
            continue;
        }
        let kind = if out[end] == 1 {
            CompressionType::Zstd
        } else {
            CompressionType::None
        };
        let sealed = trailer::encode(&out[start..end], kind);
        out[end..end + TRAILER_LEN].copy_from_slice(&sealed);
    }
    Some(out)
}

fn read_all(data: &[u8]) {
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
