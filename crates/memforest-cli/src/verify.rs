//! `verify`: opens the store and runs the engine's [`memforest_engine::Db::verify`]
//! (manifest against the live version, level invariants, every segment file's checksums,
//! sizes and key ranges, the WAL, every MemTree's invariants).
//!
//! Damage that stops the store from opening, and the first damage the check finds, is
//! returned as [`CliError::Damage`] naming the file and byte offset.

use std::path::Path;

use memforest_engine::manifest;
use memforest_engine::{VerifyReport, WAL_DIR};
use memforest_sst::SstError;
use memforest_wal::WalError;

use crate::error::{CliError, Result};
use crate::store;

fn damage(dir: &Path, e: memforest_engine::Error) -> CliError {
    match e {
        memforest_engine::Error::Corrupt {
            path,
            offset,
            reason,
        } => CliError::Damage {
            path,
            offset,
            reason,
        },
        memforest_engine::Error::Sst(SstError::Corrupt {
            path,
            offset,
            reason,
        }) => CliError::Damage {
            path,
            offset,
            reason: reason.to_owned(),
        },
        memforest_engine::Error::Wal(WalError::Corruption {
            segment,
            offset,
            reason,
        }) => CliError::Damage {
            path: memforest_wal::segment::path(&dir.join(WAL_DIR), segment),
            offset,
            reason: reason.to_string(),
        },
        other => CliError::Engine(other),
    }
}

/// Checks the store in `dir`.
///
/// # Errors
/// [`CliError::Damage`] naming the file and byte offset of the first damage;
/// [`CliError::Usage`] when `dir` is not a store; the engine's errors (lock held).
pub fn run(dir: &Path) -> Result<VerifyReport> {
    if !dir.join(manifest::CURRENT).is_file() {
        return Err(CliError::Usage(format!(
            "{} is not a MemForest store (no CURRENT file)",
            dir.display()
        )));
    }
    let db = store::open_existing(dir).map_err(|e| match e {
        CliError::Engine(e) => damage(dir, e),
        other => other,
    })?;
    let report = db.verify().map_err(|e| damage(dir, e))?;
    db.close()?;
    Ok(report)
}
