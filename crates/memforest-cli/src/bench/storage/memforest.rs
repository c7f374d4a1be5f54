//! memforest-engine as a storage peer: default options, one tenant, the facts table.

use std::ops::Bound;
use std::path::Path;

use memforest_engine::{Db, Durability, Options, Table, TenantId, WriteBatch};

use super::store::{Class, Record, Store};

/// The one table the storage workloads write (the engine gives tags no meaning).
const RECORDS: Table = Table::new(1);

/// memforest-engine under test: `Buffered` or `SyncData` per [`Class`].
pub struct Memforest {
    db: Db,
    tenant: TenantId,
    durability: Durability,
}

impl Memforest {
    /// Opens (creates) a store in `dir`.
    ///
    /// # Errors
    /// Engine open errors.
    pub fn open(dir: &Path, class: Class) -> anyhow::Result<Self> {
        Ok(Self {
            db: Db::open(dir, Options::default())?,
            tenant: TenantId::new("bench")?,
            durability: match class {
                Class::Buffered => Durability::Buffered,
                Class::Sync => Durability::SyncData,
            },
        })
    }

    fn scan(&self, from: Bound<&[u8]>) -> anyhow::Result<memforest_engine::Scan> {
        Ok(self
            .db
            .scan(&self.tenant, RECORDS, from, Bound::Unbounded, None)?)
    }
}

impl Store for Memforest {
    fn write(&self, batch: &[Record]) -> anyhow::Result<()> {
        let mut b = WriteBatch::new();
        for (k, v) in batch {
            b.put(&self.tenant, RECORDS, k, v);
        }
        self.db.write(&b, self.durability)?;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> anyhow::Result<bool> {
        Ok(self.db.get(&self.tenant, RECORDS, key)?.is_some())
    }

    fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>> {
        match self.scan(Bound::Included(key))?.next() {
            Some(r) => {
                let (k, v) = r?;
                Ok(Some((k.len() + v.len()) as u64))
            }
            None => Ok(None),
        }
    }

    fn scan_all(&self) -> anyhow::Result<(u64, u64)> {
        let mut n = 0;
        let mut bytes = 0;
        for r in self.scan(Bound::Unbounded)? {
            let (k, v) = r?;
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        Ok((n, bytes))
    }

    fn settle(&self) -> anyhow::Result<()> {
        Ok(self.db.flush()?)
    }
}
