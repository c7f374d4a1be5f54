//! Streaming construction of a segment file.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use memforest_codec::serde_codec;
use memforest_io::Storage;

use crate::block::builder::BlockBuilder;
use crate::block::compression;
use crate::block::trailer::CompressionType;
use crate::bloom::{BloomBuilder, FilterLayout};
use crate::error::{Result, SstError};
use crate::filter_scope::{self, FilterScope};
use crate::footer::Footer;
use crate::index::IndexBuilder;
use crate::internal_key::{self, Kind, MAX_SEQNO};
use crate::options::{Compression, SstOptions};
use crate::properties::Properties;
use crate::writer::BlockWriter;

/// Longest user key accepted, in bytes (64 KiB).
pub const MAX_KEY_LEN: usize = 64 << 10;

/// Longest value accepted, in bytes (64 MiB).
pub const MAX_VALUE_LEN: usize = 64 << 20;

/// The name of segment file `id` in its directory: `{id:020}.sst`.
#[must_use]
pub fn file_name(id: u64) -> String {
    format!("{id:020}.sst")
}

/// What [`SstBuilder::finish`] reports about the file it wrote (what the engine records in
/// its manifest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstMeta {
    /// The file's id.
    pub id: u64,
    /// Its final path (`dir/{id:020}.sst`).
    pub path: PathBuf,
    /// Its size in bytes.
    pub file_size: u64,
    /// Smallest user key.
    pub smallest_user_key: Bytes,
    /// Largest user key.
    pub largest_user_key: Bytes,
    /// Smallest seqno of any entry.
    pub min_seqno: u64,
    /// Largest seqno of any entry.
    pub max_seqno: u64,
    /// Entries (puts and tombstones).
    pub entry_count: u64,
    /// Tombstones among them.
    pub tombstone_count: u64,
    /// CRC-32 of the whole file, for scrubbing ([`crate::SstReader::file_crc32`]).
    pub file_crc32: u32,
}

/// Streams sorted entries into a new segment file (mini-lsm `SsTableBuilder`, RocksDB
/// `BlockBasedTableBuilder`).
///
/// Entries go to `dir/{id:020}.sst.tmp`; [`SstBuilder::finish`] fsyncs it, renames it to
/// `dir/{id:020}.sst` and fsyncs the directory. Any error (including out-of-order input)
/// removes the temporary file, as does dropping an unfinished builder, so a corrupt file is
/// never left behind under the final name.
#[derive(Debug)]
pub struct SstBuilder {
    storage: Arc<dyn Storage>,
    id: u64,
    dir: PathBuf,
    tmp_path: PathBuf,
    options: SstOptions,
    /// `None` once finished or failed.
    out: Option<BlockWriter>,
    /// Whether `tmp_path` exists and is ours to remove: from creation until it is renamed
    /// to the final name or removed.
    tmp_live: bool,
    block: BlockBuilder,
    index: IndexBuilder,
    bloom: BloomBuilder,
    /// The filter layout of `options.format_version`.
    filter_layout: FilterLayout,
    /// `options.filter_scope`, when the format version stores one (1 and 2 do not: their
    /// filters hold every key).
    scope: Option<Arc<dyn FilterScope>>,
    /// Encoded internal key of the last entry added.
    last_key: Vec<u8>,
    /// Spare buffer for the next key (swapped with `last_key`, so `add` does not allocate).
    key_buf: Vec<u8>,
    properties: Properties,
}

impl SstBuilder {
    /// Starts building segment file `id` in `dir` (a stale temporary file of the same id is
    /// overwritten).
    ///
    /// # Errors
    /// [`SstError::Io`] when the temporary file cannot be created;
    /// [`SstError::InvalidInput`] for a `format_version` outside
    /// [`crate::MIN_FORMAT_VERSION`]..=[`crate::FORMAT_VERSION`].
    pub fn new(dir: impl AsRef<Path>, id: u64, options: SstOptions) -> Result<Self> {
        Self::new_with(memforest_io::default_storage(), dir, id, options)
    }

