//! `Memory::purge`: make forgotten bytes leave the directory. Waits for every dirty summary to
//! be regenerated (so no node page keeps a stale summary) and for the summary scheduler's
//! snapshot reads that started before it, rotates the WAL, compacts every
//! segment file into the bottom level (dropping every shadowed version and tombstone no
//! snapshot needs), deletes the WAL segments closed by the rotation, and rewrites the
//! manifest as a snapshot (its edit log names the key ranges of deleted files).

use std::path::Path;

use crate::memory::MemoryError;
use crate::Memory;

/// What a purge removed, measured over the store's directory (WAL included).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PurgeReport {
    /// Files before.
    pub files_before: u64,
    /// Bytes before.
    pub bytes_before: u64,
    /// Files after.
    pub files_after: u64,
    /// Bytes after.
    pub bytes_after: u64,
    /// WAL segments deleted.
    pub wal_segments_removed: u64,
}

/// (files, bytes) under `dir`, recursively.
fn usage(dir: &Path) -> Result<(u64, u64), MemoryError> {
    let io = |e| {
        MemoryError::Engine(memforest_engine::Error::Io {
            op: "read dir",
            path: dir.to_path_buf(),
            source: e,
        })
    };
    let mut out = (0, 0);
    for e in std::fs::read_dir(dir).map_err(io)? {
        let e = e.map_err(io)?;
        // A file a flush, compaction or another purge removed since the listing.
        let meta = match e.metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other.map_err(|source| {
                MemoryError::Engine(memforest_engine::Error::Io {
                    op: "stat",
                    path: e.path(),
                    source,
                })
            })?,
        };
        if meta.is_dir() {
            let (f, b) = usage(&e.path())?;
            out = (out.0 + f, out.1 + b);
        } else {
            out = (out.0 + 1, out.1 + meta.len());
        }
    }
    Ok(out)
}

impl Memory {
    /// Purges: after it returns (with no snapshot held and no concurrent writer, query or
    /// `verify`, which read at snapshots of their own), no file in the directory holds a
    /// value deleted or overwritten before the call. A range delete stays, with the key
    /// bounds it names: after [`Memory::delete_user`], the user's name is still in one
    /// segment file. Needs the summarizer to succeed for the dirty nodes (it waits for
    /// them).
    ///
    /// # Errors
    /// [`MemoryError::Engine`] for flush, compaction, WAL or directory errors; the memory
    /// runtime's error while waiting for summaries.
    pub fn purge(&self) -> Result<PurgeReport, MemoryError> {
        self.flush_summaries()?;
        // The scheduler reads summary inputs at snapshots of its own; one taken before a
        // forget would keep the forgotten versions through the compaction below.
        self.memory_shared()?.wait_snapshot_reads();
        let (files_before, bytes_before) = usage(self.dir())?;
        let removed = self.db.purge()?;
        let (files_after, bytes_after) = usage(self.dir())?;
        Ok(PurgeReport {
            files_before,
            bytes_before,
            files_after,
            bytes_after,
            wal_segments_removed: removed,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::time::Duration;

    use crate::lifecycle::Forget;
    use crate::memory::session::{Role, Session, Turn};
    use crate::{Memory, Options};
    use memforest_engine::TenantId;

    const CANARY: &[u8] = b"Zyxwquorble";

    /// Files under `dir` whose bytes hold the canary.
    fn hits(dir: &std::path::Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(hits(&p));
            } else if std::fs::read(&p)
                .unwrap()
                .windows(CANARY.len())
                .any(|w| w == CANARY)
            {
                out.push(p.display().to_string());
            }
        }
        out
    }

    /// The scheduler reads summary inputs at snapshots of its own, outside the forest
    /// lock. A read in flight across a forget holds a snapshot from before it; purge must
    /// wait for that read, or its compaction keeps the forgotten versions for the snapshot.
    #[test]
    fn purge_waits_for_snapshot_reads_that_started_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = Memory::open_with(dir.path(), Options::default()).unwrap();
        let t = TenantId::new("t").unwrap();
        let session = Session {
            id: "s".into(),
            start: 1_677_628_800_000_000,
            turns: vec![Turn::new(
                Role::User,
                "Alice",
                "The Zyxwquorble vault code is under the blue flowerpot.",
            )],
        };
        db.ingest_session(&t, &session).unwrap();
        db.flush_summaries().unwrap();
        let shared = db.memory_shared().unwrap();
        // What `read_at_snapshot` holds while it reads.
        let reading = shared.snapshot_read();
        let snapshot = shared.kv.snapshot();
        db.forget(&t, &Forget::Tenant).unwrap();
        std::thread::scope(|s| {
            let purge = s.spawn(|| db.purge());
            std::thread::sleep(Duration::from_millis(200));
            assert!(!purge.is_finished(), "purge ran under an older snapshot");
            drop(snapshot);
            drop(reading);
            purge.join().unwrap().unwrap();
        });
        assert_eq!(hits(dir.path()), Vec::<String>::new());
        db.close().unwrap();
    }
}
