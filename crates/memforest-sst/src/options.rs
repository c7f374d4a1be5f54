//! Build options.

use std::sync::Arc;

use crate::FilterScope;

/// How data blocks are compressed (RocksDB `CompressionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression.
    #[default]
    None,
    /// zstd at the given level (RocksDB `CompressionOptions::level`; 3 is zstd's default).
    /// A block is stored uncompressed when compression would not make it smaller.
    Zstd {
        /// zstd compression level (1..=22; negative levels are zstd's fast modes).
        level: i32,
    },
}

/// Options for [`crate::SstBuilder`].
#[derive(Debug, Clone)]
pub struct SstOptions {
    /// Target uncompressed data block size in bytes (RocksDB `block_size`, default 4096). A
    /// block is cut once it reaches this size, so an entry larger than a block gets a block of
    /// its own.
    pub block_size: usize,
    /// Keys between restart points (RocksDB `block_restart_interval`, default 16).
    pub restart_interval: usize,
    /// Data block compression (default none; index, filter and properties blocks are never
    /// compressed).
    pub compression: Compression,
    /// Bloom filter bits per distinct user key (RocksDB `NewBloomFilterPolicy`, default 10,
    /// about 1% false positives).
    pub bloom_bits_per_key: u32,
    /// Target size of one index partition in bytes (RocksDB `metadata_block_size`, default
    /// 4096), used once the index is two-level.
    pub index_partition_size: usize,
    /// An index larger than this many bytes is written as partitions plus a top-level index
    /// (RocksDB `kTwoLevelIndexSearch`); default 64 KiB. A one-level index is read and
    /// verified once at open; a partition is read and verified on each use.
    pub max_single_level_index_size: usize,
    /// Segment file format version to write (RocksDB `BlockBasedTableOptions::
    /// format_version`): 3 (the default, [`crate::FORMAT_VERSION`]) stores cache-local bloom
    /// filters with their scope, 2 the same filters over every key without a scope id, 1
    /// ([`crate::MIN_FORMAT_VERSION`]) the older whole-array ones. Readers take all three.
    /// [`crate::SstBuilder::new`] refuses another version with
    /// [`crate::SstError::InvalidInput`].
    pub format_version: u32,
    /// Which user keys the bloom filter holds ([`crate::filter_scope`]); `None` (the
    /// default): every key. Only format version 3 stores a scope; with 1 or 2 the filter
    /// holds every key whatever this says.
    pub filter_scope: Option<Arc<dyn FilterScope>>,
}

impl Default for SstOptions {
    fn default() -> Self {
        Self {
            block_size: 4096,
            restart_interval: 16,
            compression: Compression::None,
            bloom_bits_per_key: 10,
            index_partition_size: 4096,
            max_single_level_index_size: 64 << 10,
            format_version: crate::FORMAT_VERSION,
            filter_scope: None,
        }
    }
}
