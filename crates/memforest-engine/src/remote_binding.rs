//! Which store on an object store a directory belongs to, and the manifest object its
//! writer created last.
//!
//! A location holds a store id (object `store-id`: 32 hex digits and a newline), created
//! by the first writer with a conditional create. A location emptied and written again
//! gets a new id. A directory opened on a location (a writer's or a replica's) records
//! the id in `REMOTE_STORE`, with the number of the last manifest object its writer
//! created (0 for none): the id, a space, the number, a newline, replaced atomically.
//!
//! A directory whose record names another id than its location's holds another store's
//! state (the location was emptied and rewritten, or the directory served another
//! location): its files trusted by id could be another store's, and publishing from it
//! would replace the location's history, so every open refuses it
//! ([`Error::ForeignDirectory`]). A writer's directory whose local manifest is ahead of
//! the location (an append whose publication failed, then the process stopped) may
//! publish its state only if the newest manifest object is its own: the number says so,
//! and only under the same id.

use std::path::Path;

use memforest_io::Storage;
use memforest_object::Remote;

use crate::error::{Error, Result};
use crate::manifest;

/// File name of the record in the database directory.
pub const BINDING_FILE: &str = "REMOTE_STORE";
/// Object name of the location's store id.
pub const STORE_ID_OBJECT: &str = "store-id";

/// A directory's record: the store it belongs to and its writer's last manifest object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The location's store id.
    pub store: String,
    /// The number of the last manifest object this directory's writer created; 0 for none
    /// (a replica's directory, or a writer's before its first creation).
    pub epoch: u64,
}

/// The directory's record; `None` when it has none (it never opened a location).
///
/// # Errors
/// [`Error::Io`] reading it; [`Error::Corrupt`] naming it when it is not an id, a space,
/// a number and a newline.
pub fn read(storage: &dyn Storage, dir: &Path) -> Result<Option<Binding>> {
    let path = dir.join(BINDING_FILE);
    if !storage.exists(&path) {
        return Ok(None);
    }
    let bytes = storage.read(&path).map_err(Error::io("read", &path))?;
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.strip_suffix('\n'))
        .and_then(|line| line.split_once(' '))
        .filter(|(store, _)| is_store_id(store))
        .and_then(|(store, n)| {
            Some(Binding {
                store: store.to_owned(),
                epoch: n.parse().ok()?,
            })
        })
        .map(Some)
        .ok_or_else(|| Error::corrupt(&path, 0, "not a store id and a manifest number"))
}

/// Replaces the directory's record with `binding`.
///
/// # Errors
/// [`Error::Io`]; the previous record then stands.
pub fn write(storage: &dyn Storage, dir: &Path, binding: &Binding) -> Result<()> {
    let text = format!("{} {}\n", binding.store, binding.epoch);
    manifest::replace_file(storage, dir, BINDING_FILE, text.as_bytes())
}

/// Whether `s` reads as a store id: 32 lowercase hex digits.
fn is_store_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The location's store id; `None` when it has none yet.
///
/// # Errors
/// [`Error::Remote`]; [`Error::Corrupt`] naming the object when it is not an id.
pub fn store_id(remote: &Remote) -> Result<Option<String>> {
    let Some(bytes) = remote.get_if_exists(STORE_ID_OBJECT)? else {
        return Ok(None);
    };
    std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.strip_suffix('\n'))
        .filter(|id| is_store_id(id))
        .map(|id| Some(id.to_owned()))
        .ok_or_else(|| {
            Error::corrupt(
                format!("{remote}/{STORE_ID_OBJECT}"),
                0,
                "not a store id and a newline",
            )
        })
}

