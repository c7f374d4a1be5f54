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
//!   empty, is drained first): one file, chosen by [`CompactionPri`], plus the files of
//!   `i + 1` it overlaps. A lone file that overlaps nothing below is moved, not rewritten
//!   (RocksDB trivial move).
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

use memforest_sst::{CursorMerge, SstBuilder, SstMeta};

use crate::error::Result;
use crate::level_cursor::LevelCursor;
use crate::level_targets::LevelTargets;
use crate::options::Options;
use crate::range_del::RangeTombstones;
use crate::retention::Retention;
use crate::version::{Fetch, Segment, Version};

/// Which file of a level `i >= 1` over its target is compacted next (RocksDB
/// `compaction_pri`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompactionPri {
    /// The file with the fewest bytes of level `i + 1` under it per byte of its own
    /// (RocksDB `kMinOverlappingRatio`, its default since 6.x): each compaction moves the
    /// most bytes down per byte rewritten, which lowers write amplification against
    /// [`CompactionPri::RoundRobin`].
    #[default]
    MinOverlappingRatio,
    /// The file after the last one picked, in key order, wrapping around (RocksDB
    /// `kRoundRobin`): every key range is compacted in turn.
    RoundRobin,
}

/// One compaction to run.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    /// Input sorted runs, newest data first: each level-0 file alone (newest first), then
    /// the files of each deeper level, in key order. The files of one run share no user
    /// key, so [`run`] merges each run as one source ([`LevelCursor`]).
    pub runs: Vec<Vec<Arc<Segment>>>,
    /// Level the outputs go to.
    pub output_level: usize,
    /// No live file lies below the output level: tombstones can be dropped.
    pub bottom: bool,
    /// The single input is moved to the output level unchanged.
    pub trivial_move: bool,
}

impl CompactionTask {
    /// The input files, newest data first.
    pub fn inputs(&self) -> impl Iterator<Item = &Arc<Segment>> {
        self.runs.iter().flatten()
    }

    /// Ids of the inputs.
    #[must_use]
    pub fn input_ids(&self) -> Vec<u64> {
        self.inputs().map(|s| s.info.id).collect()
    }

    /// A compaction of `upper` (files of level `upper_level`) and the files of
    /// `output_level` they overlap.
    fn new(
        version: &Version,
        upper: Vec<Arc<Segment>>,
        upper_level: usize,
        output_level: usize,
    ) -> Option<Self> {
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
        let mut runs = if upper_level == 0 {
            upper.into_iter().map(|s| vec![s]).collect()
        } else {
            vec![upper]
        };
        if !lower.is_empty() {
            runs.push(lower);
        }
        Some(Self {
            runs,
            output_level,
            bottom,
            trivial_move,
        })
    }
}

/// The most urgent compaction, if any level is over its trigger. `pointers[i]` is the
/// round-robin position (a key) of level `i`, advanced when a file of it is picked (whatever
/// `options.compaction_pri` says, so a store can switch between policies).
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
        return CompactionTask::new(version, l0.clone(), 0, targets.base);
    }
    let files = version.levels.get(level)?;
    let pointer = pointers.get_mut(level)?;
    let seg = match options.compaction_pri {
        CompactionPri::RoundRobin => files
            .iter()
            .find(|s| s.info.smallest.as_slice() > pointer.as_slice())
            .or_else(|| files.first())?,
        CompactionPri::MinOverlappingRatio => {
            let below = version.levels.get(level + 1)?;
            files.iter().min_by_key(|s| overlap_ratio(s, below))?
        }
    };
    pointer.clone_from(&seg.info.largest);
    CompactionTask::new(version, vec![Arc::clone(seg)], level, level + 1)
}

/// Bytes of the files in `below` (a level: key order, disjoint) whose key ranges overlap
/// `seg`'s, per 1/1024 of `seg`'s own bytes (RocksDB's overlapping ratio, without its
/// tombstone compensation).
fn overlap_ratio(seg: &Segment, below: &[Arc<Segment>]) -> u128 {
    let (smallest, largest) = (seg.info.smallest.as_slice(), seg.info.largest.as_slice());
    let first = below.partition_point(|s| s.info.largest.as_slice() < smallest);
    let overlap: u64 = below
        .get(first..)
        .unwrap_or_default()
        .iter()
        .take_while(|s| s.info.smallest.as_slice() <= largest)
        .map(|s| s.info.file_size)
        .sum();
    u128::from(overlap) * 1024 / u128::from(seg.info.file_size.max(1))
}

