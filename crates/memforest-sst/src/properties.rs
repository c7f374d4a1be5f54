//! The properties block: what a file holds, for the engine's planning and for tools.
//!
//! Encoded with [`memforest_codec::serde_codec`] (the pinned bincode 2 configuration:
//! little-endian, fixed-width integers, byte strings as `u64` length + bytes), fields in
//! declaration order, stored uncompressed with a block trailer. Adding a field is a format
//! version change.

use serde::{Deserialize, Serialize};

/// Statistics of one segment file (RocksDB `TableProperties`, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Properties {
    /// Format version the file was written with: 1, 2 or 3, equal to the footer's (see
    /// [`crate::FORMAT_VERSION`]).
    pub format_version: u32,
    /// Number of entries (puts and tombstones).
    pub entry_count: u64,
    /// Number of tombstones among them.
    pub tombstone_count: u64,
    /// Smallest user key.
    pub smallest_user_key: Vec<u8>,
    /// Largest user key.
    pub largest_user_key: Vec<u8>,
    /// Smallest seqno of any entry.
    pub min_seqno: u64,
    /// Largest seqno of any entry.
    pub max_seqno: u64,
    /// Sum of user key lengths, in bytes.
    pub raw_key_bytes: u64,
    /// Sum of value lengths, in bytes.
    pub raw_value_bytes: u64,
    /// Number of data blocks.
    pub data_block_count: u64,
    /// On-disk bytes of the data blocks, trailers included (they start at offset 0).
    pub data_size: u64,
    /// On-disk bytes of the filter block, trailer included.
    pub filter_size: u64,
    /// On-disk bytes of all index blocks (partitions and top level), trailers included.
    pub index_size: u64,
    /// Creation time, seconds since the Unix epoch.
    pub creation_time_unix_s: u64,
}
