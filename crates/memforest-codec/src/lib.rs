//! Byte-level building blocks shared by every MemForest file format.
//!
//! - [`checksum`]: CRC-32 (IEEE, `crc32fast`) and RocksDB's checksum masking.
//! - [`reader`]: a bounds-checked little-endian cursor whose errors carry the byte offset.
//! - [`varint`]: LEB128 varints (RocksDB's `PutVarint32`/`PutVarint64` encoding).
//! - [`serde_codec`]: the single pinned bincode 2 configuration, for metadata blocks.
//!
//! Nothing here panics on any input: every decoder returns a [`DecodeError`] naming the
//! offset (relative to the slice it was given) and what was expected there.
#![deny(clippy::indexing_slicing)]

pub mod checksum;
mod error;
pub mod reader;
pub mod serde_codec;
pub mod varint;

pub use error::DecodeError;
pub use reader::ByteReader;
