//! A bounds-checked little-endian cursor over a byte slice.

use crate::varint;
use crate::DecodeError;

/// Reads little-endian integers and byte runs from a slice, never panicking.
///
/// Every read either advances the cursor or returns a [`DecodeError`] whose offset is the
/// cursor position (relative to the start of the slice) where the read began.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    /// A cursor at the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Current position, in bytes from the start of the slice.
    #[must_use]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left after the cursor.
    #[must_use]
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when every byte has been read.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `len` bytes, borrowed from the slice.
    ///
    /// # Errors
    /// `what` at the cursor when fewer than `len` bytes remain.
    pub fn bytes(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(len)
            .ok_or(DecodeError::new(self.pos, what))?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(DecodeError::new(self.pos, what))?;
        self.pos = end;
        Ok(out)
    }

    /// The next `N` bytes as an array.
    ///
    /// # Errors
    /// `what` at the cursor when fewer than `N` bytes remain.
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let start = self.pos;
        let bytes = self.bytes(N, what)?;
        bytes.try_into().map_err(|_| DecodeError::new(start, what))
    }

    /// One byte.
    ///
    /// # Errors
    /// `what` at the cursor at the end of the slice.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(u8::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u16`.
    ///
    /// # Errors
    /// `what` at the cursor when fewer than 2 bytes remain.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u32`.
    ///
    /// # Errors
    /// `what` at the cursor when fewer than 4 bytes remain.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u64`.
    ///
    /// # Errors
    /// `what` at the cursor when fewer than 8 bytes remain.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A LEB128 varint of at most 32 bits.
    ///
    /// # Errors
    /// `what` at the cursor when the varint is truncated or overflows 32 bits.
    pub fn varint32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let start = self.pos;
        let v = self.varint64(what)?;
        u32::try_from(v).map_err(|_| DecodeError::new(start, what))
    }

    /// A LEB128 varint of at most 64 bits.
    ///
    /// # Errors
    /// `what` at the cursor when the varint is truncated or overflows 64 bits.
    pub fn varint64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let (value, len) = varint::decode_u64(rest).ok_or(DecodeError::new(self.pos, what))?;
        self.pos += len;
        Ok(value)
    }

    /// A `u32` length prefix followed by that many bytes.
    ///
    /// # Errors
    /// `what` at the cursor when the length or the bytes are truncated.
    pub fn len_prefixed(&mut self, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let len = self.u32(what)?;
        let len = usize::try_from(len).map_err(|_| DecodeError::new(self.pos, what))?;
        self.bytes(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_reports_offsets() {
        let data = [1u8, 2, 0, 3, 0, 0, 0, 9];
        let mut r = ByteReader::new(&data);
        assert_eq!(r.u8("a").unwrap(), 1);
        assert_eq!(r.u16("b").unwrap(), 2);
        assert_eq!(r.u32("c").unwrap(), 3);
        assert_eq!(r.position(), 7);
        assert_eq!(r.u16("d"), Err(DecodeError::new(7, "d")));
        // A failed read does not move the cursor.
        assert_eq!(r.u8("e").unwrap(), 9);
        assert!(r.is_empty());
    }

    #[test]
    fn huge_length_prefix_is_an_error() {
        let data = [0xff, 0xff, 0xff, 0xff, 1];
        let mut r = ByteReader::new(&data);
        assert_eq!(r.len_prefixed("v"), Err(DecodeError::new(4, "v")));
    }

    #[test]
    fn varint_overflow_is_an_error() {
        let data = [0xff, 0xff, 0xff, 0xff, 0x7f];
        let mut r = ByteReader::new(&data);
        assert_eq!(r.varint32("v"), Err(DecodeError::new(0, "v")));
    }
}
