//! [`LevelCursor`]: the files of one sorted run (a level below 0) as a single entry source,
//! opened one at a time (RocksDB `LevelIterator`).
//!
//! The files of a level never share a user key (compaction cuts outputs only between user
//! keys), so their entries concatenated in key order are in internal-key order. A merge
//! over a level-5-into-6 compaction then holds two sources instead of one per file: each
//! entry costs one comparison instead of a sift through a heap of a dozen, and files are
//! opened (their first data block read and CRC-checked) only when the cursor reaches them.

use std::sync::Arc;

use memforest_sst::{Entry, EntrySource, SstIterator};

use crate::version::Segment;

/// A cursor over `files`, which are in key order and share no user key.
#[derive(Debug)]
pub struct LevelCursor {
    files: Vec<Arc<Segment>>,
    /// Index of the file after the open one.
    next: usize,
    open: Option<SstIterator>,
}

impl LevelCursor {
    /// A cursor over `files` (key order, no shared user key), positioned before the first
    /// entry; opens nothing yet.
    #[must_use]
    pub fn new(files: Vec<Arc<Segment>>) -> Self {
        Self {
            files,
            next: 0,
            open: None,
        }
    }
}

impl EntrySource for LevelCursor {
    fn seek_to_first(&mut self) -> memforest_sst::Result<()> {
        self.open = None;
        self.next = 0;
        Ok(())
    }

    fn seek(&mut self, user_key: &[u8], seqno: u64) -> memforest_sst::Result<()> {
        let at = self
            .files
            .partition_point(|s| s.info.largest.as_slice() < user_key);
        self.open = match self.files.get(at) {
            Some(seg) => {
                let mut it = seg.reader.iter()?;
                it.seek(user_key, seqno)?;
                Some(it)
            }
            None => None,
        };
        self.next = at + 1;
        Ok(())
    }

    fn next_entry(&mut self) -> memforest_sst::Result<Option<Entry>> {
        loop {
            if let Some(it) = &mut self.open {
                if let Some(e) = it.next_entry()? {
                    return Ok(Some(e));
                }
            }
            let Some(seg) = self.files.get(self.next) else {
                self.open = None;
                return Ok(None);
            };
            self.open = Some(seg.reader.iter()?);
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_segments::{puts, segment};

    /// Three files holding keys `k00..k09`, `k10..k19`, `k20..k29` (two versions of `k15`).
    fn level(dir: &std::path::Path) -> Vec<Arc<Segment>> {
        (0..3u64)
            .map(|f| {
                let mut entries = puts((f * 10..f * 10 + 10).map(|i| format!("k{i:02}")), 1);
                if f == 1 {
                    entries.insert(5, (b"k15".to_vec(), 9, b"new".to_vec()));
                }
                segment(dir, f, &entries)
            })
            .collect()
    }

    fn rest(c: &mut LevelCursor) -> Vec<(String, u64)> {
        std::iter::from_fn(|| c.next_entry().unwrap())
            .map(|e| (String::from_utf8(e.user_key.to_vec()).unwrap(), e.seqno))
            .collect()
    }

    #[test]
    fn walks_the_files_in_order_and_seeks_into_the_right_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = LevelCursor::new(level(dir.path()));
        let all = rest(&mut c);
        assert_eq!(all.len(), 31);
        assert!(all.windows(2).all(|w| w[0].0 < w[1].0 || w[0].1 > w[1].1));
        assert_eq!(all.first().unwrap().0, "k00");
        assert_eq!(all.last().unwrap().0, "k29");

        c.seek(b"k15", 5).unwrap();
        assert_eq!(rest(&mut c).first().unwrap(), &("k15".to_owned(), 1));
        c.seek(b"k095", u64::MAX).unwrap();
        assert_eq!(rest(&mut c).first().unwrap().0, "k10");
        c.seek(b"k3", u64::MAX).unwrap();
        assert!(rest(&mut c).is_empty());
        c.seek_to_first().unwrap();
        assert_eq!(rest(&mut c), all);
    }
}
