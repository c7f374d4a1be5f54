//! [`FaultStorage`]: a deterministic in-memory filesystem that loses unsynced data on a
//! simulated crash and fails chosen operations.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::crash::CrashMode;
use crate::fault_file::FaultFile;
use crate::faults::{Armed, Errno, Fault, OpKind};
use crate::storage::{ImmutableFile, Storage, WritableFile};

/// One file's contents: what readers see and what survives a crash for sure.
#[derive(Debug, Default)]
pub(crate) struct Inode {
    pub(crate) current: Vec<u8>,
    pub(crate) synced: Vec<u8>,
}

/// Everything behind the lock.
#[derive(Debug)]
pub(crate) struct State {
    rng: StdRng,
    next_inode: u64,
    pub(crate) inodes: HashMap<u64, Inode>,
    /// The namespace as the running process sees it.
    names: BTreeMap<PathBuf, u64>,
    /// The namespace as it would be found after a crash (entries of synced directories).
    durable: BTreeMap<PathBuf, u64>,
    /// Directories (durable as soon as created: a simplification, see `create_dir_all`).
    dirs: BTreeSet<PathBuf>,
    /// Bumped by every crash; handles from an older generation fail with `EIO`.
    pub(crate) generation: u64,
    counts: [u64; OpKind::COUNT],
    faults: Vec<Armed>,
    /// Once the operations of these kinds reach this total, every operation fails (the
    /// process died).
    halt_after: Option<(Vec<OpKind>, u64)>,
    injected: u64,
}

impl State {
    /// Counts one operation of `kind` and decides whether it fails.
    pub(crate) fn op(&mut self, kind: OpKind) -> io::Result<()> {
        if let Some((kinds, n)) = &self.halt_after {
            if self.total(kinds) >= *n {
                return Err(Errno::Io.to_error());
            }
        }
        let count = match self.counts.get_mut(kind.index()) {
            Some(c) => {
                *c += 1;
                *c
            }
            None => 0,
        };
        match self.faults.iter().find(|f| f.fires(kind, count)) {
            Some(f) => {
                self.injected += 1;
                Err(f.fault.errno.to_error())
            }
            None => Ok(()),
        }
    }

    /// Operations of any of `kinds` made so far.
    fn total(&self, kinds: &[OpKind]) -> u64 {
        kinds
            .iter()
            .filter_map(|k| self.counts.get(k.index()))
            .sum()
    }

    fn inode_of(&self, path: &Path) -> io::Result<u64> {
        self.names.get(path).copied().ok_or_else(|| not_found(path))
    }

    fn contents(&self, path: &Path) -> io::Result<&[u8]> {
        let id = self.inode_of(path)?;
        self.inodes
            .get(&id)
            .map(|i| i.current.as_slice())
            .ok_or_else(|| not_found(path))
    }

