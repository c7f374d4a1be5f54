//! Iteration and seeking within one [`Block`].

use std::cmp::Ordering;
use std::ops::Range;

use bytes::Bytes;
use memforest_codec::{ByteReader, DecodeError};

use super::Block;

/// A cursor over the entries of one block.
///
/// Starts unpositioned; [`BlockIter::seek_to_first`] or [`BlockIter::seek`] position it.
/// Every step decodes with bounds checks and returns a [`DecodeError`] (offset relative to
/// the payload) on malformed bytes; it never panics.
#[derive(Debug, Clone)]
pub struct BlockIter {
    block: Block,
    key: Vec<u8>,
    value: Range<usize>,
    /// Offset of the entry after the current one; `None` when not positioned on an entry.
    next: Option<usize>,
}

impl BlockIter {
    /// An unpositioned cursor over `block`.
    #[must_use]
    pub fn new(block: Block) -> Self {
        Self {
            block,
            key: Vec::new(),
            value: 0..0,
            next: None,
        }
    }

    /// True when positioned on an entry.
    #[must_use]
    pub fn valid(&self) -> bool {
        self.next.is_some()
    }

    /// The current key (meaningful only when [`Self::valid`]).
    #[must_use]
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value, sharing the block's buffer (meaningful only when valid).
    #[must_use]
    pub fn value(&self) -> Bytes {
        self.block.data.slice(self.value.clone())
    }

    /// The current value, borrowed (meaningful only when valid).
    #[must_use]
    pub fn value_slice(&self) -> &[u8] {
        self.block.data.get(self.value.clone()).unwrap_or_default()
    }

    /// Positions on the first entry (invalid if the block has none).
    ///
    /// # Errors
    /// When the first entry does not decode.
    pub fn seek_to_first(&mut self) -> Result<(), DecodeError> {
        self.key.clear();
        self.decode_at(0)
    }

    /// Advances to the next entry (invalid past the last one).
    ///
    /// # Errors
    /// When the next entry does not decode.
    pub fn advance(&mut self) -> Result<(), DecodeError> {
        match self.next {
            Some(offset) => self.decode_at(offset),
            None => Ok(()),
        }
    }

    /// Positions on the first entry whose key is `>= target` under `cmp` (invalid when every
    /// key is smaller): binary search over the restart points, then a linear scan.
    ///
    /// # Errors
    /// When an entry on the way does not decode.
    pub fn seek<C>(&mut self, target: &[u8], cmp: C) -> Result<(), DecodeError>
    where
        C: Fn(&[u8], &[u8]) -> Ordering,
    {
        // Find the last restart point whose key is < target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            let offset = self.block.restart(mid)?;
            if cmp(self.restart_key(offset)?, target) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        self.key.clear();
        self.decode_at(self.block.restart(lo)?)?;
        while self.valid() && cmp(&self.key, target) == Ordering::Less {
            self.advance()?;
        }
        Ok(())
    }

    /// The full key stored at a restart point (where `shared` must be 0).
    fn restart_key(&self, offset: usize) -> Result<&[u8], DecodeError> {
        let entries = self
            .block
            .data
            .get(..self.block.restarts_start)
            .unwrap_or_default();
        let header = Header::decode(entries, offset)?;
        if header.shared != 0 {
            return Err(DecodeError::new(
                offset,
                "restart entry shares a key prefix",
            ));
        }
        slice(entries, offset + header.len, header.non_shared, "entry key")
    }

    /// Decodes the entry at `offset` on top of the current key; at the end of the entries
    /// the cursor becomes invalid.
    fn decode_at(&mut self, offset: usize) -> Result<(), DecodeError> {
        let end = self.block.restarts_start;
        if offset >= end {
            self.next = None;
            return Ok(());
        }
        let entries = self.block.data.get(..end).unwrap_or_default();
        let header = Header::decode(entries, offset)?;
        if header.shared > self.key.len() {
            self.next = None;
            return Err(DecodeError::new(
                offset,
                "entry shares more than the previous key",
            ));
        }
        let key_start = offset + header.len;
        let delta = slice(entries, key_start, header.non_shared, "entry key")?;
        let value_start = key_start + header.non_shared;
        slice(entries, value_start, header.value_len, "entry value")?;
        self.key.truncate(header.shared);
        self.key.extend_from_slice(delta);
        self.value = value_start..value_start + header.value_len;
        self.next = Some(self.value.end);
        Ok(())
    }
}

