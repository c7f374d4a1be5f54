//! fjall as a storage peer: default options except no block compression (memforest
//! writes uncompressed blocks by default), one keyspace.

use std::path::Path;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::store::{Class, Record, Store};

/// fjall under test. Buffered: each batch commits with `PersistMode::Buffer` (its journal's
/// buffer is written to the OS before `commit` returns, what fjall's single-key `insert`
/// does by default; a batch committed without a persist mode stays in the journal's
/// user-space buffer, which a process crash loses: a weaker class). Sync: each batch
/// commits with `PersistMode::SyncData` (`fdatasync`).
pub struct Fjall {
    db: Database,
    ks: Keyspace,
    persist: PersistMode,
}

impl Fjall {
    /// Opens (creates) a database in `dir`.
    ///
    /// # Errors
    /// fjall open errors.
    pub fn open(dir: &Path, class: Class) -> anyhow::Result<Self> {
        let db = Database::builder(dir).open()?;
        let ks = db.keyspace("bench", || {
            KeyspaceCreateOptions::default()
                .data_block_compression_policy(fjall::config::CompressionPolicy::disabled())
        })?;
        Ok(Self {
            db,
            ks,
            persist: match class {
                Class::Buffered => PersistMode::Buffer,
                Class::Sync => PersistMode::SyncData,
            },
        })
    }
}

impl Store for Fjall {
    fn write(&self, batch: &[Record]) -> anyhow::Result<()> {
        let mut b = self.db.batch().durability(Some(self.persist));
        for (k, v) in batch {
            b.insert(&self.ks, k.as_slice(), v.as_slice());
        }
        Ok(b.commit()?)
    }

    fn get(&self, key: &[u8]) -> anyhow::Result<bool> {
        Ok(self.ks.get(key)?.is_some())
    }

    fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>> {
        match self.ks.range(key..).next() {
            Some(g) => {
                let (k, v) = g.into_inner()?;
                Ok(Some((k.len() + v.len()) as u64))
            }
            None => Ok(None),
        }
    }

    fn scan_all(&self) -> anyhow::Result<(u64, u64)> {
        let mut n = 0;
        let mut bytes = 0;
        for g in self.ks.iter() {
            let (k, v) = g.into_inner()?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        Ok((n, bytes))
    }

    fn settle(&self) -> anyhow::Result<()> {
        Ok(self.ks.rotate_memtable_and_wait()?)
    }
}
