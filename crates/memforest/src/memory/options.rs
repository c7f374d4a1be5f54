//! [`MemoryOptions`]: the memory layer's settings, a field of [`crate::Options`].

use std::sync::Arc;
use std::time::Duration;

use memforest_tree::TreeConfig;
use memforest_wal::Durability;

use crate::embedder::StaticEmbedder;
use crate::memory::cell::CellLimits;
use crate::memory::embed::Embedder;
use crate::memory::extract::{Extractor, HeuristicExtractor};
use crate::memory::summarize::{ExtractiveSummarizer, Summarizer};

/// Memory-layer settings. Defaults follow the MemForest paper where it gives a value.
#[derive(Debug, Clone)]
pub struct MemoryOptions {
    /// Turns cells into items. Default [`HeuristicExtractor`].
    pub extractor: Arc<dyn Extractor>,
    /// Summarizes dirty tree nodes. Default [`ExtractiveSummarizer`].
    pub summarizer: Arc<dyn Summarizer>,
    /// Embeds facts (their vectors, which queries search by meaning; scene scoring) and
    /// summaries (forest recall and browse). Default [`StaticEmbedder::bundled`], in
    /// process; `None` makes a lexical-only store.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Extraction worker threads: at most this many extraction calls run at once for
    /// callers that wait (`ingest_session`), and as many again for `Memory::add`'s
    /// background extraction (a second pool, started by its first use). Default: the
    /// cores, 2 to 16.
    pub extract_pool: usize,
    /// Cells of one user that background extraction hands to the extractor in one call
    /// when several are waiting (`Extractor::extract_batch`, up to the extractor's
    /// `max_batch`): fewer model calls per exchange when writes arrive faster than the
    /// model answers. The cells of one user are extracted in turn order, one batch at a
    /// time. At least 1; 1 extracts each cell on its own. Default 8.
    pub extract_batch: usize,
    /// Summary worker threads (concurrent summarizer calls). Default: the cores, 2 to 16.
    pub summary_pool: usize,
    /// Dirty nodes of one user a refresh pass hands to the summarizer in one call
    /// (`Summarizer::summarize_batch`, up to the summarizer's `max_batch`), among the nodes
    /// it submits together (the next level of every tree whose previous level is done).
    /// At least 1; 1 summarizes each node on its own. Default 8.
    pub summary_batch: usize,
    /// MemCell limits (b = 2 turns, 8,000 chars, 6 h gap).
    pub cells: CellLimits,
    /// Branching factor per tree kind (default 16 each).
    pub trees: TreeConfig,
    /// Scene match threshold (MemoryOS: 0.6).
    pub scene_threshold: f32,
    /// Facts per scene before a new one is started (paper: 60).
    pub scene_capacity: usize,
    /// Scenes open for new facts per tenant; the least recently joined one is closed
    /// beyond it (MemoryOS's mid-term memory holds at most 200 segments). Bounds routing
    /// cost and memory whatever the number of facts.
    pub scene_open_limit: usize,
    /// Facts an entity needs before its tree is created (paper: 3).
    pub entity_min_facts: usize,
    /// Distinct sessions an entity needs before its tree is created (paper: 2).
    pub entity_min_sessions: usize,
    /// Trees (meta page and dirty sets, a few hundred bytes each) a tenant keeps cached
    /// past a commit: beyond it the trees with no dirty node are dropped and reload from
    /// their meta page on next use, so the cache does not grow with the number of sessions,
    /// scenes and entities. Default 1,024.
    pub tree_cache_per_tenant: usize,
    /// Ingest waits (stall recorded in stats) while more tree nodes than this are dirty,
    /// as estimated in O(1) from the scheduler's last refresh pass plus what ingest has
    /// dirtied since (a soft bound). Default 1,000,000.
    pub backlog_limit: u64,
    /// Cells queued or running on the background extraction pool (`Memory::add` without
    /// `AddOptions::wait`, with an extractor that calls a model) above which `add` waits,
    /// recorded as a stall. Default 10,000.
    pub extract_backlog: u64,
    /// Rest between the end of one refresh pass and the start of the next while ingest
    /// keeps dirtying nodes: the dirty set batches what arrives meanwhile, so a node
    /// dirtied by several inserts is summarized once (the MemForest paper's batched
    /// dirty-set refresh). Summaries lag writes by up to this plus two passes.
    /// `Memory::flush_summaries`, `Db::close`, forgetting, and ingest held back by
    /// `backlog_limit` start a pass at once; a failed cell or node due for a retry ends
    /// the rest too. `Duration::MAX` refreshes only when someone waits; zero runs passes
    /// back to back. Default 1 s: a longer rest batches more inserts per summarized node,
    /// so less CPU per fact, at the price of staler summaries.
    pub refresh_interval: Duration,
    /// Whether `Db::close` summarizes everything dirty before returning. Default true.
    pub summarize_on_shutdown: bool,
    /// Durability of memory-layer writes. Default `Buffered` (survives a process crash).
    pub durability: Durability,
    /// First retry delay after a failed model call; doubles per failure up to
    /// `max_backoff`. Default 100 ms.
    pub retry_backoff: Duration,
    /// Longest retry delay. Default 30 s.
    pub max_backoff: Duration,
    /// Failed extraction calls after which `Memory::flush_summaries` stops waiting for a
    /// cell and returns [`MemoryError::Model`](crate::memory::MemoryError::Model) naming
    /// the cells (they stay pending: retried with backoff, and extracted at the next open;
    /// their messages are stored either way). At least 1. Default 4.
    pub extract_attempts: u32,
    /// Summary calls one node gets (each after its backoff) before it is given the
    /// extractive summary instead, with no model call and no embedding, and counted in
    /// `MemoryStats::summary_fallbacks`. A summarizer that always fails or always replies
    /// with nothing usable would otherwise keep the node dirty and `flush_summaries`
    /// waiting forever. At least 1. Default 4.
    pub summary_attempts: u32,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self {
            extractor: Arc::new(HeuristicExtractor),
            summarizer: Arc::new(ExtractiveSummarizer::default()),
            embedder: StaticEmbedder::bundled()
                .ok()
                .map(|e| e as Arc<dyn Embedder>),
            extract_pool: default_pool(),
            extract_batch: 8,
            summary_pool: default_pool(),
            summary_batch: 8,
            cells: CellLimits::default(),
            trees: TreeConfig::default(),
            scene_threshold: 0.6,
            scene_capacity: 60,
            scene_open_limit: 200,
            entity_min_facts: 3,
            entity_min_sessions: 2,
            tree_cache_per_tenant: 1024,
            backlog_limit: 1_000_000,
            extract_backlog: 10_000,
            refresh_interval: Duration::from_secs(1),
            summarize_on_shutdown: true,
            durability: Durability::Buffered,
            retry_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(30),
            extract_attempts: 4,
            summary_attempts: 4,
        }
    }
}

