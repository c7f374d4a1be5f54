//! Leveled compaction: which files to merge ([`pick`], the RocksDB `LevelCompactionPicker`
//! rules) and the merge itself ([`run`]).
//!
//! - Level 0 is compacted into the base level ([`LevelTargets`]: level 1 with static
//!   targets, deeper with `Options::dynamic_level_bytes`) once it holds
//!   `l0_compaction_trigger` files (RocksDB `level0_file_num_compaction_trigger`): all
//!   level-0 files plus the base-level files they overlap.
//! - Level `i >= 1` is compacted into `i + 1` once its bytes exceed its target
//!   ([`LevelTargets`]; RocksDB `max_bytes_for_level_base`,
//!   `max_bytes_for_level_multiplier`; a level above the base level, which should be
//!   empty, is drained first): one file, chosen
//!   round-robin by key (RocksDB `kRoundRobin`), plus the files of `i + 1` it overlaps. A
//!   lone file that overlaps nothing below is moved, not rewritten (RocksDB trivial move).
//! - Outputs are cut at `target_file_size` bytes (RocksDB `target_file_size_base`), only
//!   between user keys, so the files of a level never share a key.
//!
//! The merge keeps what [`Retention`] keeps: every version newer than the oldest live
//! snapshot and the newest version at or below it; it drops versions a range tombstone
//! hides from every reader, and point tombstones when no file below the output level exists
//! (the bottom).

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use memforest_sst::{BoxedSource, EntrySource, MergeIterator, SstBuilder, SstMeta};

use crate::error::Result;
use crate::level_targets::LevelTargets;
use crate::options::Options;
use crate::range_del::RangeTombstones;
use crate::retention::Retention;
use crate::version::{Segment, Version};

/// One compaction to run.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    /// Input files, newest data first (level 0 newest first, then upper level, then lower).
    pub inputs: Vec<Arc<Segment>>,
    /// Level the outputs go to.
    pub output_level: usize,
    /// No live file lies below the output level: tombstones can be dropped.
    pub bottom: bool,
    /// The single input is moved to the output level unchanged.
    pub trivial_move: bool,
}

impl CompactionTask {
    /// Ids of the inputs.
    #[must_use]
    pub fn input_ids(&self) -> Vec<u64> {
        self.inputs.iter().map(|s| s.info.id).collect()
    }

    fn new(version: &Version, upper: Vec<Arc<Segment>>, output_level: usize) -> Option<Self> {
        let smallest = upper.iter().map(|s| s.info.smallest.as_slice()).min()?;
        let largest = upper.iter().map(|s| s.info.largest.as_slice()).max()?;
        let lower: Vec<Arc<Segment>> = version
            .levels
            .get(output_level)?
            .iter()
            .filter(|s| {
                s.info
                    .overlaps(Bound::Included(smallest), Bound::Included(largest))
            })
            .cloned()
            .collect();
        let bottom = version
            .levels
            .iter()
            .skip(output_level + 1)
            .all(Vec::is_empty);
        let trivial_move = upper.len() == 1 && lower.is_empty();
        let mut inputs = upper;
        inputs.extend(lower);
        Some(Self {
            inputs,
            output_level,
            bottom,
            trivial_move,
        })
    }
}

/// The most urgent compaction, if any level is over its trigger. `pointers[i]` is the
/// round-robin position (a key) of level `i`, advanced when a file of it is picked.
#[must_use]
pub fn pick(
    version: &Version,
    options: &Options,
    pointers: &mut [Vec<u8>],
) -> Option<CompactionTask> {
    let l0 = version.levels.first()?;
    let targets = LevelTargets::new(version, options);
    let l0_score = l0.len() as f64 / options.l0_compaction_trigger as f64;
    let mut best = (l0_score, 0usize);
    for level in 1..version.levels.len().saturating_sub(1) {
        let score = version.level_bytes(level) as f64 / targets.target(level).max(1) as f64;
        if score > best.0 {
            best = (score, level);
        }
    }
    let (score, level) = best;
    if score < 1.0 {
        return None;
    }
    if level == 0 {
        return CompactionTask::new(version, l0.clone(), targets.base);
    }
    let files = version.levels.get(level)?;
    let pointer = pointers.get_mut(level)?;
    let seg = files
        .iter()
        .find(|s| s.info.smallest.as_slice() > pointer.as_slice())
        .or_else(|| files.first())?;
    pointer.clone_from(&seg.info.largest);
    CompactionTask::new(version, vec![Arc::clone(seg)], level + 1)
}

/// A compaction of every live file into the deepest non-empty level (at least 1): what
/// `Db::compact_all` runs (RocksDB `CompactRange` over everything). `None` when there is
/// no file.
#[must_use]
pub fn pick_all(version: &Version) -> Option<CompactionTask> {
    let deepest = version.levels.iter().rposition(|l| !l.is_empty())?;
    let inputs: Vec<Arc<Segment>> = version.levels.iter().flatten().cloned().collect();
    Some(CompactionTask {
        inputs,
        output_level: deepest.max(1),
        bottom: true,
        trivial_move: false,
    })
}

/// What [`run`] produced.
#[derive(Debug, Default)]
pub struct Outputs {
    /// The files written.
    pub files: Vec<SstMeta>,
    /// Bytes of input files read.
    pub bytes_read: u64,
}

/// Merges the task's inputs into new files in `dir` (ids from `next_id`).
///
/// # Errors
/// Corruption of an input, or I/O errors writing outputs (outputs already finished are
/// left for the caller to delete; see [`Outputs`]).
pub fn run(
    task: &CompactionTask,
    dir: &Path,
    options: &Options,
    oldest_snapshot: u64,
    tombstones: &RangeTombstones,
    mut next_id: impl FnMut() -> u64,
    outputs: &mut Outputs,
) -> Result<()> {
    let mut sources: Vec<BoxedSource> = Vec::with_capacity(task.inputs.len());
    for seg in &task.inputs {
        sources.push(Box::new(seg.reader.iter()?));
        outputs.bytes_read += seg.info.file_size;
    }
    let mut merge = MergeIterator::new(sources)?;
    let mut keep = Retention::new(oldest_snapshot, task.bottom, tombstones);
    let mut out: Option<(SstBuilder, u64)> = None;
    let mut last_key: Option<Bytes> = None;
    while let Some(e) = merge.next_entry()? {
        if !keep.keep(&e.user_key, e.seqno, e.kind) {
            continue;
        }
        let new_key = last_key.as_ref() != Some(&e.user_key);
        if new_key {
            if let Some((builder, size)) = out.take() {
                if size >= options.target_file_size {
                    outputs.files.push(builder.finish()?);
                } else {
                    out = Some((builder, size));
                }
            }
            last_key = Some(e.user_key.clone());
        }
        let (builder, size) = match &mut out {
            Some(o) => o,
            None => out.insert((new_builder(options, dir, next_id())?, 0)),
        };
        builder.add(&e.user_key, e.seqno, e.kind, &e.value)?;
        *size += (e.user_key.len() + e.value.len() + 8) as u64;
    }
    if let Some((builder, _)) = out {
        outputs.files.push(builder.finish()?);
    }
    Ok(())
}

fn new_builder(options: &Options, dir: &Path, id: u64) -> Result<SstBuilder> {
    let storage = Arc::clone(&options.storage);
    Ok(SstBuilder::new_with(storage, dir, id, options.sst.clone())?)
}
