//! `wal dump DIR` and `wal check DIR`: read a write-ahead log directory (or a store's `wal/`
//! subdirectory) without opening the store, replaying it under `AbsoluteConsistency`.

use std::path::{Path, PathBuf};

use memforest_engine::batch::Op;
use memforest_engine::{key, RepairHint, WAL_DIR};
use memforest_wal::recovery::{plan, RecoveryPlan, SegmentImage};
use memforest_wal::{RecoveryMode, WalError};
use serde::Serialize;

use crate::error::{CliError, Result};

/// The WAL directory for `dir`: `dir/wal` when it exists, else `dir` itself.
#[must_use]
pub fn wal_dir(dir: &Path) -> PathBuf {
    let sub = dir.join(WAL_DIR);
    if sub.is_dir() {
        sub
    } else {
        dir.to_path_buf()
    }
}

/// Replays every segment file of the WAL in `dir` (ascending ids) under
/// `AbsoluteConsistency`; returns the plan and the number of segment files.
///
/// # Errors
/// [`CliError::Damage`] naming the segment file and offset of the first damaged record;
/// [`CliError::Io`] for an unreadable directory or file.
pub fn check(dir: &Path) -> Result<(RecoveryPlan, usize)> {
    let mut files: Vec<(u64, PathBuf)> = Vec::new();
    for e in std::fs::read_dir(dir).map_err(CliError::io("list", dir))? {
        let e = e.map_err(CliError::io("list", dir))?;
        if let Some(id) = e
            .file_name()
            .to_str()
            .and_then(memforest_wal::segment::parse_file_name)
        {
            files.push((id, e.path()));
        }
    }
    files.sort();
    let mut data = Vec::with_capacity(files.len());
    for (id, p) in &files {
        data.push((*id, std::fs::read(p).map_err(CliError::io("read", p))?));
    }
    let images: Vec<SegmentImage<'_>> = data
        .iter()
        .map(|(id, bytes)| SegmentImage { id: *id, bytes })
        .collect();
    match plan(
        &images,
        RecoveryMode::AbsoluteConsistency,
        &|_| None,
        &|_, _| false,
    ) {
        Ok(p) => Ok((p, files.len())),
        Err(WalError::Corruption {
            segment,
            offset,
            reason,
        }) => Err(CliError::Damage {
            path: memforest_wal::segment::path(dir, segment),
            offset,
            reason: reason.to_string(),
            hint: Some(RepairHint::Salvage),
        }),
        Err(e) => Err(CliError::Engine(e.into())),
    }
}

/// One WAL entry as `wal dump` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct DumpEntry {
    /// Sequence number.
    pub seqno: u64,
    /// Segment id.
    pub segment: u64,
    /// Byte offset of the batch's first record in the segment.
    pub offset: u64,
    /// `put`, `delete`, `range-delete`, `noop` or `op-<byte>`.
    pub op: String,
    /// Tenant name (lossy UTF-8), empty for reserved keys.
    pub tenant: String,
    /// Table name (the memory store's schema; `Table(tag)` for a tag it does not define),
    /// empty for reserved keys.
    pub table: String,
    /// Key length in bytes.
    pub key_len: usize,
    /// Value length in bytes.
    pub value_len: usize,
}

/// Every entry of the WAL in `dir`, in log order.
///
/// # Errors
/// As [`check`].
pub fn dump(dir: &Path) -> Result<Vec<DumpEntry>> {
    let (p, _) = check(dir)?;
    let mut out = Vec::new();
    for b in &p.batches {
        for (seqno, e) in (b.first_seqno..).zip(b.batch.entries()) {
            let op = match Op::from_byte(e.kind) {
                Some(Op::Put) => "put".to_owned(),
                Some(Op::Delete) => "delete".to_owned(),
                Some(Op::RangeDelete) => "range-delete".to_owned(),
                Some(Op::Noop) => "noop".to_owned(),
                None => format!("op-{}", e.kind),
            };
            let (tenant, table) = key::decode(&e.key).map_or_else(Default::default, |k| {
                (
                    String::from_utf8_lossy(k.tenant).into_owned(),
                    memforest::schema::Table::from_tag(k.table.tag())
                        .map_or_else(|| format!("{:?}", k.table), |t| format!("{t:?}")),
                )
            });
            out.push(DumpEntry {
                seqno,
                segment: b.segment,
                offset: b.offset,
                op,
                tenant,
                table,
                key_len: e.key.len(),
                value_len: e.value.len(),
            });
        }
    }
    Ok(out)
}
