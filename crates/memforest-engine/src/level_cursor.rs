//! [`LevelCursor`]: the files of one sorted run (a level below 0) as a single entry source,
//! opened one at a time (RocksDB `LevelIterator`).
//!
//! The files of a level never share a user key (compaction cuts outputs only between user
//! keys), so their entries concatenated in key order are in internal-key order. A merge
//! over a level-5-into-6 compaction then holds two sources instead of one per file: each
//! entry costs one comparison instead of a sift through a heap of a dozen, and files are
//! opened (their first data block read and CRC-checked) only when the cursor reaches them.

use std::sync::Arc;

use memforest_sst::{Entry, EntryCursor, EntryRef, EntrySource, SstIterator};

use crate::version::{Fetch, Segment};

/// A cursor over `files`, which are in key order and share no user key.
#[derive(Debug)]
pub struct LevelCursor {
    files: Vec<Arc<Segment>>,
    /// How a cached file without a local copy is read.
    fetch: Fetch,
    /// Index of the file after the open one.
    next: usize,
    open: Option<SstIterator>,
}

impl LevelCursor {
    /// A cursor over `files` (key order, no shared user key), positioned before the first
    /// entry; opens nothing yet. `fetch`: how a cached file without a local copy is read
    /// (by range for reads, whole for compaction).
    #[must_use]
    pub fn new(files: Vec<Arc<Segment>>, fetch: Fetch) -> Self {
        Self {
            files,
            fetch,
            next: 0,
            open: None,
        }
    }
}

impl LevelCursor {
    /// Opens the next files until one has an entry left: its iterator, standing on it
    /// (None past the last file).
    fn settle(&mut self) -> memforest_sst::Result<Option<&mut SstIterator>> {
        loop {
            if self
                .open
                .as_mut()
                .map(SstIterator::peek)
                .transpose()?
                .flatten()
                .is_some()
            {
                return Ok(self.open.as_mut());
            }
            let Some(seg) = self.files.get(self.next) else {
                self.open = None;
                return Ok(None);
            };
            self.open = Some(seg.reader_for(self.fetch)?.iter()?);
            self.next += 1;
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
                let mut it = seg.reader_for(self.fetch)?.iter()?;
                it.seek(user_key, seqno)?;
                Some(it)
            }
            None => None,
        };
        self.next = at + 1;
        Ok(())
    }

    fn next_entry(&mut self) -> memforest_sst::Result<Option<Entry>> {
        match self.settle()? {
            Some(it) => it.next_entry(),
            None => Ok(None),
        }
    }
}

impl EntryCursor for LevelCursor {
    fn peek(&mut self) -> memforest_sst::Result<Option<EntryRef<'_>>> {
        match self.settle()? {
            Some(it) => it.peek(),
            None => Ok(None),
        }
    }

    fn skip(&mut self) -> memforest_sst::Result<()> {
        match self.settle()? {
            Some(it) => it.skip(),
            None => Ok(()),
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
        let mut c = LevelCursor::new(level(dir.path()), Fetch::Blocks);
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

    /// Peeking lends the entry `next_entry` would return, across file boundaries, and
    /// `skip` moves past it as `next_entry` does.
    #[test]
    fn peek_and_skip_walk_the_files_as_next_entry_does() {
        let dir = tempfile::tempdir().unwrap();
        let files = level(dir.path());
        let all = rest(&mut LevelCursor::new(files.clone(), Fetch::Blocks));
        let mut c = LevelCursor::new(files, Fetch::Blocks);
        let mut walked = Vec::new();
        while let Some(e) = c.peek().unwrap() {
            walked.push((String::from_utf8(e.user_key.to_vec()).unwrap(), e.seqno));
            if walked.len() % 2 == 0 {
                c.skip().unwrap();
            } else {
                c.next_entry().unwrap();
            }
        }
        assert_eq!(walked, all);
        c.skip().unwrap();
        assert!(c.peek().unwrap().is_none());
    }
}
