//! [`MemoryStats`]: model calls and tokens per tenant and kind, queue depth, dirty backlog
//! per level, summary lag and write stalls.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::memory::model::Usage;

/// What a model call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallKind {
    /// Cell extraction.
    Extraction,
    /// Node summary.
    Summary,
    /// Embedding (facts or summaries).
    Embedding,
}

/// Counters of one call kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindUsage {
    /// Successful calls.
    pub calls: u64,
    /// Failed calls (retried later).
    pub errors: u64,
    /// Prompt tokens (reported, or estimated where the backend reports none).
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Calls whose token counts were estimated.
    pub estimated: u64,
}

/// A snapshot of the memory layer's counters (`Memory::memory_stats`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryStats {
    /// Usage by tenant name (lossy UTF-8) and call kind.
    pub usage: BTreeMap<String, BTreeMap<CallKind, KindUsage>>,
    /// Jobs queued or running in the extraction and summary pools.
    pub queue_depth: u64,
    /// Dirty tree nodes by level (index 0 = level 1).
    pub dirty_by_level: Vec<u64>,
    /// Cells whose extraction has not committed.
    pub pending_cells: u64,
    /// Cells given up as never extractable (`memory::failed`: their raw turns stay
    /// stored): those recorded in the store when it was opened plus those since.
    pub failed_cells: u64,
    /// How long the oldest outstanding dirty mark has waited (zero when nothing is dirty).
    pub summary_lag: Duration,
    /// Summaries reused because the node's input hash was unchanged.
    pub summaries_reused: u64,
    /// Single-child nodes whose summary is their child's text (no model call).
    pub summaries_copied: u64,
    /// Summary results dropped because the node changed meanwhile.
    pub summaries_stale: u64,
    /// Nodes given the extractive summary (no model) after `MemoryOptions::summary_attempts`
    /// failed calls, so a summarizer that never gives a usable reply cannot keep a node
    /// dirty forever; the node is summarized by the model again when it next changes.
    pub summary_fallbacks: u64,
    /// Ingest calls that waited for the summary backlog.
    pub stalls: u64,
    /// Total time ingest calls spent waiting, microseconds.
    pub stall_micros: u64,
    /// Why the last stall happened.
    pub last_stall_reason: Option<String>,
}

/// The live counters behind [`MemoryStats`].
#[derive(Debug, Default)]
pub struct Counters {
    inner: Mutex<MemoryStats>,
    dirty_since: Mutex<Option<Instant>>,
}

impl Counters {
    /// Counts one call of `kind` for `tenant`.
    pub fn call(&self, tenant: &str, kind: CallKind, result: Result<Usage, ()>) {
        let mut s = self.inner.lock();
        let k = s
            .usage
            .entry(tenant.to_owned())
            .or_default()
            .entry(kind)
            .or_default();
        match result {
            Ok(u) => {
                k.calls += 1;
                k.prompt_tokens += u.prompt_tokens;
                k.completion_tokens += u.completion_tokens;
                k.estimated += u64::from(!u.reported);
            }
            Err(()) => k.errors += 1,
        }
    }

    /// Adds to the reuse / stale counters.
    pub fn summaries(&self, reused: u64, stale: u64) {
        let mut s = self.inner.lock();
        s.summaries_reused += reused;
        s.summaries_stale += stale;
    }

    /// Counts one node given the extractive summary after failed calls.
    pub fn summary_fallback(&self) {
        self.inner.lock().summary_fallbacks += 1;
    }

    /// Counts `n` cells recorded as failed.
    pub fn cells_failed(&self, n: u64) {
        self.inner.lock().failed_cells += n;
    }

    /// Counts one cell recorded as failed.
    pub fn cell_failed(&self) {
        self.cells_failed(1);
    }

    /// Adds to the single-child copy counter.
    pub fn copied(&self, n: u64) {
        self.inner.lock().summaries_copied += n;
    }

    /// Records the start of a stall for `reason`.
    pub fn stall_begin(&self, reason: String) {
        let mut s = self.inner.lock();
        s.stalls += 1;
        s.last_stall_reason = Some(reason);
    }

    /// Records that a stall lasted `d`.
    pub fn stall_end(&self, d: Duration) {
        self.inner.lock().stall_micros += u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    }

    /// Notes whether anything is dirty now (starts or stops the lag clock).
    pub fn dirty_now(&self, dirty: bool) {
        let mut since = self.dirty_since.lock();
        match (dirty, since.is_some()) {
            (true, false) => *since = Some(Instant::now()),
            (false, true) => *since = None,
            _ => {}
        }
    }

    /// A snapshot with the gauges filled in.
    pub fn snapshot(
        &self,
        queue_depth: u64,
        dirty_by_level: Vec<u64>,
        pending_cells: u64,
    ) -> MemoryStats {
        let mut s = self.inner.lock().clone();
        s.queue_depth = queue_depth;
        s.dirty_by_level = dirty_by_level;
        s.pending_cells = pending_cells;
        s.summary_lag = self
            .dirty_since
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default();
        s
    }
}
