//! Read replicas: a directory that caches the segment files of an object store's newest
//! manifest and follows newer ones ([`crate::Db::open_replica`], [`crate::Db::refresh`]).
//!
//! The replica's directory is its own: it holds a local manifest copied from the manifest
//! object it serves and copies of segment files that manifest names (fetched whole when
//! opened; all of them, or under a bound, where reads fetch blocks by range instead:
//! [`crate::cache`]), nothing else. A refresh fetches the files a newer manifest object adds and
//! deletes the cached files it drops once no reader holds them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use memforest_io::Storage;
use memforest_object::Remote;

use crate::core::Core;
use crate::error::{Error, Result};
use crate::manifest::{self, Manifest, ManifestState};
use crate::open::{load_tombstones, open_listed, WAL_DIR};
use crate::options::Options;
use crate::orphans::segment_id;
use crate::remote;
use crate::version::{Segment, Version};

/// What a replica follows: the object store, its store id when it has one
/// ([`crate::remote_binding`]), and the number of the manifest object served.
#[derive(Debug)]
pub(crate) struct Following {
    pub remote: Arc<Remote>,
    pub store: Option<crate::remote_binding::Binding>,
    pub serving: parking_lot::Mutex<u64>,
}

/// The newest manifest object of `remote`: its number and state.
///
/// # Errors
/// [`Error::NoRemoteManifest`]; [`Error::Remote`]; [`Error::Corrupt`].
pub(crate) fn newest(remote: &Remote) -> Result<(u64, ManifestState)> {
    remote::newest(remote)?.ok_or_else(|| Error::NoRemoteManifest {
        location: remote.to_string(),
    })
}

/// Refuses a directory a replica may not take, changing nothing: one holding a WAL (a
/// writer's) and one holding files but neither a store nor a replica's record (a user's
/// directory: the install deletes files named like segment files).
///
/// # Errors
/// [`Error::InvalidArgument`]; [`Error::Io`] listing it.
pub(crate) fn check_dir(fs: &dyn Storage, dir: &Path) -> Result<()> {
    let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
    if names.iter().any(|n| n == WAL_DIR) {
        return Err(Error::InvalidArgument(
            "a replica needs a directory of its own: this one holds a writer's WAL",
        ));
    }
    let ours = |n: &str| {
        n == crate::lock::LOCK_FILE
            || n == manifest::CURRENT
            || n == crate::remote_binding::BINDING_FILE
    };
    let foreign = !names.iter().any(|n| n == manifest::CURRENT) && !names.iter().all(|n| ours(n));
    if foreign {
        return Err(Error::InvalidArgument(
            "a replica needs an empty directory or one it used before: this one holds other files",
        ));
    }
    Ok(())
}

/// Makes `dir` (one [`check_dir`] accepted) describe `state`: a local manifest holding it
/// (`CURRENT` naming it) in place of any earlier one, and no cached segment file it does
/// not name.
///
/// # Errors
/// [`Error::Io`].
pub(crate) fn install(storage: &Arc<dyn Storage>, dir: &Path, state: &ManifestState) -> Result<()> {
    let fs = &**storage;
    let names = fs.list_dir(dir).map_err(Error::io("read dir", dir))?;
    let live = |id: u64| state.segments.iter().any(|(_, s)| s.id == id);
    for name in names {
        let stale = manifest::parse_file_name(&name).is_some()
            || segment_id(&name).is_some_and(|id| !live(id));
        if stale {
            let path = dir.join(&name);
            fs.remove_file(&path).map_err(Error::io("remove", &path))?;
        }
    }
    let id = state.next_file_id.max(1);
    Manifest::create(storage, dir, id, state.clone()).map(drop)
}

/// Moves `core` (opened with `Options::remote`) to a manifest object holding `state`:
/// fetches and opens the segment files it adds (with a cache: opens them on first read), marks those it drops obsolete, and publishes everything up to its
/// flushed seqno.
///
/// # Errors
/// [`Error::Remote`] for a failed download (the replica keeps serving what it served);
/// [`Error::Sst`] for a file that does not open; [`Error::InvalidArgument`] for a level
/// beyond `num_levels`.
pub(crate) fn follow(core: &Core, state: &ManifestState) -> Result<()> {
    let options: &Options = &core.options;
    let current = core.state();
    let mut cached: HashMap<u64, Arc<Segment>> = current
        .version
        .all()
        .map(|(_, s)| (s.info.id, Arc::clone(s)))
        .collect();
    let mut segments = Vec::with_capacity(state.segments.len());
    for (level, info) in &state.segments {
        segments.push(match cached.remove(&info.id) {
            Some(seg) => (usize::from(*level), seg),
            None => open_listed(
                &options.storage,
                &core.budgets,
                core.cache.as_ref(),
                options,
                &core.dir,
                *level,
                info,
            )?,
        });
    }
    let version = Version::from_segments(options.num_levels, segments);
    let tombstones = load_tombstones(&core.dir, &version, &current.active)?;
    for gone in cached.values() {
        gone.mark_obsolete();
    }
    core.install_version(Arc::new(version), tombstones);
    core.advance_visible(state.flushed_seqno);
    Ok(())
}
