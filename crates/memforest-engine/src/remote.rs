//! The engine's object-storage tier: segment files uploaded before the manifest records
//! them, and the manifest published after each change as numbered snapshot objects that
//! also fence writers.
//!
//! Layout under the location's prefix: `sst/<file name>` for segment file `id` (the local
//! name, [`memforest_sst::file_name`]), `manifest/<n:020>` for manifest object `n`, and
//! the store id ([`crate::remote_binding`]). A
//! manifest object holds one manifest record (the framing and encoding of the local
//! manifest, log number `n`): a snapshot of the live segments, the flushed seqno and the
//! next file id. The WAL stays local and is not described.
//!
//! Fencing: a writer opens by creating manifest object `N + 1` (`N` the newest) with a
//! conditional create; `N + 1` is its epoch. Each publication creates the next number the
//! same way. A create that finds the object there means another writer claimed the number
//! first: the writer is fenced ([`Error::Fenced`]) and refuses every further change. Of two
//! writers, at most one creates each number, so the sequence of manifest objects is one
//! writer's history at a time. A writer claims only when its directory belongs to the
//! location's store and `N` is its own last creation ([`crate::remote_binding`]) or
//! describes the segments its directory holds, so a claim never publishes over another
//! writer's history.
//!
//! Segment objects are immutable: each is uploaded with a conditional create, and one that
//! exists already is accepted only when it holds the same bytes (a retried upload);
//! otherwise the upload fails with [`Error::SegmentConflict`]. A writer that another
//! fenced, still flushing before it learns so, can therefore never replace a file that a
//! manifest names. A claim also moves the writer's next file id past every segment object
//! stored, so files left by a writer that stopped between upload and publication are never
//! reused ids, and into a span of ids of its own ([`CLAIM_ID_SPAN`]), so a writer fenced
//! while it still flushes does not take the ids the new writer allocates.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use memforest_io::Storage;
use memforest_object::Remote;
use memforest_wal::LogWriter;

use crate::error::{Error, Result};
use crate::manifest::{self, Edit, ManifestState};

/// Folder of the segment objects.
pub const SST_DIR: &str = "sst";
/// Folder of the manifest objects.
pub const MANIFEST_DIR: &str = "manifest";

/// The object name of manifest object `n`.
#[must_use]
pub fn manifest_name(n: u64) -> String {
    format!("{MANIFEST_DIR}/{n:020}")
}

/// The object name of segment file `id`.
#[must_use]
pub fn segment_name(id: u64) -> String {
    format!("{SST_DIR}/{}", memforest_sst::file_name(id))
}

/// The part of `state` a manifest object carries: no WAL tracking (the WAL is local) and
/// no obsolete ids (local garbage).
fn remote_view(state: &ManifestState) -> ManifestState {
    ManifestState {
        segments: state.segments.clone(),
        flushed_seqno: state.flushed_seqno,
        next_file_id: state.next_file_id,
        wal: std::collections::BTreeMap::new(),
        wal_tracked: true,
        obsolete: std::collections::BTreeSet::new(),
    }
}

/// The bytes of manifest object `n` describing `state`.
fn encode(n: u64, state: &ManifestState) -> Result<Bytes> {
    let payload = manifest::encode_record(&remote_view(state).snapshot())?;
    let mut writer = LogWriter::resume(Vec::new(), n, 0);
    writer
        .add_record(&payload)
        .map_err(Error::io("frame", manifest_name(n)))?;
    Ok(Bytes::from(writer.into_inner()))
}

/// The numbers of the manifest objects in `remote`, ascending.
///
/// # Errors
/// [`Error::Remote`] when the listing fails.
pub fn manifest_numbers(remote: &Remote) -> Result<Vec<u64>> {
    let mut numbers: Vec<u64> = remote
        .list(MANIFEST_DIR)?
        .iter()
        .filter_map(|l| l.name.parse().ok())
        .collect();
    numbers.sort_unstable();
    Ok(numbers)
}