/// A compaction of every live file into the deepest non-empty level (at least 1): what
/// `Db::compact_all` runs (RocksDB `CompactRange` over everything). `None` when there is
/// no file.
#[must_use]
pub fn pick_all(version: &Version) -> Option<CompactionTask> {
    let deepest = version.levels.iter().rposition(|l| !l.is_empty())?;
    let (l0, deeper) = version.levels.split_first()?;
    let runs = l0
        .iter()
        .map(|s| vec![Arc::clone(s)])
        .chain(deeper.iter().filter(|l| !l.is_empty()).cloned())
        .collect();
    Some(CompactionTask {
        runs,
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
    let sources: Vec<LevelCursor> = task
        .runs
        .iter()
        .map(|run| LevelCursor::new(run.clone(), Fetch::Whole))
        .collect();
    outputs.bytes_read += task.inputs().map(|s| s.info.file_size).sum::<u64>();
    let mut merge = CursorMerge::new(sources)?;
    let mut keep = Retention::new(oldest_snapshot, task.bottom, tombstones);
    let mut out: Option<(SstBuilder, u64)> = None;
    while let Some(e) = merge.peek()? {
        if keep.keep(e.user_key, e.seqno, e.kind) {
            // Files are cut only between user keys, so a key's versions stay in one file.
            if keep.first_version() {
                if let Some((builder, size)) = out.take() {
                    if size >= options.target_file_size {
                        outputs.files.push(builder.finish()?);
                    } else {
                        out = Some((builder, size));
                    }
                }
            }
            let (builder, size) = match &mut out {
                Some(o) => o,
                None => out.insert((new_builder(options, dir, next_id())?, 0)),
            };
            builder.add(e.user_key, e.seqno, e.kind, e.value)?;
            *size += (e.user_key.len() + e.value.len() + 8) as u64;
        }
        merge.skip()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_segments::{puts, segment};

    /// Level 1 over its target holds `a*` (under a large level-2 file) and `m*` (over
    /// nothing); level 0 is empty.
    fn version(dir: &Path) -> Version {
        let keys = |p: char, n: u32| (0..n).map(move |i| format!("{p}{i:03}"));
        let mut v = Version::empty(3);
        v.levels[1] = vec![
            segment(dir, 1, &puts(keys('a', 10), 100)),
            segment(dir, 2, &puts(keys('m', 10), 100)),
        ];
        v.levels[2] = vec![segment(dir, 3, &puts(keys('a', 200), 100))];
        v
    }

    fn options(pri: CompactionPri) -> Options {
        Options {
            num_levels: 3,
            dynamic_level_bytes: false,
            max_bytes_for_level_base: 1024,
            compaction_pri: pri,
            ..Options::default()
        }
    }

    fn picked(pri: CompactionPri, v: &Version) -> (Vec<u64>, bool) {
        let mut pointers = vec![Vec::new(); 3];
        let task = pick(v, &options(pri), &mut pointers).unwrap();
        assert_eq!(task.output_level, 2);
        (task.input_ids(), task.trivial_move)
    }

    #[test]
    fn min_overlapping_ratio_picks_the_file_with_least_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let v = version(dir.path());
        assert_eq!(
            picked(CompactionPri::MinOverlappingRatio, &v),
            (vec![2], true)
        );
        assert_eq!(picked(CompactionPri::RoundRobin, &v), (vec![1, 3], false));
    }

    #[test]
    fn a_level_zero_file_is_a_run_of_its_own_and_the_level_below_one_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut v = version(dir.path());
        let keys = || ["a005".to_owned(), "m005".to_owned()];
        v.levels[0] = vec![
            segment(dir.path(), 4, &puts(keys(), 10)),
            segment(dir.path(), 5, &puts(keys(), 10)),
        ];
        let task = CompactionTask::new(&v, v.levels[0].clone(), 0, 1).unwrap();
        let runs: Vec<Vec<u64>> = task
            .runs
            .iter()
            .map(|r| r.iter().map(|s| s.info.id).collect())
            .collect();
        assert_eq!(runs, vec![vec![4], vec![5], vec![1, 2]]);
        let all = pick_all(&v).unwrap();
        assert_eq!(all.runs.len(), 4, "two level-0 files, level 1, level 2");
    }
}