impl MemoryOptions {
    /// Checks the options; an error names the option.
    ///
    /// # Errors
    /// [`memforest_engine::Error::InvalidArgument`] for an empty pool or one of more than
    /// [`MAX_POOL`] workers, a zero cell limit, `scene_capacity`, `scene_open_limit`,
    /// `summary_attempts`, `extract_attempts`, `extract_batch` or `summary_batch`, or a
    /// `scene_threshold` that is not a number.
    pub fn validate(&self) -> memforest_engine::Result<()> {
        let invalid = |what| Err(memforest_engine::Error::InvalidArgument(what));
        for (pool, empty, over) in [
            (
                self.extract_pool,
                "MemoryOptions::extract_pool must have a worker",
                "MemoryOptions::extract_pool may have at most 1024 workers",
            ),
            (
                self.summary_pool,
                "MemoryOptions::summary_pool must have a worker",
                "MemoryOptions::summary_pool may have at most 1024 workers",
            ),
        ] {
            if pool == 0 {
                return invalid(empty);
            }
            if pool > MAX_POOL {
                return invalid(over);
            }
        }
        let counts = [
            (
                self.cells.max_turns,
                "MemoryOptions::cells.max_turns must be > 0",
            ),
            (
                self.cells.max_chars,
                "MemoryOptions::cells.max_chars must be > 0",
            ),
            (
                self.scene_capacity,
                "MemoryOptions::scene_capacity must be > 0",
            ),
            (
                self.scene_open_limit,
                "MemoryOptions::scene_open_limit must be > 0",
            ),
            (
                self.extract_batch,
                "MemoryOptions::extract_batch must be > 0",
            ),
            (
                self.summary_batch,
                "MemoryOptions::summary_batch must be > 0",
            ),
        ];
        if let Some((_, what)) = counts.into_iter().find(|(n, _)| *n == 0) {
            return invalid(what);
        }
        if self.summary_attempts == 0 {
            return invalid("MemoryOptions::summary_attempts must be > 0");
        }
        if self.extract_attempts == 0 {
            return invalid("MemoryOptions::extract_attempts must be > 0");
        }
        if self.scene_threshold.is_nan() {
            return invalid("MemoryOptions::scene_threshold is not a number");
        }
        Ok(())
    }
}

/// Most workers a pool may have: every pool thread is started at open (three pools, the
/// background one on first use), and a mistyped size would exhaust the process's threads
/// before the open could fail.
pub const MAX_POOL: usize = 1024;

/// Workers per pool by default: the machine's cores (`std::thread::available_parallelism`),
/// at least 2 and at most 16; model calls wait on the network, so a pool is not bound by
/// the cores, but a default of 16 threads per pool oversubscribes a small machine.
fn default_pool() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Breaks one option.
    type Break = fn(&mut MemoryOptions);

    /// Each invalid option is refused naming it, before anything is opened.
    #[test]
    fn an_invalid_option_is_named() {
        let cases: [(Break, &str); 5] = [
            (|o| o.summary_batch = 0, "summary_batch"),
            (|o| o.extract_attempts = 0, "extract_attempts"),
            (|o| o.cells.max_turns = 0, "cells.max_turns"),
            (|o| o.summary_pool = MAX_POOL + 1, "summary_pool"),
            (|o| o.scene_threshold = f32::NAN, "scene_threshold"),
        ];
        for (break_it, name) in cases {
            let mut options = MemoryOptions::default();
            break_it(&mut options);
            let err = options.validate().map_err(|e| e.to_string());
            assert!(
                err.as_ref().is_err_and(|e| e.contains(name)),
                "{name}: {err:?}"
            );
        }
        assert!(MemoryOptions::default().validate().is_ok());
    }
}