/// Reads manifest object `n`.
///
/// # Errors
/// [`Error::Remote`]; [`Error::Corrupt`] naming the object for bytes that do not replay.
pub fn read_manifest(remote: &Remote, n: u64) -> Result<ManifestState> {
    let name = manifest_name(n);
    let bytes = remote.get(&name)?;
    let replayed = manifest::replay(&bytes, n)
        .map_err(|(at, reason)| Error::corrupt(format!("{remote}/{name}"), at, reason))?;
    if let Some((at, reason)) = replayed.torn_tail {
        return Err(Error::corrupt(format!("{remote}/{name}"), at, reason));
    }
    Ok(replayed.state)
}

/// The newest manifest object's number and state; `None` when there is none.
///
/// # Errors
/// As [`manifest_numbers`] and [`read_manifest`].
pub fn newest(remote: &Remote) -> Result<Option<(u64, ManifestState)>> {
    match manifest_numbers(remote)?.last() {
        Some(&n) => Ok(Some((n, read_manifest(remote, n)?))),
        None => Ok(None),
    }
}

/// Downloads segment file `id` into `dir` unless it is there: written under a temporary
/// name, synced, renamed.
///
/// # Errors
/// [`Error::Remote`]; [`Error::Io`].
pub fn fetch_segment(remote: &Remote, storage: &dyn Storage, dir: &Path, id: u64) -> Result<()> {
    let path = dir.join(memforest_sst::file_name(id));
    if storage.file_len(&path).is_ok() {
        return Ok(());
    }
    let bytes = remote.get(&segment_name(id))?;
    let tmp = dir.join(format!("{}.tmp", memforest_sst::file_name(id)));
    let mut f = storage.create(&tmp).map_err(Error::io("create", &tmp))?;
    f.write_all(&bytes).map_err(Error::io("write", &tmp))?;
    f.sync_data().map_err(Error::io("fdatasync", &tmp))?;
    drop(f);
    storage
        .rename(&tmp, &path)
        .map_err(Error::io("rename", &tmp))
}

/// Uploads segment files ahead of the manifest append that names them, outside the
/// manifest lock (so a slow upload never holds up the WAL's manifest edits), and remembers
/// them so that the append does not upload them again. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Uploader {
    remote: Arc<Remote>,
    /// Ids uploaded and not yet named by an append.
    done: Arc<parking_lot::Mutex<std::collections::BTreeSet<u64>>>,
}

