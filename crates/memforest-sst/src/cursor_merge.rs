//! [`CursorMerge`]: the k-way merge compaction runs, lending each entry from its source.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

use crate::cursor::EntryCursor;
use crate::error::Result;
use crate::internal_key::EntryRef;

/// Merges cursors into one stream in internal-key order, every version included, like
/// [`crate::MergeIterator`] (sources newest first: of two equal internal keys, the source
/// listed first comes out first), but it hands out no owned entries: [`CursorMerge::peek`]
/// borrows the smallest entry from the cursor that holds it, and [`CursorMerge::skip`]
/// moves past it. Each step copies the next key of one source into that source's heap
/// slot (reusing its buffer: it allocates only for a key longer than any before), where an
/// owned [`crate::Entry`] costs
/// a key allocation and a reference count on the value's block per entry.
#[derive(Debug)]
pub struct CursorMerge<C> {
    sources: Vec<C>,
    /// A min-heap (`Reverse` of the max-heap's order) of the sources' current keys.
    heap: BinaryHeap<Reverse<Head>>,
}

/// The key a source stands on. The derived order is the merge's: user key ascending, then
/// seqno descending (internal-key order), then the lower source index first.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Head {
    user_key: Vec<u8>,
    seqno: Reverse<u64>,
    source: usize,
}

impl<C: EntryCursor> CursorMerge<C> {
    /// A merge over `sources` (newest first), each at its current position.
    ///
    /// # Errors
    /// The first error of any source while peeking.
    pub fn new(mut sources: Vec<C>) -> Result<Self> {
        let mut heap = BinaryHeap::with_capacity(sources.len());
        for (source, cursor) in sources.iter_mut().enumerate() {
            if let Some(e) = cursor.peek()? {
                heap.push(Reverse(Head {
                    user_key: e.user_key.to_vec(),
                    seqno: Reverse(e.seqno),
                    source,
                }));
            }
        }
        Ok(Self { sources, heap })
    }

    /// The smallest entry of all sources (None when all are exhausted), borrowed until the
    /// next call.
    ///
    /// # Errors
    /// An error of the source that holds it.
    pub fn peek(&mut self) -> Result<Option<EntryRef<'_>>> {
        let Some(Reverse(top)) = self.heap.peek() else {
            return Ok(None);
        };
        match self.sources.get_mut(top.source) {
            Some(cursor) => cursor.peek(),
            None => Ok(None),
        }
    }

    /// Moves past the entry [`CursorMerge::peek`] returns.
    ///
    /// # Errors
    /// An error of the source that held it; the merge's position is then unspecified
    /// (drop it).
    pub fn skip(&mut self) -> Result<()> {
        let Some(mut top) = self.heap.peek_mut() else {
            return Ok(());
        };
        let Some(cursor) = self.sources.get_mut(top.0.source) else {
            PeekMut::pop(top);
            return Ok(());
        };
        cursor.skip()?;
        match cursor.peek()? {
            Some(e) => {
                let Reverse(head) = &mut *top;
                head.user_key.clear();
                head.user_key.extend_from_slice(e.user_key);
                head.seqno = Reverse(e.seqno);
            }
            None => {
                PeekMut::pop(top);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;
    use crate::internal_key::Kind;
    use crate::{EntrySource, MergeIterator, SstBuilder, SstOptions, SstReader};

    /// A file `id` in `dir` holding `entries` (internal-key order).
    fn file(dir: &std::path::Path, id: u64, entries: &[(&str, u64, &str)]) -> SstReader {
        let mut b = SstBuilder::new(dir, id, SstOptions::default()).unwrap();
        for (key, seqno, value) in entries {
            b.add(key.as_bytes(), *seqno, Kind::Put, value.as_bytes())
                .unwrap();
        }
        SstReader::open(b.finish().unwrap().path).unwrap()
    }

    /// The same internal key in two sources comes out from the source listed first, then
    /// from the other, as `MergeIterator` orders it.
    #[test]
    fn equal_internal_keys_come_out_in_source_order() {
        let dir = tempfile::tempdir().unwrap();
        let newer = file(dir.path(), 1, &[("k", 5, "newer")]);
        let older = file(
            dir.path(),
            2,
            &[("j", 1, "x"), ("k", 7, "k7"), ("k", 5, "older")],
        );
        let mut merge =
            CursorMerge::new(vec![newer.iter().unwrap(), older.iter().unwrap()]).unwrap();
        let mut lent = Vec::new();
        while let Some(e) = merge.peek().unwrap() {
            lent.push((e.user_key.to_vec(), e.seqno, e.value.to_vec()));
            merge.skip().unwrap();
        }
        let want: Vec<(Vec<u8>, u64, Vec<u8>)> = [
            ("j", 1, "x"),
            ("k", 7, "k7"),
            ("k", 5, "newer"),
            ("k", 5, "older"),
        ]
        .iter()
        .map(|(k, s, v)| (k.as_bytes().to_vec(), *s, v.as_bytes().to_vec()))
        .collect();
        assert_eq!(lent, want);
        let mut owned = MergeIterator::new(vec![
            Box::new(newer.iter().unwrap()),
            Box::new(older.iter().unwrap()),
        ])
        .unwrap();
        let owned: Vec<_> = std::iter::from_fn(|| owned.next_entry().unwrap())
            .map(|e| (e.user_key.to_vec(), e.seqno, e.value.to_vec()))
            .collect();
        assert_eq!(owned, want);
    }
}
