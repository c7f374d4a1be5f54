//! A read replica of a memory store kept on an object store: [`Memory::open_replica`] and
//! [`Memory::refresh`].

use std::path::Path;

use memforest_engine::Db;

use crate::handle::{Memory, Options};
use crate::memory::MemoryError;
use crate::recall::{postings, vector_cache};

impl Memory {
    /// Opens a read replica of the memory store on the object store in
    /// `options.engine.remote` ([`Db::open_replica`]), caching its segment files in `dir`
    /// (a directory of its own, never a writer's). It serves what the writer has flushed
    /// and published; [`Memory::refresh`] follows newer publications. No background work
    /// runs; every change fails with `Error::ReadOnly`. Call it outside an async runtime's
    /// worker threads.
    ///
    /// # Errors
    /// As [`Db::open_replica`]: no `options.engine.remote`, a writer's directory, no
    /// manifest on the object store, object-store and local I/O errors, the directory's
    /// lock held.
    pub fn open_replica(dir: impl AsRef<Path>, options: Options) -> Result<Self, MemoryError> {
        options.memory.validate()?;
        let db = Db::open_replica(dir, options.engine())?;
        Self::start(db, options.memory, false)
    }

    /// A replica moves to the newest state its writer published ([`Db::refresh`]) and,
    /// when it moved, invalidates the read path's caches whose validity follows local
    /// writes (posting lists, fact vectors, turn term counts), so the next query reads the
    /// new state. Queries running meanwhile finish on the state they started on. True
    /// when it moved.
    ///
    /// # Errors
    /// [`MemoryError::Stopped`] while closing; [`Db::refresh`]'s errors (not a replica;
    /// object-store errors, after which the replica keeps serving what it had).
    pub fn refresh(&self) -> Result<bool, MemoryError> {
        if self.runtime().is_none() {
            return Err(MemoryError::Stopped);
        }
        // The caches are bumped after the new state is installed: a query that read the
        // old generations caches under them (never served again once bumped), and every
        // query that reads the bumped ones reads the new state.
        let moved = self.db().refresh()?;
        if moved {
            postings::bump_all();
            vector_cache::bump_all();
            self.recall_state().turns.forget_all();
        }
        Ok(moved)
    }
}