impl Uploader {
    /// Uploads segment file `id` from `dir` as a new object (see the module docs).
    ///
    /// # Errors
    /// [`Error::Io`] reading it; [`Error::SegmentConflict`] when the object exists with
    /// other bytes; [`Error::Remote`].
    pub fn upload(&self, storage: &dyn Storage, dir: &Path, id: u64) -> Result<()> {
        let path = dir.join(memforest_sst::file_name(id));
        let bytes = Bytes::from(storage.read(&path).map_err(Error::io("read", &path))?);
        let name = segment_name(id);
        match self.remote.create(&name, bytes.clone()) {
            Ok(()) => {}
            Err(memforest_object::Error::AlreadyExists { object }) => {
                if self.remote.get(&name)? != bytes {
                    return Err(Error::SegmentConflict { object });
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.done.lock().insert(id);
        Ok(())
    }

    /// Uploads `id` unless [`Uploader::upload`] did; forgets it either way.
    fn ensure(&self, storage: &dyn Storage, dir: &Path, id: u64) -> Result<()> {
        if self.done.lock().remove(&id) {
            return Ok(());
        }
        self.upload(storage, dir, id)?;
        self.done.lock().remove(&id);
        Ok(())
    }
}

/// A writer's hold on the manifest objects: its last created number and whether another
/// writer fenced it.
#[derive(Debug)]
pub struct Publisher {
    remote: Arc<Remote>,
    uploader: Uploader,
    /// The directory whose [`crate::remote_binding`] record follows `epoch`.
    storage: Arc<dyn Storage>,
    dir: std::path::PathBuf,
    /// The number of the last manifest object this writer created.
    epoch: u64,
    /// The location's store id.
    store: String,
    /// The number the directory's record holds (under `store`).
    recorded: Option<u64>,
    /// What that object describes.
    published: ManifestState,
    /// Set once a create found its number taken.
    fenced: Option<String>,
}

/// The next file id a writer may use without meeting a segment object already stored:
/// one past the largest stored id (1 for none).
///
/// # Errors
/// [`Error::Remote`] when the listing fails.
pub fn free_file_id(remote: &Remote) -> Result<u64> {
    Ok(remote
        .list(SST_DIR)?
        .iter()
        .filter_map(|l| crate::orphans::segment_id(&l.name))
        .max()
        .map_or(1, |id| id + 1))
}

/// File ids a claim reserves: a writer whose claim created manifest object `c` allocates
/// from `c * CLAIM_ID_SPAN` on, so a writer fenced while it still flushes (its ids below
/// the next claim's span) never uploads a file under an id the writer that fenced it
/// allocates.
pub const CLAIM_ID_SPAN: u64 = 1 << 32;

/// Whether `theirs` describes exactly the segments and flushed seqno of `ours`: publishing
/// `ours` over it then drops nothing.
fn holds_same(ours: &ManifestState, theirs: &ManifestState) -> bool {
    ours.segments == theirs.segments && ours.flushed_seqno == theirs.flushed_seqno
}

impl Publisher {
    /// Claims the next manifest number for a writer whose directory `dir` holds `state`
    /// (see the module doc), publishing `state` after uploading the live segment files the
    /// newest manifest object does not name (those of a store that had no object store
    /// before, or of appends whose publication failed). The writer then allocates file ids
    /// from at least [`free_file_id`].
    ///
    /// # Errors
    /// [`Error::ForeignDirectory`] when the directory belongs to another store than the
    /// location's (and the location holds a manifest); [`Error::StaleLocal`] when the
    /// newest manifest object is neither this directory's last creation nor a
    /// description of `state`'s segments; [`Error::Fenced`] when
    /// another writer claimed the number first; [`Error::SegmentConflict`];
    /// [`Error::Remote`]; [`Error::Io`] reading a segment file or the record.
    pub fn claim(
        remote: Arc<Remote>,
        storage: &Arc<dyn Storage>,
        dir: &Path,
        state: &ManifestState,
        newest: Option<(u64, &ManifestState)>,
    ) -> Result<Self> {
        let binding = crate::remote_binding::read(&**storage, dir)?;
        let store = crate::remote_binding::ensure_store_id(&remote)?;
        if newest.is_some() {
            crate::remote_binding::check(&remote, dir, binding.as_ref(), Some(&store))?;
        }
        // A record of another store (of a location since emptied) says nothing here.
        let recorded = binding.filter(|b| b.store == store).map(|b| b.epoch);
        if let Some((n, theirs)) = newest {
            if recorded != Some(n) && !holds_same(state, theirs) {
                return Err(Error::StaleLocal {
                    object: format!("{remote}/{}", manifest_name(n)),
                });
            }
        }
        let uploader = Uploader {
            remote: Arc::clone(&remote),
            done: Arc::default(),
        };
        let named = |id: u64| {
            newest.is_some_and(|(_, theirs)| theirs.segments.iter().any(|(_, s)| s.id == id))
        };
        for (_, seg) in &state.segments {
            if !named(seg.id) {
                uploader.upload(&**storage, dir, seg.id)?;
            }
        }
        uploader.done.lock().clear();
        let mut p = Self {
            remote,
            uploader,
            storage: Arc::clone(storage),
            dir: dir.to_path_buf(),
            epoch: newest.map_or(0, |(n, _)| n),
            store,
            recorded,
            published: ManifestState::default(),
            fenced: None,
        };
        // Bound to this store before the creation, so that a crash after it leaves no
        // record of another store's number.
        if p.recorded.is_none() {
            p.write_record(0)?;
        }
        p.create(state)?;
        Ok(p)
    }

    /// Creates the next manifest object describing `state`.
    fn create(&mut self, state: &ManifestState) -> Result<()> {
        let n = self.epoch + 1;
        match self.remote.create(&manifest_name(n), encode(n, state)?) {
            Ok(()) => {
                self.epoch = n;
                self.published = remote_view(state);
                self.record()
            }
            Err(memforest_object::Error::AlreadyExists { object }) => {
                self.fenced = Some(object);
                Err(self.fenced_error())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Brings the directory's record up to the last created number.
    fn record(&mut self) -> Result<()> {
        if self.recorded != Some(self.epoch) {
            self.write_record(self.epoch)?;
        }
        Ok(())
    }

    /// Replaces the directory's record with this store and `epoch`.
    fn write_record(&mut self, epoch: u64) -> Result<()> {
        let binding = crate::remote_binding::Binding {
            store: self.store.clone(),
            epoch,
        };
        crate::remote_binding::write(&*self.storage, &self.dir, &binding)?;
        self.recorded = Some(epoch);
        Ok(())
    }

    fn fenced_error(&self) -> Error {
        Error::Fenced {
            object: self.fenced.clone().unwrap_or_default(),
            epoch: self.epoch,
        }
    }

    /// Refuses once fenced.
    ///
    /// # Errors
    /// [`Error::Fenced`].
    pub fn check(&self) -> Result<()> {
        match self.fenced {
            Some(_) => Err(self.fenced_error()),
            None => Ok(()),
        }
    }

    /// Uploads the segment files `edits` add to `state` (not those already live: a trivial
    /// move re-adds its inputs), reading them from `dir`, unless the [`Uploader`] did.
    ///
    /// # Errors
    /// [`Error::Fenced`]; [`Error::Io`] reading a file; [`Error::Remote`].
    pub fn upload_added(
        &mut self,
        storage: &dyn Storage,
        dir: &Path,
        state: &ManifestState,
        edits: &[Edit],
    ) -> Result<()> {
        self.check()?;
        let live = |id: u64| state.segments.iter().any(|(_, s)| s.id == id);
        let added = edits.iter().flat_map(|e| match e {
            Edit::NewSegment { segment, .. } => vec![segment.id],
            Edit::Compaction { outputs, .. } => outputs.iter().map(|(_, s)| s.id).collect(),
            _ => Vec::new(),
        });
        let mut added = added.filter(|&id| !live(id)).peekable();
        if added.peek().is_some() {
            self.check_store()?;
        }
        for id in added {
            self.uploader.ensure(storage, dir, id)?;
        }
        Ok(())
    }

    /// Fences this writer when the location's store id is no longer the one it claimed
    /// under: the location was emptied (and perhaps written again by another writer)
    /// while it ran, so what it would upload or publish would name objects that are gone
    /// or another store's. Its writes stay in its directory.
    ///
    /// # Errors
    /// [`Error::Fenced`] naming the store-id object; [`Error::Remote`].
    fn check_store(&mut self) -> Result<()> {
        let now = crate::remote_binding::store_id(&self.remote)?;
        if now.as_deref() == Some(self.store.as_str()) {
            return Ok(());
        }
        self.fenced = Some(format!(
            "{}/{}",
            self.remote,
            crate::remote_binding::STORE_ID_OBJECT
        ));
        Err(self.fenced_error())
    }

    /// Publishes `state` as the next manifest object when what a manifest object carries
    /// changed since the last one, then records its number in the directory.
    ///
    /// # Errors
    /// [`Error::Fenced`] (and every later call fails so); [`Error::Remote`] or
    /// [`Error::Io`] writing the record (the next call tries again).
    pub fn publish(&mut self, state: &ManifestState) -> Result<()> {
        self.check()?;
        if remote_view(state) == self.published {
            return self.record();
        }
        self.check_store()?;
        self.create(state)
    }

    /// The number of the last manifest object this writer created.
    #[must_use]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The first file id of this writer's span (see [`CLAIM_ID_SPAN`]), right after its
    /// claim.
    #[must_use]
    pub fn id_span_start(&self) -> u64 {
        self.epoch.saturating_mul(CLAIM_ID_SPAN)
    }

    /// The uploader that works ahead of this publisher's appends.
    #[must_use]
    pub fn uploader(&self) -> Uploader {
        self.uploader.clone()
    }
}

/// Which objects [`collect_garbage`] may delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcPolicy {
    /// The newest manifest objects kept whatever their age (at least 1).
    pub keep_manifests: usize,
    /// How long a superseded manifest object (and every segment object it names) is kept
    /// after its successor was published: longer than any reader serves an older state
    /// (a replica between refreshes, a read that started before a refresh), and longer
    /// than an upload takes to be named by a manifest.
    pub grace: std::time::Duration,
}

impl Default for GcPolicy {
    fn default() -> Self {
        Self {
            keep_manifests: 10,
            grace: std::time::Duration::from_secs(600),
        }
    }
}

/// What [`collect_garbage`] deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Numbers of the deleted manifest objects.
    pub manifests: Vec<u64>,
    /// Ids of the deleted segment objects.
    pub segments: Vec<u64>,
}

/// Deletes what no live manifest needs, as of `now`. A manifest object is live when it is
/// among the newest `policy.keep_manifests` or its successor is younger than
/// `policy.grace`; every other manifest object is deleted. A segment object is deleted
/// when no live manifest names it and it is older than `policy.grace` (an upload the
/// manifest does not name yet is younger). A manifest that does not read stops the
/// collection before anything is deleted.
///
/// # Errors
/// [`Error::Remote`]; [`Error::Corrupt`] for a live manifest object that does not read.
pub fn collect_garbage(
    remote: &Remote,
    policy: &GcPolicy,
    now: std::time::SystemTime,
) -> Result<GcReport> {
    let old =
        |at: std::time::SystemTime| now.duration_since(at).is_ok_and(|age| age >= policy.grace);
    let mut manifests: Vec<(u64, std::time::SystemTime)> = remote
        .list(MANIFEST_DIR)?
        .into_iter()
        .filter_map(|l| Some((l.name.parse().ok()?, l.last_modified)))
        .collect();
    manifests.sort_unstable();
    let keep_from = manifests.len().saturating_sub(policy.keep_manifests.max(1));
    let mut live = Vec::new();
    let mut dead = Vec::new();
    for (i, &(n, _)) in manifests.iter().enumerate() {
        let superseded = manifests.get(i + 1).map(|&(_, at)| at);
        if i >= keep_from || superseded.is_some_and(|at| !old(at)) {
            live.push(n);
        } else {
            dead.push(n);
        }
    }
    let mut named = std::collections::BTreeSet::new();
    for &n in &live {
        named.extend(read_manifest(remote, n)?.segments.iter().map(|(_, s)| s.id));
    }
    let mut report = GcReport::default();
    for listed in remote.list(SST_DIR)? {
        let Some(id) = crate::orphans::segment_id(&listed.name) else {
            continue;
        };
        if !named.contains(&id) && old(listed.last_modified) {
            remote.delete(&segment_name(id))?;
            report.segments.push(id);
        }
    }
    for n in dead {
        remote.delete(&manifest_name(n))?;
        report.manifests.push(n);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use memforest_object::object_store::memory::InMemory;

    use super::*;

    /// An uploader of segment file `id` holding `bytes`, in a directory of its own.
    fn upload(remote: &Arc<Remote>, id: u64, bytes: &[u8]) -> Result<()> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(memforest_sst::file_name(id)), bytes).unwrap();
        let uploader = Uploader {
            remote: Arc::clone(remote),
            done: Arc::default(),
        };
        uploader.upload(&*memforest_io::default_storage(), dir.path(), id)
    }

    #[test]
    fn a_segment_object_is_never_replaced() {
        let remote = Arc::new(Remote::new(Arc::new(InMemory::new()), "db").unwrap());
        upload(&remote, 7, b"the first writer's file").unwrap();
        upload(&remote, 7, b"the first writer's file").unwrap();
        match upload(&remote, 7, b"another writer's file") {
            Err(Error::SegmentConflict { object }) => {
                assert!(object.ends_with(&segment_name(7)), "{object}");
            }
            other => panic!("expected SegmentConflict, got {other:?}"),
        }
        assert_eq!(
            &remote.get(&segment_name(7)).unwrap()[..],
            b"the first writer's file"
        );
        assert_eq!(free_file_id(&remote).unwrap(), 8);
    }
}
