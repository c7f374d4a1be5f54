//! [`Options`]: the engine's tuning knobs, each named after the RocksDB option it mirrors.

use std::sync::Arc;

use memforest_io::Storage;
use memforest_sst::SstOptions;
use memforest_wal::{Compression, RecoveryMode};

use crate::compaction::CompactionPri;

/// Options for [`crate::Db::open`].
#[derive(Debug, Clone)]
pub struct Options {
    /// A memtable is sealed and handed to the flush thread once it holds about this many
    /// bytes (keys + values + per-entry overhead). Default 256 MiB (RocksDB
    /// `write_buffer_size`, whose default is 64 MiB). The memory layer rewrites each
    /// MemTree page many times while it is young; a larger memtable lets more of those
    /// versions die before a flush, so fewer reach level 0 and compaction
    /// (`docs/benchmark-history.md`). Memory: up to `(1 + max_immutable_memtables)` times
    /// this while flushes lag, and the WAL a crash replays holds up to about one memtable.
    pub memtable_size: usize,
    /// Writers stall (wait on a condition variable) while this many sealed memtables wait
    /// for the flush thread. Default 2 (RocksDB `max_write_buffer_number` - 1).
    pub max_immutable_memtables: usize,
    /// Level 0 is compacted into level 1 once it holds this many files. Default 4 (RocksDB
    /// `level0_file_num_compaction_trigger`).
    pub l0_compaction_trigger: usize,
    /// Writers stall while level 0 holds this many files. Default 20 (RocksDB
    /// `level0_stop_writes_trigger`).
    pub l0_stop_writes_trigger: usize,
    /// Target total size of level 1, in bytes. Default 256 MiB (RocksDB
    /// `max_bytes_for_level_base`).
    pub max_bytes_for_level_base: u64,
    /// Each level below 1 may hold this many times the bytes of the one above (RocksDB
    /// `max_bytes_for_level_multiplier`). Default 4, where RocksDB's is 10: leveled
    /// compaction rewrites a byte about `multiplier / 2` times per level it passes, and a
    /// smaller multiplier means more, cheaper levels, so less compaction output per byte
    /// written; the cost is one or two more levels for a point read to check and more bytes
    /// waiting above the last level (space amplification near `1 + 1 / multiplier`).
    pub level_size_multiplier: u64,
    /// Level targets derived from the largest level instead of from level 1 (RocksDB
    /// `level_compaction_dynamic_level_bytes`, its default since 8.4): level 0 compacts into
    /// the highest level whose target reaches `max_bytes_for_level_base / multiplier`, each
    /// level above the last targets a multiplier-th of the one below, so the last level
    /// holds most of the data at every size and space amplification stays near
    /// `1 + 1 / multiplier` (see [`crate::level_targets`]). Default true; false gives the
    /// static targets `max_bytes_for_level_base * multiplier^(level - 1)`.
    pub dynamic_level_bytes: bool,
    /// Which file of an over-target level is compacted next. Default
    /// [`CompactionPri::MinOverlappingRatio`] (RocksDB `compaction_pri`).
    pub compaction_pri: CompactionPri,
    /// Compaction cuts output segment files at about this many bytes (at a user-key
    /// boundary). Default 64 MiB (RocksDB `target_file_size_base`, with
    /// `target_file_size_multiplier` = 1).
    pub target_file_size: u64,
    /// Number of levels, 0..num_levels. Default 7 (RocksDB `num_levels`). At least 2.
    pub num_levels: usize,
    /// The manifest is rewritten as a snapshot into a new file once it exceeds this many
    /// bytes. Default 4 MiB (RocksDB `max_manifest_file_size`).
    pub max_manifest_size: u64,
    /// WAL segment size in bytes (RocksDB `max_log_file_size`-like). Default 64 MiB.
    pub wal_segment_size: u64,
    /// Which WAL batch bodies are zstd-compressed (RocksDB `wal_compression`). Default off,
    /// as in RocksDB: compressing large batches (`Compression::LARGE_BATCHES`) writes less
    /// WAL for more CPU on the writing thread (`docs/benchmark-history.md`).
    pub wal_compression: Compression,
    /// What WAL recovery tolerates (RocksDB `wal_recovery_mode`). The manifest, `CURRENT`
    /// and segment files tolerate no corruption whatever this says.
    pub recovery_mode: RecoveryMode,
    /// How segment files are built (block size, compression, bloom bits) and which keys
    /// their bloom filters hold (`filter_scope`: every key by default; the memory store
    /// sets a scope that leaves out the keys it only ever scans, segment format version
    /// 3). Lookups read each file's filter under this scope.
    pub sst: SstOptions,
    /// Bytes of mapped segment-file pages (data blocks and index partitions, charged per
    /// 2 MiB window) the process keeps resident: past it the least recently read files are
    /// released (`MADV_DONTNEED`; the OS page cache keeps them), so reading and compacting
    /// files costs at most this much resident memory however large the database grows (see
    /// [`memforest_sst::Residency`]). The role of RocksDB's block cache `capacity`. Each
    /// open file's bloom filter and top-level index are held on the heap outside this
    /// budget (RocksDB's default, `cache_index_and_filter_blocks = false`):
    /// `sst.bloom_bits_per_key / 8` bytes per key. Default 512 MiB, sized for ingest's
    /// working set within a bounded peak RSS; a process serving queries on a large store
    /// sizes it to its working set (`docs/benchmarks.md`, "Query").
    pub segment_resident_bytes: u64,
    /// Where every file operation goes: the WAL, segment files, the manifest and
    /// `CURRENT` (RocksDB `Env` / `FileSystem`). Default: the real filesystem
    /// ([`memforest_io::StdStorage`]); tests pass a [`memforest_io::FaultStorage`]. The
    /// lock file is the exception: `flock` needs an OS descriptor, so it is always taken
    /// on the real filesystem, in `dir` (which must then exist there).
    pub storage: Arc<dyn Storage>,
    /// An object-storage tier (`None`: local files only). Segment files are uploaded to it
    /// before the manifest records them and the manifest is published to it after each
    /// change (see `docs/object-storage.md`); the directory keeps the WAL, the local
    /// manifest and copies of the live segment files (all of them, or a bounded cache:
    /// `remote_cache_bytes`). An empty directory opened with a tier that holds a manifest
    /// continues from it. `Remote::open` selects it by URL.
    pub remote: Option<Arc<memforest_object::Remote>>,
    /// With `remote`: the bytes of segment-file copies the directory keeps plus blocks
    /// read by range kept in memory, least recently read dropped first; a file not local is
    /// read by range on its first read, or fetched whole for compaction and `verify` (see
    /// [`crate::cache`]). Files a read holds, or that a flush or compaction wrote and has
    /// not uploaded yet, may exceed it. `None` (the default): a copy of every live file,
    /// each fetched when the store opens or a replica refreshes. Ignored without `remote`.
    pub remote_cache_bytes: Option<u64>,
    /// With [`Options::remote`], a writer's automatic garbage collection of the object
    /// store ([`crate::remote_gc`]): unreferenced objects deleted every interval on a
    /// thread of its own, failures logged and counted ([`crate::Db::remote_gc_stats`]).
    /// `None` (default): only [`crate::Db::collect_remote_garbage`] deletes. Replicas and
    /// read-only handles never collect.
    pub remote_gc: Option<crate::remote_gc::RemoteGc>,
    /// With [`Options::remote`], a writer's timed publication ([`crate::remote_flush`]):
    /// once the memtable has held unflushed writes for this long, a thread of its own
    /// flushes it and publishes the manifest, as [`crate::Db::flush`] does. It bounds how
    /// far behind the writer a replica can be (this interval and a quarter, plus the
    /// flush, the upload and the replica's own refresh interval) and what the loss of the
    /// writer's disk can lose (the writes acknowledged within about that long before it).
    /// A store without new writes is never flushed. `None` (default): publication only
    /// when a memtable fills, at [`crate::Db::flush`] and at [`crate::Db::close`]. Must
    /// not be zero. Replicas and read-only handles ignore it.
    pub remote_flush_interval: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            memtable_size: 256 << 20,
            max_immutable_memtables: 2,
            l0_compaction_trigger: 4,
            l0_stop_writes_trigger: 20,
            max_bytes_for_level_base: 256 << 20,
            level_size_multiplier: 4,
            dynamic_level_bytes: true,
            compaction_pri: CompactionPri::default(),
            target_file_size: 64 << 20,
            num_levels: 7,
            max_manifest_size: 4 << 20,
            wal_segment_size: 64 << 20,
            wal_compression: Compression::default(),
            recovery_mode: RecoveryMode::default(),
            sst: SstOptions::default(),
            segment_resident_bytes: 512 << 20,
            storage: memforest_io::default_storage(),
            remote: None,
            remote_cache_bytes: None,
            remote_gc: None,
            remote_flush_interval: None,
        }
    }
}

