//! Segment files recovery set aside: a dropped segment that is not empty is renamed to
//! `{id:020}.wal.quarantine`, never read again, never deleted and never overwritten.
//!
//! Segment ids are reused after a drop (the log continues in the last kept segment and
//! its next rotation takes the following id), so the same id can be set aside more than
//! once. A later copy therefore gets the first free name of `{id:020}.wal.quarantine`,
//! `{id:020}.wal.quarantine.1`, `{id:020}.wal.quarantine.2`, and so on.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use memforest_io::Storage;

use crate::error::{Result, WalError};
use crate::segment;

/// What follows a segment's file name when it is set aside (then, for a later copy of the
/// same id, `.{n}`).
pub const SUFFIX: &str = ".quarantine";

/// The name copy `n` of segment `id` is set aside under: `{id:020}.wal.quarantine` for
/// the first (`n == 0`), `{id:020}.wal.quarantine.{n}` after it.
#[must_use]
pub fn file_name(id: u64, n: usize) -> String {
    match n {
        0 => format!("{}{SUFFIX}", segment::file_name(id)),
        n => format!("{}{SUFFIX}.{n}", segment::file_name(id)),
    }
}

/// The segment id of a name [`file_name`] writes, or `None` for any other name.
#[must_use]
pub fn parse_file_name(name: &str) -> Option<u64> {
    let (base, copy) = name.split_once(SUFFIX)?;
    let id = segment::parse_file_name(base)?;
    let copy_ok = copy.is_empty()
        || copy.strip_prefix('.').is_some_and(|n| {
            !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit())
        });
    copy_ok.then_some(id)
}

/// Renames segment `id` of `dir` to the first of its quarantine names that does not exist
/// yet, and returns the new path. The caller syncs the directory.
pub(crate) fn set_aside(storage: &dyn Storage, dir: &Path, id: u64) -> Result<PathBuf> {
    let from = segment::path(dir, id);
    let names: HashSet<String> = storage
        .list_dir(dir)
        .map_err(|e| WalError::io(dir, e))?
        .into_iter()
        .collect();
    // Among `names.len() + 1` candidates at least one is free.
    let free = (0..=names.len())
        .map(|n| file_name(id, n))
        .find(|name| !names.contains(name))
        .ok_or_else(|| {
            WalError::io(
                &from,
                std::io::Error::other("no free quarantine name for the segment"),
            )
        })?;
    let to = dir.join(free);
    storage
        .rename(&from, &to)
        .map_err(|e| WalError::io(&from, e))?;
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(file_name(7, 0), "00000000000000000007.wal.quarantine");
        assert_eq!(file_name(7, 3), "00000000000000000007.wal.quarantine.3");
        for n in [0, 1, 12] {
            assert_eq!(parse_file_name(&file_name(7, n)), Some(7));
        }
        for bad in [
            "00000000000000000007.wal",
            "00000000000000000007.wal.quarantine.",
            "00000000000000000007.wal.quarantine.01",
            "00000000000000000007.wal.quarantine.x",
            "00000000000000000007.wal.quarantine.quarantine",
            "7.wal.quarantine",
            "000001.sst.quarantine",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }
}
