//! `verify`: opens the store read-only and runs [`memforest::Memory::verify`] (manifest
//! against the live version, level invariants, every segment file's checksums, sizes and
//! key ranges, the WAL, every MemTree's invariants).
//!
//! Damage that stops the store from opening, and the first damage the check finds, is
//! returned as [`CliError::Damage`] naming the file and byte offset.

use std::path::Path;

use memforest::{MemoryError, MemoryVerifyReport};
use memforest_engine::WAL_DIR;
use memforest_sst::SstError;
use memforest_wal::WalError;

use crate::error::{CliError, Result};
use crate::location::StoreArgs;

fn damage(dir: &Path, e: memforest_engine::Error) -> CliError {
    let hint = e.repair_hint();
    match e {
        memforest_engine::Error::Corrupt {
            path,
            offset,
            reason,
        } => CliError::Damage {
            path,
            offset,
            reason,
            hint,
        },
        memforest_engine::Error::Sst(SstError::Corrupt {
            path,
            offset,
            reason,
        }) => CliError::Damage {
            path,
            offset,
            reason: reason.to_owned(),
            hint,
        },
        memforest_engine::Error::Wal(WalError::Corruption {
            segment,
            offset,
            reason,
        }) => CliError::Damage {
            path: memforest_wal::segment::path(&dir.join(WAL_DIR), segment),
            offset,
            reason: reason.to_string(),
            hint,
        },
        other => CliError::Engine(other),
    }
}

/// Checks the store `store` names through a read-only handle (on an object store, a
/// replica in --cache-dir, which fetches what it checks): nothing is written to the store,
/// so it runs beside a writer and never changes what it checks. Damage that does not stop the store
/// from opening (quarantined segment files, WAL loss accepted by salvage) is in the report
/// ([`memforest_engine::VerifyReport::is_clean`]); [`render`] and the exit code of `memforest verify` say so.
///
/// # Errors
/// [`CliError::Damage`] naming the file and byte offset of the first damage that stops
/// the store from opening or fails a check; the engine's errors (not a store).
pub fn run(store: &StoreArgs) -> Result<MemoryVerifyReport> {
    let dir = &store.local_dir()?;
    let located = |e: CliError| match e {
        CliError::Engine(e) | CliError::Memory(MemoryError::Engine(e)) => damage(dir, e),
        other => other,
    };
    let db = store.open_read_only().map_err(located)?;
    let report = db.verify().map_err(|e| located(e.into()))?;
    db.close()?;
    Ok(report)
}

/// The report as text: `clean: ...` or `DAMAGED: ...` with what is damaged and what to do.
#[must_use]
pub fn render(report: &MemoryVerifyReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let r = &report.store;
    let counts = format!(
        "{} segment files ({} entries, {} bytes), {} WAL files ({} batches), {} trees ({} nodes)",
        r.segment_files,
        r.entries,
        r.segment_bytes,
        r.wal_files,
        r.wal_batches,
        report.trees,
        report.tree_nodes
    );
    if r.is_clean() {
        let _ = writeln!(out, "clean: {counts}");
    } else {
        let _ = writeln!(out, "DAMAGED: {counts}");
        for name in &r.quarantined {
            let why = r
                .unlisted
                .iter()
                .find(|u| name.starts_with(&u.name))
                .map_or("set aside by an earlier open", |u| u.reason.as_str());
            let _ = writeln!(out, "  quarantined segment file {name}: {why}");
        }
        for name in &r.wal_quarantined {
            // A read-only verify names a segment still under its own name.
            let when = match memforest_wal::segment::parse_file_name(name) {
                Some(_) => "is set aside by the next read-write open",
                None => "was set aside by recovery",
            };
            let _ = writeln!(
                out,
                "  WAL segment file wal/{name} {when}: it holds no valid segment header, \
                 lies past the recovery point, or holds damage a salvage read past"
            );
        }
        for id in &r.wal_missing {
            let _ = writeln!(
                out,
                "  WAL segment {id} missing or short (accepted by salvage)"
            );
        }
        let _ = writeln!(
            out,
            "  the store serves what is live; `memforest repair --db DIR` adopts the \
             quarantined segment files that read back whole"
        );
        if !r.wal_quarantined.is_empty() {
            let _ = writeln!(
                out,
                "  a WAL segment file set aside is never read or replayed, repair included: \
                 to see its batches, copy it without the .quarantine suffix into an empty \
                 directory and run `memforest wal dump` on that; move it out of wal/ once it \
                 holds nothing you need"
            );
        }
    }
    if let Some(at) = r.manifest_torn_tail {
        let _ = writeln!(
            out,
            "  note: the manifest's last record (byte {at}) is torn and was dropped; the next \
             write cuts it off"
        );
    }
    for u in r.unlisted.iter().filter(|u| u.garbage) {
        let _ = writeln!(
            out,
            "  note: unlisted file {} is garbage: {}",
            u.name, u.reason
        );
    }
    if r.store_changed {
        let _ = writeln!(
            out,
            "  note: a writer changed the store while it was checked; the state as of the \
             check's start was verified"
        );
    }
    out
}