/// The location's store id, created when it has none (by a conditional create: of two
/// writers creating at once, both end with the one that was stored).
///
/// # Errors
/// As [`store_id`].
pub fn ensure_store_id(remote: &Remote) -> Result<String> {
    if let Some(id) = store_id(remote)? {
        return Ok(id);
    }
    let id = new_store_id();
    match remote.create(STORE_ID_OBJECT, format!("{id}\n").into()) {
        Ok(()) => Ok(id),
        Err(memforest_object::Error::AlreadyExists { .. }) => {
            store_id(remote)?.ok_or_else(|| Error::NoRemoteManifest {
                location: remote.to_string(),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// 128 random bits in hex: the process's random hash keys over the time and process id.
fn new_store_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.write_u8(salt);
        h.finish()
    };
    format!("{:016x}{:016x}", half(0), half(1))
}

/// Refuses `dir` when its record names another store than `store` (the location's id,
/// `None` for a location that has none).
///
/// # Errors
/// [`Error::ForeignDirectory`].
pub fn check(
    remote: &Remote,
    dir: &Path,
    recorded: Option<&Binding>,
    store: Option<&str>,
) -> Result<()> {
    match recorded {
        Some(b) if Some(b.store.as_str()) != store => Err(Error::ForeignDirectory {
            dir: dir.to_path_buf(),
            location: remote.to_string(),
        }),
        _ => Ok(()),
    }
}

/// Refuses to change `dir` without its location: a directory bound to a store on an
/// object store may hold only some of its live segment files (a bounded cache), and what
/// a local open or repair made of it would be published over the location at its next
/// open there.
///
/// # Errors
/// [`Error::NeedsLocation`]; as [`read`].
pub fn refuse_without_location(storage: &dyn Storage, dir: &Path) -> Result<()> {
    match read(storage, dir)? {
        Some(_) => Err(Error::NeedsLocation {
            dir: dir.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// Checks a replica's directory against the location, changing nothing: refused when its
/// record names another store. The binding the replica follows (the record, or a new one
/// naming the location's store id when the directory has none; `None` for a location
/// without an id), and whether it is new (to be recorded once the directory is installed).
///
/// # Errors
/// [`Error::ForeignDirectory`]; as [`store_id`] and [`read`].
pub fn check_replica(
    storage: &dyn Storage,
    dir: &Path,
    remote: &Remote,
) -> Result<(Option<Binding>, bool)> {
    let recorded = read(storage, dir)?;
    let store = store_id(remote)?;
    check(remote, dir, recorded.as_ref(), store.as_deref())?;
    Ok(match (recorded, store) {
        (None, Some(store)) => (Some(Binding { store, epoch: 0 }), true),
        (recorded, _) => (recorded, false),
    })
}

/// Refuses `dir` when its record names another store than the location's (and the
/// location holds a manifest), changing nothing: the check a repair makes before it
/// touches the directory.
///
/// # Errors
/// [`Error::ForeignDirectory`]; as [`store_id`] and [`read`]; [`Error::Remote`] listing.
pub fn check_writer(storage: &dyn Storage, dir: &Path, remote: &Remote) -> Result<()> {
    if crate::remote::manifest_numbers(remote)?.is_empty() {
        return Ok(());
    }
    let recorded = read(storage, dir)?;
    // A location whose id is gone: the claim decides (see `Publisher::claim`).
    let Some(store) = store_id(remote)? else {
        return Ok(());
    };
    check(remote, dir, recorded.as_ref(), Some(&store))
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
        let store = new_store_id();
        assert!(is_store_id(&store), "{store}");
        for epoch in [0, 7, 12] {
            let b = Binding {
                store: store.clone(),
                epoch,
            };
            write(&*storage, dir.path(), &b).unwrap();
            assert_eq!(read(&*storage, dir.path()).unwrap(), Some(b));
        }
        for bad in ["12\n", "zz 12\n", &format!("{store} 12")] {
            std::fs::write(dir.path().join(BINDING_FILE), bad).unwrap();
            let err = read(&*storage, dir.path()).unwrap_err();
            assert!(err.to_string().contains(BINDING_FILE), "{bad}: {err}");
        }
    }

    #[test]
    fn ids_differ_and_a_location_keeps_its_first() {
        assert_ne!(new_store_id(), new_store_id());
        let store = std::sync::Arc::new(memforest_object::object_store::memory::InMemory::new());
        let remote = Remote::new(store, "db").unwrap();
        assert_eq!(store_id(&remote).unwrap(), None);
        let id = ensure_store_id(&remote).unwrap();
        assert_eq!(ensure_store_id(&remote).unwrap(), id);
        assert_eq!(store_id(&remote).unwrap(), Some(id));
    }
}
