//! The exclusive lock file `LOCK`.
//!
//! Taken with `File::try_lock` (an `flock` on Linux): it conflicts with every other open of
//! the file, in this process or another, and the kernel releases it when the holder's file
//! descriptor is closed, including when the holder is killed. A lock left by a crashed
//! process therefore never blocks the next open.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Name of the lock file in the database directory.
pub const LOCK_FILE: &str = "LOCK";

/// A held lock; released on drop.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock of database directory `dir`, creating the file if needed.
    ///
    /// # Errors
    /// [`Error::Locked`] when another handle holds it; [`Error::Io`] otherwise.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(Error::io("open", &path))?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked { path }),
            Err(TryLockError::Error(e)) => Err(Error::io("lock", &path)(e)),
        }
    }

    /// The lock file's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}
