//! The record of which object-store manifest a writer's directory last created:
//! `REMOTE_EPOCH` in the database directory, the manifest object's number in decimal and
//! a newline, replaced atomically (temporary file, fsync, rename, fsync of the directory)
//! after each manifest object the writer creates.
//!
//! A directory whose local manifest is ahead of the object store's newest manifest (an
//! append whose publication failed, then the process stopped) may publish its state only
//! if that newest manifest is its own: the record says so. Without it, a writer fenced by
//! another could not tell its own last publication from the other writer's and would
//! publish over what the other wrote.

use std::io::Write;
use std::path::Path;

use memforest_io::Storage;

use crate::error::{Error, Result};
use crate::manifest;

/// File name of the record in the database directory.
pub const EPOCH_FILE: &str = "REMOTE_EPOCH";

/// The number the record holds; `None` when the directory has none (it never created a
/// manifest object).
///
/// # Errors
/// [`Error::Io`] reading it; [`Error::Corrupt`] naming it when it holds anything but a
/// number and a newline.
pub fn read(storage: &dyn Storage, dir: &Path) -> Result<Option<u64>> {
    let path = dir.join(EPOCH_FILE);
    if !storage.exists(&path) {
        return Ok(None);
    }
    let bytes = storage.read(&path).map_err(Error::io("read", &path))?;
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.strip_suffix('\n'))
        .and_then(|digits| digits.parse().ok())
        .map(Some)
        .ok_or_else(|| Error::corrupt(&path, 0, "not a manifest object number"))
}

/// Records `n` as the newest manifest object this directory's writer created.
///
/// # Errors
/// [`Error::Io`]; the previous record then stands.
pub fn write(storage: &dyn Storage, dir: &Path, n: u64) -> Result<()> {
    let tmp = dir.join(format!("{EPOCH_FILE}.tmp"));
    let mut f = storage.create(&tmp).map_err(Error::io("create", &tmp))?;
    f.write_all(format!("{n}\n").as_bytes())
        .map_err(Error::io("write", &tmp))?;
    f.sync_all().map_err(Error::io("fsync", &tmp))?;
    drop(f);
    let path = dir.join(EPOCH_FILE);
    storage
        .rename(&tmp, &path)
        .map_err(Error::io("rename", &tmp))?;
    manifest::sync_dir(storage, dir)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn a_record_reads_back_and_damage_is_named() {
        let storage = memforest_io::default_storage();
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&*storage, dir.path()).unwrap(), None);
        write(&*storage, dir.path(), 7).unwrap();
        write(&*storage, dir.path(), 12).unwrap();
        assert_eq!(read(&*storage, dir.path()).unwrap(), Some(12));
        std::fs::write(dir.path().join(EPOCH_FILE), "12").unwrap();
        let err = read(&*storage, dir.path()).unwrap_err();
        assert!(err.to_string().contains(EPOCH_FILE), "{err}");
    }
}