impl Options {
    /// Target size in bytes of `level` (>= 1): base * multiplier^(level - 1).
    #[must_use]
    pub fn level_target_bytes(&self, level: usize) -> u64 {
        let exp = u32::try_from(level.saturating_sub(1)).unwrap_or(u32::MAX);
        self.max_bytes_for_level_base
            .saturating_mul(self.level_size_multiplier.saturating_pow(exp))
    }

    /// Checks the options.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for a zero size or trigger, fewer than 2 levels, a
    /// stop trigger below the compaction trigger, a multiplier below 2, a zero
    /// `remote_flush_interval`, or a segment format
    /// version outside [`memforest_sst::MIN_FORMAT_VERSION`]..=[`memforest_sst::FORMAT_VERSION`]
    /// (caught at open rather than by the first flush).
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |what| Err(crate::Error::InvalidArgument(what));
        if self.num_levels < 2 {
            return bad("num_levels must be at least 2");
        }
        if self.memtable_size == 0 || self.target_file_size == 0 || self.wal_segment_size == 0 {
            return bad("sizes must be > 0");
        }
        if self.l0_compaction_trigger == 0 || self.max_immutable_memtables == 0 {
            return bad("triggers must be > 0");
        }
        if self.l0_stop_writes_trigger < self.l0_compaction_trigger {
            return bad("l0_stop_writes_trigger must be at least l0_compaction_trigger");
        }
        if self.level_size_multiplier < 2 {
            return bad("level_size_multiplier must be at least 2");
        }
        if self.remote_flush_interval.is_some_and(|i| i.is_zero()) {
            return bad("remote_flush_interval must be > 0");
        }
        // The check `SstBuilder::new` makes, so a flush cannot fail on it later.
        if memforest_sst::bloom::FilterLayout::for_format_version(self.sst.format_version).is_none()
        {
            return bad("sst.format_version is not one this build writes");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(change: impl FnOnce(&mut Options)) -> crate::Result<()> {
        let mut o = Options::default();
        change(&mut o);
        o.validate()
    }

    #[test]
    fn validate_refuses_what_a_flush_or_compaction_would_fail_on() {
        assert!(with(|_| {}).is_ok());
        assert!(with(|o| o.sst.format_version = memforest_sst::MIN_FORMAT_VERSION).is_ok());
        for version in [0, memforest_sst::FORMAT_VERSION + 1] {
            let err = with(|o| o.sst.format_version = version).unwrap_err();
            assert!(
                matches!(err, crate::Error::InvalidArgument(m) if m.contains("format_version")),
                "version {version}"
            );
        }
        assert!(with(|o| o.level_size_multiplier = 1).is_err());
        assert!(with(|o| o.num_levels = 1).is_err());
        assert!(with(|o| o.remote_flush_interval = Some(std::time::Duration::ZERO)).is_err());
        assert!(with(|o| o.l0_stop_writes_trigger = o.l0_compaction_trigger - 1).is_err());
    }
}