/// The three varints that start an entry.
struct Header {
    shared: usize,
    non_shared: usize,
    value_len: usize,
    /// Bytes the three varints take.
    len: usize,
}

impl Header {
    fn decode(entries: &[u8], offset: usize) -> Result<Self, DecodeError> {
        // Fast path: all three lengths below 128 take one byte each.
        if let Some(&[shared, non_shared, value_len]) =
            entries.get(offset..offset.saturating_add(3))
        {
            if (shared | non_shared | value_len) < 0x80 {
                return Ok(Self {
                    shared: usize::from(shared),
                    non_shared: usize::from(non_shared),
                    value_len: usize::from(value_len),
                    len: 3,
                });
            }
        }
        let mut r = ByteReader::new(entries);
        r.bytes(offset, "entry offset")?;
        let shared = to_usize(r.varint32("entry shared length")?, offset)?;
        let non_shared = to_usize(r.varint32("entry key length")?, offset)?;
        let value_len = to_usize(r.varint32("entry value length")?, offset)?;
        Ok(Self {
            shared,
            non_shared,
            value_len,
            len: r.position() - offset,
        })
    }
}

/// `entries[start..start + len]`, or an error at `start`.
fn slice<'a>(
    entries: &'a [u8],
    start: usize,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], DecodeError> {
    start
        .checked_add(len)
        .and_then(|end| entries.get(start..end))
        .ok_or(DecodeError::new(start, what))
}

fn to_usize(v: u32, offset: usize) -> Result<usize, DecodeError> {
    usize::try_from(v).map_err(|_| DecodeError::new(offset, "length"))
}

#[cfg(test)]
mod tests {
    use super::super::builder::BlockBuilder;
    use super::*;
    use proptest::prelude::*;

    fn build(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Block {
        let mut b = BlockBuilder::new(interval);
        for (k, v) in entries {
            b.add(k, v).unwrap();
        }
        Block::new(Bytes::from(b.finish())).unwrap()
    }

    fn collect(block: Block) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut it = BlockIter::new(block);
        it.seek_to_first().unwrap();
        let mut out = Vec::new();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.advance().unwrap();
        }
        out
    }

    proptest! {
        #[test]
        fn round_trip_and_seek(
            map in proptest::collection::btree_map(
                proptest::collection::vec(0u8..3, 0..6),
                proptest::collection::vec(any::<u8>(), 0..20),
                0..60),
            interval in 1usize..20,
            target in proptest::collection::vec(0u8..3, 0..6),
        ) {
            let entries: Vec<_> = map.clone().into_iter().collect();
            let block = build(&entries, interval);
            prop_assert_eq!(collect(block.clone()), entries.clone());
            let mut it = BlockIter::new(block);
            it.seek(&target, |a, b| a.cmp(b)).unwrap();
            let want = map.range(target..).next();
            prop_assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
                want.map(|(k, v)| (k.clone(), v.clone())));
        }

        #[test]
        fn garbage_never_panics(data: Vec<u8>, target: Vec<u8>) {
            if let Ok(block) = Block::new(Bytes::from(data)) {
                let mut it = BlockIter::new(block.clone());
                if it.seek_to_first().is_ok() {
                    for _ in 0..100 {
                        if !it.valid() || it.advance().is_err() { break; }
                    }
                }
                let _ = BlockIter::new(block).seek(&target, |a, b| a.cmp(b));
            }
        }
    }

    #[test]
    fn empty_block_has_no_entries() {
        let block = build(&[], 16);
        assert!(collect(block.clone()).is_empty());
        let mut it = BlockIter::new(block);
        it.seek(b"x", |a, b| a.cmp(b)).unwrap();
        assert!(!it.valid());
        assert!(Block::new(Bytes::from_static(&[0, 0, 0, 0])).is_err());
        assert!(Block::new(Bytes::from_static(&[9, 0, 0, 0])).is_err());
    }
}
