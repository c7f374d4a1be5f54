//! The engine's error type.

use std::path::PathBuf;
use std::sync::Arc;

use memforest_sst::SstError;
use memforest_wal::WalError;

/// Everything that can go wrong opening, writing or reading a [`crate::Db`].
///
/// Errors about bytes on disk name the file and the byte offset where decoding failed:
/// [`Error::Corrupt`] for `CURRENT` and the manifest, [`SstError::Corrupt`] (inside
/// [`Error::Sst`]) for a segment file, [`WalError::Corruption`] (inside [`Error::Wal`]) for
/// the write-ahead log, whose tolerance the configured `RecoveryMode` decides.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`"open"`, `"fsync"`, `"rename"`, ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `CURRENT` or a manifest file does not decode.
    #[error("corrupt {path} at byte offset {offset}: {reason}")]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// Byte offset in the file where the problem was found.
        offset: u64,
        /// What was expected there.
        reason: String,
    },
    /// `path` has no `CURRENT`: it is not a store, or a store that lost its `CURRENT`
    /// (`memforest repair` rebuilds one from the segment files and the WAL). A read-write
    /// open creates a new store only in an empty directory; nothing was changed.
    #[error(
        "{} is not a MemForest store: it has no CURRENT file{}; nothing was changed (if it \
         is a store that lost its CURRENT, `memforest repair` rebuilds it from its segment \
         files and WAL)",
        path.display(),
        listing(found)
    )]
    NotAStore {
        /// The directory.
        path: PathBuf,
        /// Names of the entries found in it (besides the lock file).
        found: Vec<String>,
    },
    /// A change was asked of a handle opened with [`crate::Db::open_read_only`].
    #[error("the database was opened read-only")]
    ReadOnly,
    /// Another handle (this process or another) holds the directory's lock file.
    #[error("database {path} is locked by another open handle")]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// The write-ahead log failed (corruption beyond the recovery mode, I/O, poisoning).
    #[error(transparent)]
    Wal(#[from] WalError),
    /// A segment file failed (corruption naming file and offset, I/O).
    #[error(transparent)]
    Sst(#[from] SstError),
    /// An argument is outside what the engine accepts (key too long, empty tenant, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// A batch that precedes this one in seqno order failed to reach the WAL (which is then
    /// poisoned): this batch is in the log but is not acknowledged, and the database
    /// refuses further writes until it is reopened.
    #[error("an earlier batch failed to reach the WAL; reopen the database")]
    WalFailed,
    /// A background flush or compaction failed earlier; the database refuses further
    /// writes (reads still work) until it is reopened. The memory layer reports an engine
    /// error of its own background work (summaries, extraction) the same way.
    #[error("background work failed: {0}")]
    Background(Arc<Error>),
    /// The object store failed a request (an upload, a download, a listing).
    #[error(transparent)]
    Remote(#[from] memforest_object::Error),
    /// Another writer took the store over (it created manifest object `object`, which
    /// this writer, epoch `epoch`, needed next), or the location was emptied while this
    /// writer ran (`object` is then the store-id object, gone or naming another store).
    /// This handle refuses every further change; writes it acknowledged since its last
    /// publication live only in its local directory.
    #[error(
        "fenced: {object} is not this writer's (another writer took the store over, or the \
         location was emptied; this writer's epoch is {epoch}); this handle accepts no more \
         changes"
    )]
    Fenced {
        /// Full path of the manifest object another writer created, or of the store-id
        /// object.
        object: String,
        /// The number of the last manifest object this writer created.
        epoch: u64,
    },
    /// The object store's newest manifest is neither one this directory's writer created
    /// last (see [`crate::remote_binding`]) nor the state this directory holds: another
    /// writer moved the store on after this directory last published. The directory may
    /// be behind the location (it missed the other writer's writes) or ahead of it too
    /// (it went on writing after it was fenced): either way publishing its state would
    /// drop what the other writer published, so the open refuses and changes nothing. To
    /// continue from the object store's state, open the location from a new, empty
    /// directory. Writes only this directory holds stay in it: open it read-only
    /// ([`crate::Db::open_read_only`], without the object store) to read them, and write
    /// them again through the new writer.
    #[error(
        "the object store's newest manifest {object} was written by another writer after \
         this directory last published (this directory is behind it, or went on writing \
         after it was fenced); nothing was changed. To continue from the object store's \
         state, open the location from a new, empty directory; writes only this directory \
         holds can be read by opening it read-only as a local directory, then written again"
    )]
    StaleLocal {
        /// Full path of the newest manifest object.
        object: String,
    },
    /// Directory `dir` belongs to another store than the one at `location` now: the
    /// location was emptied and written again, or the directory was opened on another
    /// location ([`crate::remote_binding`]). Its cached files and its state are that
    /// other store's, so the open (or refresh) refuses and changes nothing: open the
    /// location with an empty directory.
    #[error(
        "directory {} belongs to another store than {location} holds now (the location \
         was emptied and written again, or the directory was used with another location); \
         open it with an empty directory",
        dir.display()
    )]
    ForeignDirectory {
        /// The directory.
        dir: PathBuf,
        /// The object-store location.
        location: String,
    },
    /// Directory `dir` is the local directory of a store on an object store
    /// ([`crate::remote_binding`]): a read-write open or a repair needs its location
    /// (`Options::remote`), since the directory may hold only some of the store's files
    /// and what was made of it would be published at the next open on the location.
    #[error(
        "directory {} belongs to a store on an object store: open or repair it with its \
         location (Options::remote; the CLI's --db URL --cache-dir DIR)",
        dir.display()
    )]
    NeedsLocation {
        /// The directory.
        dir: PathBuf,
    },
    /// Segment object `object` exists with other bytes than this writer's segment file of
    /// that id: another writer is uploading to the same location. The upload fails, and
    /// with it the flush or compaction that made the file (nothing is recorded; the object
    /// is left as it is).
    #[error(
        "segment object {object} exists with other contents: another writer is using \
         this location"
    )]
    SegmentConflict {
        /// Full path of the segment object.
        object: String,
    },
    /// A replica was opened on an object-store location that holds no manifest.
    #[error("{location} holds no MemForest manifest")]
    NoRemoteManifest {
        /// The location (store and prefix).
        location: String,
    },
}

