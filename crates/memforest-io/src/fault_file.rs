//! [`FaultFile`]: a handle on a [`crate::FaultStorage`] file.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::fault::{Inode, State};
use crate::faults::{Errno, OpKind};
use crate::storage::WritableFile;

/// A file of a [`crate::FaultStorage`] opened for appending. It refers to the file itself
/// (the inode), not its name: renaming or removing the name does not affect it. After a
/// crash every call fails with `EIO`.
#[derive(Debug)]
pub(crate) struct FaultFile {
    state: Arc<Mutex<State>>,
    inode: u64,
    generation: u64,
    path: PathBuf,
}

impl FaultFile {
    pub(crate) fn new(
        state: Arc<Mutex<State>>,
        inode: u64,
        generation: u64,
        path: PathBuf,
    ) -> Self {
        Self {
            state,
            inode,
            generation,
            path,
        }
    }

    /// Counts an operation of `kind` and, unless it fails, runs `f` on the inode.
    fn with<T>(&self, kind: OpKind, f: impl FnOnce(&mut Inode) -> T) -> io::Result<T> {
        let mut s = self.state.lock();
        if s.generation != self.generation {
            return Err(Errno::Io.to_error());
        }
        s.op(kind)?;
        let path = &self.path;
        s.inodes
            .get_mut(&self.inode)
            .map(f)
            .ok_or_else(|| io::Error::other(format!("{}: inode gone", path.display())))
    }

    fn sync(&self) -> io::Result<()> {
        self.with(OpKind::Sync, |i| i.synced.clone_from(&i.current))
    }
}

impl Write for FaultFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(OpKind::Write, |i| i.current.extend_from_slice(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl WritableFile for FaultFile {
    fn sync_data(&self) -> io::Result<()> {
        self.sync()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(|_| Errno::NoSpace.to_error())?;
        self.with(OpKind::SetLen, |i| i.current.resize(len, 0))
    }

    fn current_len(&self) -> io::Result<u64> {
        let s = self.state.lock();
        s.inodes
            .get(&self.inode)
            .map(|i| i.current.len() as u64)
            .ok_or_else(|| Errno::Io.to_error())
    }
}