    /// [`SstBuilder::new`] doing every file operation through `storage` (the real
    /// filesystem for `new`; a fault-injecting one in tests).
    ///
    /// # Errors
    /// As [`SstBuilder::new`].
    pub fn new_with(
        storage: Arc<dyn Storage>,
        dir: impl AsRef<Path>,
        id: u64,
        options: SstOptions,
    ) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let tmp_path = dir.join(format!("{}.tmp", file_name(id)));
        let filter_layout = FilterLayout::for_format_version(options.format_version).ok_or(
            SstError::InvalidInput {
                path: tmp_path.clone(),
                reason: "unsupported segment format version",
            },
        )?;
        let format_version = options.format_version;
        let scope = options
            .filter_scope
            .clone()
            .filter(|_| filter_scope::stored(format_version));
        let out = BlockWriter::create(&*storage, &tmp_path)?;
        Ok(Self {
            storage,
            id,
            dir,
            tmp_path,
            block: BlockBuilder::new(options.restart_interval),
            options,
            out: Some(out),
            tmp_live: true,
            index: IndexBuilder::default(),
            bloom: BloomBuilder::default(),
            filter_layout,
            scope,
            last_key: Vec::new(),
            key_buf: Vec::new(),
            properties: Properties {
                format_version,
                entry_count: 0,
                tombstone_count: 0,
                smallest_user_key: Vec::new(),
                largest_user_key: Vec::new(),
                min_seqno: u64::MAX,
                max_seqno: 0,
                raw_key_bytes: 0,
                raw_value_bytes: 0,
                data_block_count: 0,
                data_size: 0,
                filter_size: 0,
                index_size: 0,
                creation_time_unix_s: 0,
            },
        })
    }

    /// Appends one entry. Entries must come in strictly increasing internal-key order: user
    /// key ascending, and for one user key seqno descending (newest first).
    ///
    /// # Errors
    /// [`SstError::OutOfOrder`] for an entry not after the previous one (same user key and
    /// seqno included); [`SstError::InvalidInput`] for a key over [`MAX_KEY_LEN`], a value
    /// over [`MAX_VALUE_LEN`] or a seqno over [`MAX_SEQNO`]; [`SstError::Io`] on a write
    /// failure. After any error the temporary file is removed and the builder refuses
    /// further entries.
    pub fn add(&mut self, user_key: &[u8], seqno: u64, kind: Kind, value: &[u8]) -> Result<()> {
        let result = self.try_add(user_key, seqno, kind, value);
        if result.is_err() {
            self.abort();
        }
        result
    }

    fn try_add(&mut self, user_key: &[u8], seqno: u64, kind: Kind, value: &[u8]) -> Result<()> {
        if self.out.is_none() {
            return Err(self.invalid("builder already failed or finished"));
        }
        if user_key.len() > MAX_KEY_LEN {
            return Err(self.invalid("user key longer than 64 KiB"));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(self.invalid("value longer than 64 MiB"));
        }
        if seqno > MAX_SEQNO {
            return Err(self.invalid("seqno above 2^56 - 1"));
        }
        let mut key = std::mem::take(&mut self.key_buf);
        key.clear();
        internal_key::encode_into(&mut key, user_key, seqno, kind);
        let props = &mut self.properties;
        if props.entry_count > 0 {
            // One comparison of the user keys decides both the order check and whether the
            // key is new to the filter; only a repeated key also compares its trailers
            // (internal-key order: seqno descending within a key).
            let in_order = match internal_key::user_key(&self.last_key).cmp(user_key) {
                Ordering::Less => {
                    add_to_filter(&mut self.bloom, self.scope.as_deref(), user_key);
                    true
                }
                Ordering::Equal => internal_key::compare_encoded(&key, &self.last_key).is_gt(),
                Ordering::Greater => false,
            };
            if !in_order {
                return Err(SstError::OutOfOrder {
                    path: self.tmp_path.clone(),
                    index: props.entry_count,
                });
            }
        } else {
            add_to_filter(&mut self.bloom, self.scope.as_deref(), user_key);
            props.smallest_user_key = user_key.to_vec();
        }
        props.entry_count += 1;
        props.tombstone_count += u64::from(kind == Kind::Tombstone);
        props.min_seqno = props.min_seqno.min(seqno);
        props.max_seqno = props.max_seqno.max(seqno);
        props.raw_key_bytes += user_key.len() as u64;
        props.raw_value_bytes += value.len() as u64;
        self.block
            .add(&key, value)
            .map_err(|reason| self.invalid(reason))?;
        // The old last key becomes the spare buffer, so steady-state `add` never allocates.
        self.key_buf = std::mem::replace(&mut self.last_key, key);
        if self.block.estimated_len() >= self.options.block_size {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Writes the pending data block (if any) and records it in the index.
    fn flush_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let Some(out) = self.out.as_mut() else {
            return Err(self.invalid("builder already failed or finished"));
        };
        let raw = self.block.finish();
        let compressed = match self.options.compression {
            Compression::None => None,
            Compression::Zstd { level } => compression::compress(&raw, level),
        };
        let handle = match &compressed {
            Some(packed) => out.write_block(packed, CompressionType::Zstd)?,
            None => out.write_block(&raw, CompressionType::None)?,
        };
        self.index.add(&self.last_key, handle);
        self.properties.data_block_count += 1;
        self.properties.data_size = out.offset();
        Ok(())
    }

    /// Writes the filter, index, properties and footer, fsyncs the file, renames it to its
    /// final name and fsyncs the directory.
    ///
    /// # Errors
    /// [`SstError::InvalidInput`] when no entry was added or the final name already exists
    /// (a finished file is never replaced); [`SstError::Io`] on a write, fsync or rename
    /// failure. The temporary file is removed on error.
    pub fn finish(mut self) -> Result<SstMeta> {
        let result = self.try_finish();
        if result.is_err() {
            self.abort();
        }
        result
    }

    fn try_finish(&mut self) -> Result<SstMeta> {
        if self.properties.entry_count == 0 {
            return Err(self.invalid("a segment file needs at least one entry"));
        }
        let final_path = self.dir.join(file_name(self.id));
        if self.storage.exists(&final_path) {
            return Err(self.invalid("a segment file with this id already exists"));
        }
        self.flush_block()?;
        let options = &self.options;
        let props = &mut self.properties;
        let out = self.out.as_mut().ok_or_else(|| SstError::InvalidInput {
            path: self.tmp_path.clone(),
            reason: "builder already failed or finished",
        })?;
        let bits = self
            .bloom
            .finish(options.bloom_bits_per_key, self.filter_layout);
        let payload = if filter_scope::stored(options.format_version) {
            let id = self
                .scope
                .as_ref()
                .map_or(filter_scope::EVERY_KEY, |s| s.id().get());
            filter_scope::encode(id, &bits)
        } else {
            bits
        };
        let filter = out.write_block(&payload, CompressionType::None)?;
        props.filter_size = out.offset() - props.data_size;
        let index = self.index.finish(
            out,
            options.index_partition_size,
            options.max_single_level_index_size,
        )?;
        props.index_size = out.offset() - props.data_size - props.filter_size;
        props.largest_user_key = internal_key::user_key(&self.last_key).to_vec();
        props.creation_time_unix_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let encoded = serde_codec::encode(&*props).map_err(|_| SstError::InvalidInput {
            path: self.tmp_path.clone(),
            reason: "properties do not encode",
        })?;
        let properties = out.write_block(&encoded, CompressionType::None)?;
        let footer = Footer {
            index: index.handle,
            filter,
            properties,
            index_levels: index.levels,
            version: options.format_version,
        };
        out.write_raw(&footer.encode())?;
        let file_size = out.offset();
        let out = self
            .out
            .take()
            .ok_or_else(|| self.invalid("builder already failed or finished"))?;
        let file_crc32 = out.finish()?;
        self.storage
            .rename(&self.tmp_path, &final_path)
            .map_err(|source| SstError::Io {
                op: "rename",
                path: self.tmp_path.clone(),
                source,
            })?;
        self.tmp_live = false;
        self.storage
            .sync_dir(&self.dir)
            .map_err(|source| SstError::Io {
                op: "fsync dir",
                path: self.dir.clone(),
                source,
            })?;
        let props = &self.properties;
        Ok(SstMeta {
            id: self.id,
            path: final_path,
            file_size,
            smallest_user_key: Bytes::copy_from_slice(&props.smallest_user_key),
            largest_user_key: Bytes::copy_from_slice(&props.largest_user_key),
            min_seqno: props.min_seqno,
            max_seqno: props.max_seqno,
            entry_count: props.entry_count,
            tombstone_count: props.tombstone_count,
            file_crc32,
        })
    }

    fn invalid(&self, reason: &'static str) -> SstError {
        SstError::InvalidInput {
            path: self.tmp_path.clone(),
            reason,
        }
    }

    /// Closes and removes the temporary file, whatever step failed (best effort: the engine
    /// also removes stray `.tmp` files at open).
    fn abort(&mut self) {
        self.out = None;
        if std::mem::take(&mut self.tmp_live) {
            let _ = self.storage.remove_file(&self.tmp_path);
        }
    }
}

impl Drop for SstBuilder {
    fn drop(&mut self) {
        self.abort();
    }
}

/// Adds a new user key to the file's filter unless `scope` leaves it out.
fn add_to_filter(bloom: &mut BloomBuilder, scope: Option<&dyn FilterScope>, user_key: &[u8]) {
    if scope.is_none_or(|s| s.includes(user_key)) {
        bloom.add_key(user_key);
    }
}