    fn check_parent(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() && !self.dirs.contains(p) => Err(not_found(p)),
            _ => Ok(()),
        }
    }

    fn new_file(&mut self, path: &Path) -> u64 {
        let id = self.next_inode;
        self.next_inode += 1;
        self.inodes.insert(id, Inode::default());
        self.names.insert(path.to_path_buf(), id);
        id
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

/// An in-memory [`Storage`] for tests: it keeps each file's unsynced data apart from its
/// synced data, and directory entries apart from durable (directory-synced) ones, so that
/// [`FaultStorage::crash`] can simulate a power loss; and it fails chosen operations
/// ([`FaultStorage::inject`]) with `ENOSPC` or `EIO`.
///
/// Clones share one filesystem. Everything random (what a crash keeps) comes from the seed
/// given to [`FaultStorage::new`], so a run replays exactly.
///
/// Simplifications, each erring towards what a real filesystem may also do: a write is
/// all-or-nothing (an injected failure appends nothing); a failed sync leaves the data
/// unsynced (a later successful sync makes it durable, which is why callers must not
/// retry: see the WAL's poisoning); directories are durable as soon as created.
#[derive(Debug, Clone)]
pub struct FaultStorage {
    state: Arc<Mutex<State>>,
}

impl FaultStorage {
    /// An empty filesystem whose crashes are drawn from `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                rng: StdRng::seed_from_u64(seed),
                next_inode: 1,
                inodes: HashMap::new(),
                names: BTreeMap::new(),
                durable: BTreeMap::new(),
                dirs: BTreeSet::new(),
                generation: 0,
                counts: [0; OpKind::COUNT],
                faults: Vec::new(),
                halt_after: None,
                injected: 0,
            })),
        }
    }

    /// Arms `fault` (counted from now).
    pub fn inject(&self, fault: Fault) {
        let mut s = self.state.lock();
        let now = s.counts.get(fault.kind.index()).copied().unwrap_or(0);
        let at = now + fault.nth.max(1);
        s.faults.push(Armed { fault, at });
    }

    /// Disarms every fault (space was freed, the disk was replaced).
    pub fn clear_faults(&self) {
        self.state.lock().faults.clear();
    }

    /// Once `n` more operations of any of `kinds` have been made, every later operation
    /// fails with `EIO`, as if the process had died right after the `n`th: used to stop a
    /// workload at a chosen sync point (`&[OpKind::Sync, OpKind::SyncDir]`) before
    /// [`FaultStorage::crash`].
    pub fn halt_after(&self, kinds: &[OpKind], n: u64) {
        let mut s = self.state.lock();
        let now = s.total(kinds);
        s.halt_after = Some((kinds.to_vec(), now + n));
    }

    /// Operations of any of `kinds` made so far (failed ones included).
    #[must_use]
    pub fn total(&self, kinds: &[OpKind]) -> u64 {
        self.state.lock().total(kinds)
    }

    /// Simulates a power loss: the namespace reverts to its durable entries, every file
    /// loses unsynced data as `mode` says, open handles go stale (they fail with `EIO`),
    /// and faults and halts are cleared.
    pub fn crash(&self, mode: CrashMode) {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.generation += 1;
        s.faults.clear();
        s.halt_after = None;
        s.names = s.durable.clone();
        let live: BTreeSet<u64> = s.names.values().copied().collect();
        s.inodes.retain(|id, _| live.contains(id));
        // Visit inodes in a fixed order so the random draws replay from the seed.
        let mut ids: Vec<u64> = s.inodes.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if let Some(inode) = s.inodes.get_mut(&id) {
                let kept = mode.apply(&inode.synced, &inode.current, &mut s.rng);
                inode.synced.clone_from(&kept);
                inode.current = kept;
            }
        }
    }

    /// Faults injected so far (operations that failed because of [`Fault`]s).
    #[must_use]
    pub fn injected(&self) -> u64 {
        self.state.lock().injected
    }

    fn open_file(
        &self,
        path: &Path,
        create: bool,
        exclusive: bool,
        truncate: bool,
    ) -> io::Result<Box<dyn WritableFile>> {
        let mut s = self.state.lock();
        s.op(OpKind::Open)?;
        let id = match s.names.get(path).copied() {
            Some(_) if exclusive => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{}: exists", path.display()),
                ))
            }
            Some(id) => id,
            None if create => {
                s.check_parent(path)?;
                s.new_file(path)
            }
            None => return Err(not_found(path)),
        };
        if truncate {
            if let Some(inode) = s.inodes.get_mut(&id) {
                inode.current.clear();
            }
        }
        Ok(Box::new(FaultFile::new(
            Arc::clone(&self.state),
            id,
            s.generation,
            path.to_path_buf(),
        )))
    }

    fn children(&self, s: &State, dir: &Path) -> Vec<String> {
        let files = s.names.keys();
        files
            .chain(s.dirs.iter())
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect()
    }
}

impl Storage for FaultStorage {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.open_file(path, true, true, false)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.open_file(path, true, false, true)
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.open_file(path, false, false, false)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut s = self.state.lock();
        s.op(OpKind::Read)?;
        s.contents(path).map(<[u8]>::to_vec)
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut s = self.state.lock();
        s.op(OpKind::Read)?;
        let data = s.contents(path)?;
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| data.get(o..o.checked_add(buf.len())?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn open_immutable(&self, path: &Path) -> io::Result<ImmutableFile> {
        let mut s = self.state.lock();
        s.op(OpKind::Open)?;
        let data = Bytes::copy_from_slice(s.contents(path)?);
        Ok(ImmutableFile::Bytes(data))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.op(OpKind::Rename)?;
        s.check_parent(to)?;
        let id = s.names.remove(from).ok_or_else(|| not_found(from))?;
        s.names.insert(to.to_path_buf(), id);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        s.op(OpKind::Remove)?;
        s.names
            .remove(path)
            .map(drop)
            .ok_or_else(|| not_found(path))
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut s = self.state.lock();
        s.op(OpKind::List)?;
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(self.children(&s, dir))
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.state.lock();
        if s.dirs.contains(dir) {
            // Like `mkdir -p` of an existing directory: nothing is written, nothing fails.
            return Ok(());
        }
        s.op(OpKind::CreateDir)?;
        for d in dir.ancestors().filter(|d| !d.as_os_str().is_empty()) {
            s.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut guard = self.state.lock();
        let s = &mut *guard;
        s.op(OpKind::SyncDir)?;
        if !s.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        s.durable.retain(|p, _| p.parent() != Some(dir));
        for (p, &id) in &s.names {
            if p.parent() == Some(dir) {
                s.durable.insert(p.clone(), id);
            }
        }
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        let s = self.state.lock();
        s.names.contains_key(path) || s.dirs.contains(path)
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        let s = self.state.lock();
        s.contents(path).map(|c| c.len() as u64)
    }
}
