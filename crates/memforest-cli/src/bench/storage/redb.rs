//! redb as a storage peer: one table of byte keys and values.

use std::path::Path;

use redb::{Database, Durability, ReadableDatabase as _, ReadableTable as _, TableDefinition};

use super::store::{Class, Record, Store};

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("bench");

/// redb under test, one write transaction per batch. Sync: `Durability::Immediate`
/// (`fsync` of the file at commit). Buffered: redb has no such mode; the closest is
/// `Durability::None`, which is weaker: a commit reaches neither the OS nor the disk until
/// a later `Immediate` commit ([`Store::settle`] makes one), so a process crash loses it.
pub struct Redb {
    db: Database,
    durability: Durability,
}

impl Redb {
    /// Creates a database file `dir/bench.redb`.
    ///
    /// # Errors
    /// redb create errors.
    pub fn open(dir: &Path, class: Class) -> anyhow::Result<Self> {
        let db = Database::create(dir.join("bench.redb"))?;
        let tx = db.begin_write()?;
        tx.open_table(TABLE)?;
        tx.commit()?;
        Ok(Self {
            db,
            durability: match class {
                Class::Buffered => Durability::None,
                Class::Sync => Durability::Immediate,
            },
        })
    }

    fn commit(&self, batch: &[Record], durability: Durability) -> anyhow::Result<()> {
        let mut tx = self.db.begin_write()?;
        tx.set_durability(durability)?;
        {
            let mut t = tx.open_table(TABLE)?;
            for (k, v) in batch {
                t.insert(k.as_slice(), v.as_slice())?;
            }
        }
        Ok(tx.commit()?)
    }
}

impl Store for Redb {
    fn class_note(&self) -> &'static str {
        match self.durability {
            Durability::None => {
                "weaker: Durability::None commits stay in redb's cache until a durable commit"
            }
            _ => "",
        }
    }

    fn write(&self, batch: &[Record]) -> anyhow::Result<()> {
        self.commit(batch, self.durability)
    }

    fn get(&self, key: &[u8]) -> anyhow::Result<bool> {
        let tx = self.db.begin_read()?;
        Ok(tx.open_table(TABLE)?.get(key)?.is_some())
    }

    fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(TABLE)?;
        let mut range = t.range(key..)?;
        match range.next() {
            Some(r) => {
                let (k, v) = r?;
                Ok(Some((k.value().len() + v.value().len()) as u64))
            }
            None => Ok(None),
        }
    }

    fn scan_all(&self) -> anyhow::Result<(u64, u64)> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(TABLE)?;
        let mut n = 0;
        let mut bytes = 0;
        for r in t.iter()? {
            let (k, v) = r?;
            n += 1;
            bytes += (k.value().len() + v.value().len()) as u64;
        }
        Ok((n, bytes))
    }

    fn settle(&self) -> anyhow::Result<()> {
        self.commit(&[], Durability::Immediate)
    }
}
