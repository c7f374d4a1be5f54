//! [`Memory`]: the memory store's handle. It owns the engine ([`memforest_engine::Db`]), the
//! memory layer's runtime (the summary scheduler and the extraction and summary pools) and
//! the read path's caches.

use std::path::Path;
use std::sync::Arc;

use memforest_engine::{Db, Durability, OpenReport, Snapshot, TenantId, WriteBatch};

use crate::filter_scope::PointReadKeys;
use crate::memory::{MemoryError, MemoryOptions, Runtime};
use crate::recall::RecallState;
use crate::schema::Table;

/// How a [`Memory`] is opened: the engine's options and the memory layer's.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The storage engine (memtable, WAL, compaction, durability of the engine, file
    /// system). Its segment files' bloom filters leave out the keys the memory store only
    /// scans ([`PointReadKeys`]) unless `engine.sst.filter_scope` names another scope.
    pub engine: memforest_engine::Options,
    /// The memory layer (extractor, summarizer, embedder, pools, routing thresholds).
    pub memory: MemoryOptions,
}

impl Options {
    /// The engine options with the memory store's filter scope filled in.
    pub(crate) fn engine(&self) -> memforest_engine::Options {
        let mut engine = self.engine.clone();
        if engine.sst.filter_scope.is_none() {
            engine.sst.filter_scope = Some(Arc::new(PointReadKeys));
        }
        engine
    }
}

/// An open memory store. `Send + Sync`: share it (e.g. in an `Arc`) between threads.
///
/// Dropping it stops the background work without syncing (a crash, as far as unsynced
/// data goes); [`Memory::close`] also regenerates dirty summaries (when
/// `MemoryOptions::summarize_on_shutdown`), syncs the WAL, publishes a writer's writes to
/// its object store ([`Db::close`]) and reports background errors.
#[derive(Debug)]
pub struct Memory {
    pub(crate) db: Arc<Db>,
    /// The memory layer (scheduler + worker pools); `None` only while opening or closing.
    runtime: Option<Runtime>,
    /// The read path's heat and page cache.
    pub(crate) recall: RecallState,
}

impl Memory {
    /// Opens (or creates) the memory store in `dir` with the defaults, which need no
    /// network: the heuristic extractor, the extractive summarizer, the bundled static
    /// embedder ([`crate::StaticEmbedder`]).
    ///
    /// # Errors
    /// As [`Memory::open_with`].
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, MemoryError> {
        Self::open_with(dir, Options::default())
    }

    /// A builder for a store with its own extractor, summarizer, embedder or options.
    #[must_use]
    pub fn builder() -> crate::MemoryBuilder {
        crate::MemoryBuilder::default()
    }

    /// Opens (or creates) the memory store in `dir` ([`Db::open`]) and starts the memory
    /// layer, which resumes extractions and summary refreshes a crash left pending. The
    /// open replays the WAL written since the last flush, up to about one memtable
    /// (`engine::Options::memtable_size`, 256 MiB by default), in time and memory: a
    /// process that opens often flushes before it closes (`memory.db().flush()`).
    ///
    /// # Errors
    /// [`MemoryError::Engine`] for the engine's open errors (lock held, not a store,
    /// damage); invalid memory options; corrupt tree pages.
    pub fn open_with(dir: impl AsRef<Path>, options: Options) -> Result<Self, MemoryError> {
        // Before the store is opened or created.
        options.memory.validate()?;
        let db = Db::open(dir, options.engine())?;
        Self::start(db, options.memory, true)
    }

    /// Opens the memory store in `dir` read-only ([`Db::open_read_only`]): no lock, nothing
    /// written, no background work; searches, profiles and statistics work, every change
    /// fails with `Error::ReadOnly`. The handle reads the store as of the open: what a
    /// writer beside it adds later is seen by opening again ([`Memory::refresh`] is for
    /// replicas of an object store).
    ///
    /// # Errors
    /// As [`Memory::open`].
    pub fn open_read_only(dir: impl AsRef<Path>, options: Options) -> Result<Self, MemoryError> {
        options.memory.validate()?;
        let db = Db::open_read_only(dir, options.engine())?;
        Self::start(db, options.memory, false)
    }

