//! Fault rules for [`crate::FaultStorage`]: which operation fails, and with what.

use std::io;

/// A kind of storage operation, as counted and failed by [`crate::FaultStorage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Opening or creating a file (`create_new`, `create`, `open_append`, `open_immutable`).
    Open,
    /// Reading a file (`read`, `read_at`).
    Read,
    /// One `write` call on a [`crate::WritableFile`].
    Write,
    /// `sync_data` or `sync_all` of a file.
    Sync,
    /// `set_len` of a file.
    SetLen,
    /// `rename`.
    Rename,
    /// `remove_file`.
    Remove,
    /// `list_dir`.
    List,
    /// `create_dir_all`.
    CreateDir,
    /// `sync_dir`.
    SyncDir,
}

impl OpKind {
    /// Number of kinds.
    pub const COUNT: usize = 10;

    /// Index of this kind in per-kind counters, `0..COUNT`.
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The error an injected fault returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    /// `ENOSPC` (28): no space left on device.
    NoSpace,
    /// `EIO` (5): an I/O error (a failing disk; after a crash, a dead process's handle).
    Io,
}

impl Errno {
    /// The `std::io::Error` for this errno (Linux numbering, as `from_raw_os_error`).
    #[must_use]
    pub fn to_error(self) -> io::Error {
        io::Error::from_raw_os_error(match self {
            Self::NoSpace => 28,
            Self::Io => 5,
        })
    }
}

/// One fault to inject: the `nth` operation of `kind` counted from when the fault is
/// installed (1 = the next one) fails with `errno`; if `sticky`, so does every later
/// operation of that kind until [`crate::FaultStorage::clear_faults`] or a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Which operations it applies to.
    pub kind: OpKind,
    /// Which one fails first (1-based, relative to installation).
    pub nth: u64,
    /// The error returned.
    pub errno: Errno,
    /// Whether every later operation of `kind` fails too (a full disk stays full).
    pub sticky: bool,
}

impl Fault {
    /// The `nth` next operation of `kind` fails with `errno`, once.
    #[must_use]
    pub fn once(kind: OpKind, nth: u64, errno: Errno) -> Self {
        Self {
            kind,
            nth,
            errno,
            sticky: false,
        }
    }

    /// The `nth` next operation of `kind` and every later one fail with `errno`.
    #[must_use]
    pub fn from_nth(kind: OpKind, nth: u64, errno: Errno) -> Self {
        Self {
            kind,
            nth,
            errno,
            sticky: true,
        }
    }
}

/// A fault as armed in the storage: the absolute count at which it fires.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Armed {
    pub(crate) fault: Fault,
    /// Absolute per-kind count of the first failing operation.
    pub(crate) at: u64,
}

impl Armed {
    /// Whether operation number `count` (absolute, 1-based) of `kind` fails.
    pub(crate) fn fires(&self, kind: OpKind, count: u64) -> bool {
        self.fault.kind == kind && (count == self.at || (self.fault.sticky && count > self.at))
    }
}
