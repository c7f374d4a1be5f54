//! SQLite (rusqlite, bundled library) as a storage peer: one `WITHOUT ROWID` table of blob
//! keys and values, `journal_mode = WAL`.

use std::path::Path;

use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension as _};

use super::store::{Class, Record, Store};

/// SQLite under test, one transaction per batch. Buffered: `synchronous = OFF` (each commit
/// is written to the WAL file with `write(2)`, never synced). Sync: `synchronous = FULL`
/// (the WAL is synced at every commit).
/// The connection sits behind a mutex: a `rusqlite::Connection` is not `Sync`, and SQLite
/// admits one writer at a time anyway.
pub struct Sqlite {
    conn: Mutex<Connection>,
}

impl Sqlite {
    /// Creates `dir/bench.sqlite`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn open(dir: &Path, class: Class) -> anyhow::Result<Self> {
        let conn = Connection::open(dir.join("bench.sqlite"))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(
            None,
            "synchronous",
            match class {
                Class::Buffered => "OFF",
                Class::Sync => "FULL",
            },
        )?;
        conn.execute_batch("CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> anyhow::Result<T> {
        let mut c = self
            .conn
            .lock()
            .map_err(|_| anyhow::anyhow!("sqlite connection mutex poisoned"))?;
        Ok(f(&mut c)?)
    }
}

impl Store for Sqlite {
    fn write(&self, batch: &[Record]) -> anyhow::Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            {
                let mut st =
                    tx.prepare_cached("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)")?;
                for (k, v) in batch {
                    st.execute(params![k.as_slice(), v.as_slice()])?;
                }
            }
            tx.commit()
        })
    }

    fn get(&self, key: &[u8]) -> anyhow::Result<bool> {
        self.with(|c| {
            c.prepare_cached("SELECT 1 FROM kv WHERE k = ?1")?
                .query_row([key], |_| Ok(()))
                .optional()
                .map(|r| r.is_some())
        })
    }

    fn seek(&self, key: &[u8]) -> anyhow::Result<Option<u64>> {
        self.with(|c| {
            c.prepare_cached(
                "SELECT length(k) + length(v) FROM kv WHERE k >= ?1 ORDER BY k LIMIT 1",
            )?
            .query_row([key], |r| r.get::<_, i64>(0))
            .optional()
            .map(|r| r.map(|n| u64::try_from(n).unwrap_or(0)))
        })
    }

    fn scan_all(&self) -> anyhow::Result<(u64, u64)> {
        self.with(|c| {
            let mut st = c.prepare_cached("SELECT k, v FROM kv ORDER BY k")?;
            let mut rows = st.query([])?;
            let (mut n, mut bytes) = (0u64, 0u64);
            while let Some(r) = rows.next()? {
                let k = r.get_ref(0)?.as_bytes().map_or(0, <[u8]>::len);
                let v = r.get_ref(1)?.as_bytes().map_or(0, <[u8]>::len);
                n += 1;
                bytes += (k + v) as u64;
            }
            Ok((n, bytes))
        })
    }

    fn settle(&self) -> anyhow::Result<()> {
        self.with(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))
    }
}