    /// Starts the memory layer over `db` (the scheduler only for a writable store).
    pub(crate) fn start(
        db: Db,
        options: MemoryOptions,
        scheduler: bool,
    ) -> Result<Self, MemoryError> {
        let db = Arc::new(db);
        let recall = RecallState::default();
        let runtime = Runtime::start(&db, options, scheduler, recall.write_through())?;
        Ok(Self {
            db,
            runtime: Some(runtime),
            recall,
        })
    }

    /// The engine underneath (statistics, snapshots, `verify`).
    #[must_use]
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The memory layer, while running.
    pub(crate) fn runtime(&self) -> Option<&Runtime> {
        self.runtime.as_ref()
    }

    /// The embedder this store was opened with (`MemoryOptions::embedder`), if any.
    #[must_use]
    pub fn embedder(&self) -> Option<Arc<dyn crate::memory::embed::Embedder>> {
        self.runtime()
            .and_then(|r| r.shared().opts.embedder.clone())
    }

    /// The store's directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.db.dir()
    }

    /// True for a store opened with [`Memory::open_read_only`] or [`Memory::open_replica`].
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.db.is_read_only()
    }

    /// What the open found and did ([`Db::open_report`]).
    #[must_use]
    pub fn open_report(&self) -> &OpenReport {
        self.db.open_report()
    }

    /// The tenants holding any record.
    ///
    /// # Errors
    /// Engine read errors.
    pub fn tenants(&self) -> Result<Vec<TenantId>, MemoryError> {
        Ok(self.db.tenants()?)
    }

    /// A snapshot of the current state (queries as of it: `Query::snapshot`).
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        self.db.snapshot()
    }

    /// Deletes the derived tables ([`Table::DERIVED`]: summaries, embeddings, dirty marks,
    /// the lexical index) of every tenant in one batch of range deletes, so they can be
    /// regenerated. Returns the batch's seqno.
    ///
    /// # Errors
    /// Engine read and write errors.
    pub fn drop_derived(&self, durability: Durability) -> Result<u64, MemoryError> {
        let mut b = WriteBatch::new();
        for tenant in self.db.tenants()? {
            for table in Table::DERIVED {
                b.delete_table(&tenant, table.into());
            }
        }
        let seqno = self.db.write(&b, durability)?;
        crate::recall::vector_cache::bump_all();
        Ok(seqno)
    }

    /// Stops the memory layer, then closes the engine. Stopping waits for the extractions
    /// already queued (at most `MemoryOptions::extract_backlog` parts, each a model call
    /// with a model extractor; dropping the handle instead leaves them pending for the
    /// next open, losing nothing) and, when `MemoryOptions::summarize_on_shutdown`,
    /// regenerates the dirty summaries. The engine's close ([`Db::close`]: a
    /// writer on an object store flushes and publishes first). When a memory-layer handle
    /// is still held elsewhere the engine is left running and made as durable as a close
    /// makes it ([`Db::persist`]).
    ///
    /// # Errors
    /// A background error recorded earlier; the flush's or publication's error (the writes
    /// stay in the WAL); the WAL sync's error.
    pub fn close(mut self) -> Result<(), MemoryError> {
        if let Some(mut r) = self.runtime.take() {
            r.stop(true);
        }
        let db = Arc::clone(&self.db);
        drop(self);
        match Arc::try_unwrap(db) {
            Ok(db) => Ok(db.close()?),
            // A memory-layer handle still held elsewhere (a worker finishing a job): make
            // everything durable now; the engine's threads stop with the last handle.
            Err(shared) => Ok(shared.persist()?),
        }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if let Some(mut r) = self.runtime.take() {
            r.stop(false);
        }
    }
}