/// `" but holds N entries (a, b, ...)"` for a non-empty directory listing (at most five
/// names), `""` for an empty one.
fn listing(found: &[String]) -> String {
    if found.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = found.iter().take(5).map(String::as_str).collect();
    let more = if found.len() > names.len() {
        ", ..."
    } else {
        ""
    };
    format!(
        " but holds {} entries ({}{more})",
        found.len(),
        names.join(", ")
    )
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What `memforest repair` (`Db::repair`) does about a kind of damage
/// ([`Error::repair_hint`]), so a refusal can tell the user which repair mends it and at
/// what cost (docs/durability.md, Repair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RepairHint {
    /// Damage in the WAL: a salvage repair keeps every write that reads back, reports
    /// what is lost, and sets the damaged segment aside.
    Salvage,
    /// Damage in `CURRENT`, a manifest or a segment file: a repair rebuilds the manifest
    /// from the files that read back whole and the WAL, and sets a segment file that does
    /// not read back whole aside (kept on disk as `.quarantine`; the writes only it held
    /// are no longer read).
    Rebuild,
}

impl RepairHint {
    /// The repair that mends damage in the store file at `path` by its name: a WAL segment
    /// (`.wal`), `CURRENT`, a manifest (`MANIFEST-*`) or a segment file (`.sst`).
    #[must_use]
    pub(crate) fn of_file(path: &std::path::Path) -> Option<Self> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".wal") {
            Some(Self::Salvage)
        } else if name == "CURRENT" || name.starts_with("MANIFEST-") || name.ends_with(".sst") {
            Some(Self::Rebuild)
        } else {
            None
        }
    }
}

/// The reason of the [`Error::Corrupt`] for a WAL batch that reads whole but holds an
/// engine op this version does not know.
pub(crate) const UNKNOWN_OP: &str = "unknown engine op in a WAL batch";

impl Error {
    /// An [`Error::Io`] for `op` on `path`.
    pub(crate) fn io(
        op: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { op, path, source }
    }

    /// What a repair does about this error, when it is damage on disk that one mends:
    /// [`RepairHint::Salvage`] for damage in a WAL segment (a bad record, [`Error::Wal`]
    /// with `WalError::Corruption`, or a segment missing or shorter than the manifest
    /// records, [`Error::Corrupt`] naming a `.wal` file), which only a repair under
    /// `RecoveryMode::SkipAnyCorrupted` (`memforest repair --salvage`) reads past;
    /// [`RepairHint::Rebuild`] for damage in `CURRENT`, a manifest or a segment file
    /// ([`Error::Corrupt`] naming one, [`SstError::Corrupt`]); `None` otherwise (an object
    /// store's objects and binding file, which a repair reads first and refuses alike; a
    /// WAL batch with an unknown op, which no repair reads past).
    #[must_use]
    pub fn repair_hint(&self) -> Option<RepairHint> {
        match self {
            Self::Wal(WalError::Corruption { .. }) => Some(RepairHint::Salvage),
            // A batch that reads whole but holds an op this version does not know fails a
            // salvage repair too.
            Self::Corrupt { reason, .. } if reason == UNKNOWN_OP => None,
            Self::Corrupt { path, .. } => RepairHint::of_file(path),
            Self::Sst(SstError::Corrupt { .. }) => Some(RepairHint::Rebuild),
            Self::Background(inner) => inner.repair_hint(),
            _ => None,
        }
    }

    /// An [`Error::Corrupt`].
    pub(crate) fn corrupt(
        path: impl Into<PathBuf>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        Self::Corrupt {
            path: path.into(),
            offset,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_names_the_repair_that_mends_it_only_where_one_does() {
        let corrupt = |path: &str, reason: &str| Error::corrupt(path, 0, reason);
        let hint = |path: &str| corrupt(path, "checksum mismatch").repair_hint();
        assert_eq!(
            hint("db/wal/00000000000000000003.wal"),
            Some(RepairHint::Salvage)
        );
        for rebuilt in [
            "db/CURRENT",
            "db/MANIFEST-000004",
            "db/00000000000000000009.sst",
        ] {
            assert_eq!(hint(rebuilt), Some(RepairHint::Rebuild), "{rebuilt}");
        }
        // An object store's objects and binding file, the store directory itself (a range
        // tombstone that does not decode), a set-aside file: no repair reads past them.
        for other in [
            "db/REMOTE_STORE",
            "bucket/manifest/00000000000000000012",
            "db",
            "db/wal/00000000000000000003.wal.quarantine",
        ] {
            assert_eq!(hint(other), None, "{other}");
        }
        let unknown_op = corrupt("db/wal/00000000000000000003.wal", UNKNOWN_OP);
        assert_eq!(unknown_op.repair_hint(), None);
        let background = Error::Background(Arc::new(corrupt("db/CURRENT", "bad")));
        assert_eq!(background.repair_hint(), Some(RepairHint::Rebuild));
    }
}
