//! The [`Storage`] trait and the file handle types it returns.

use std::fmt::Debug;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

/// A file opened for appending. Every `write` appends at the end of the file.
///
/// `sync_data`/`sync_all` take `&self` like `std::fs::File`'s, so they can be called
/// through a `BufWriter`'s `get_ref()`.
pub trait WritableFile: Write + Send + Sync + Debug {
    /// `fdatasync`: the file's data (and its length) are durable when this returns `Ok`.
    ///
    /// # Errors
    /// The OS (or injected) error; the data written since the last successful sync may or
    /// may not be durable then.
    fn sync_data(&self) -> io::Result<()>;

    /// `fsync`: data and all metadata are durable when this returns `Ok`.
    ///
    /// # Errors
    /// As [`WritableFile::sync_data`].
    fn sync_all(&self) -> io::Result<()>;

    /// Cuts (or zero-extends) the file to `len` bytes (`ftruncate`). Not durable until the
    /// next sync.
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// The file's current length in bytes (including unsynced data).
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn current_len(&self) -> io::Result<u64>;
}

/// A finished, immutable file opened for reading, as [`Storage::open_immutable`] returns it.
#[derive(Debug)]
pub enum ImmutableFile {
    /// An OS file: the caller maps it read-only (memforest-sst's single `mmap` module).
    Os(std::fs::File),
    /// The file's bytes, already in memory (an owned copy, e.g. from [`crate::FaultStorage`]).
    Bytes(Bytes),
}

/// Every file operation MemForest performs. Paths are used as given (absolute or relative
/// to the process's working directory for [`crate::StdStorage`]; plain keys for
/// [`crate::FaultStorage`]).
///
/// **Durability model** (what callers must do, and what `FaultStorage` enforces): data
/// written to a file is durable only after a successful [`WritableFile::sync_data`] or
/// [`WritableFile::sync_all`]; a file's *name* (creation, rename, removal) is durable only
/// after a successful [`Storage::sync_dir`] of the directory holding it.
pub trait Storage: Send + Sync + Debug {
    /// Creates a new, empty file for appending; fails with `AlreadyExists` if `path` exists
    /// (`O_CREAT | O_EXCL | O_APPEND`).
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;

    /// Creates `path` for appending, truncating it if it exists (`File::create`).
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;

    /// Opens an existing file for appending after its current end.
    ///
    /// # Errors
    /// `NotFound` when it does not exist; the OS (or injected) error.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;

    /// Reads the whole file.
    ///
    /// # Errors
    /// `NotFound` when it does not exist; the OS (or injected) error.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Fills `buf` from byte `offset` of the file (`pread`, all or error).
    ///
    /// # Errors
    /// `UnexpectedEof` when the file ends first; the OS (or injected) error.
    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()>;

    /// Opens a finished file for read-only mapping: an OS file the caller maps, or the
    /// bytes themselves.
    ///
    /// # Errors
    /// `NotFound` when it does not exist; the OS (or injected) error.
    fn open_immutable(&self, path: &Path) -> io::Result<ImmutableFile>;

    /// Renames `from` to `to`, replacing `to` if it exists (`rename(2)`).
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file (`unlink(2)`).
    ///
    /// # Errors
    /// `NotFound` when it does not exist; the OS (or injected) error.
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// The names of the entries of `dir` (files and directories), in no particular order.
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Creates `dir` and its missing parents (`create_dir_all`).
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;

    /// fsyncs `dir`, making the creations, renames and removals of its entries durable.
    ///
    /// # Errors
    /// The OS (or injected) error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// Whether `path` names an existing file or directory.
    fn exists(&self, path: &Path) -> bool;

    /// The length of the file at `path`, in bytes.
    ///
    /// # Errors
    /// `NotFound` when it does not exist; the OS error.
    fn file_len(&self, path: &Path) -> io::Result<u64>;
}

/// The storage used when none is given: the real filesystem ([`crate::StdStorage`]).
#[must_use]
pub fn default_storage() -> Arc<dyn Storage> {
    Arc::new(crate::StdStorage)
}
