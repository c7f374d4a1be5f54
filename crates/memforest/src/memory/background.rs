//! Extraction off the caller's thread: `Memory::add` without `AddOptions::wait`, with an
//! extractor that calls a model, returns once the new turns and their cells are durable
//! (each cell marked pending in the same WAL commit, so a crash re-extracts it at the next
//! open). The cells are extracted and committed on the background pool, its
//! `MemoryOptions::extract_pool` workers bounding the concurrent model calls, cells of many
//! users and many adds in parallel. Until its facts commit a cell counts as pending
//! (`MemoryStats::pending_cells`), `Memory::flush_summaries` waits for it, and
//! `Memory::close` lets it finish. Turn order needs no care here: supersession compares
//! event times when read, not commit order.
//!
//! The backlog is bounded: while more than `MemoryOptions::extract_backlog` cells are
//! queued or running, `add` waits, and the wait is recorded as a stall with its reason.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::memory::apply::{self, CellOutcome};
use crate::memory::pool::Pool;
use crate::memory::{failed, MemoryError, Shared};
use memforest_engine::TenantId;

/// The due time of a cell in flight on the background pool: far enough that the
/// scheduler's retry loop never takes it meanwhile; the job replaces it when it ends.
const IN_FLIGHT: Duration = Duration::from_secs(24 * 3600);

impl Shared {
    /// Queues `cells` of `tenant` (committed, marked pending) for extraction on the
    /// background pool. A cell the pool cannot take (it is stopping, or its threads cannot
    /// be started) is left to the scheduler's retry loop, or to the next open.
    pub(crate) fn extract_later(self: &Arc<Self>, tenant: &TenantId, cells: &[u64]) {
        let Some(pool) = self.background_pool() else {
            for &cell in cells {
                self.retry_cell(tenant, cell);
            }
            return;
        };
        for &cell in cells {
            self.cells
                .lock()
                .insert((tenant.clone(), cell, 0), (Instant::now() + IN_FLIGHT, 0));
            let (s, t) = (Arc::clone(self), tenant.clone());
            let job = move || {
                // At a close without summaries (a drop) the cell stays pending in the store.
                if s.stopping() && !s.summarize_on_stop() {
                    return;
                }
                let result = apply::process(&s, &t, cell);
                s.settle_cell(&t, cell, result);
                s.wake();
            };
            if !pool.submit(job) {
                self.retry_cell(tenant, cell);
            }
        }
    }

    /// The background pool, started on first use; `None` when its threads cannot start.
    fn background_pool(&self) -> Option<&Pool> {
        self.background
            .get_or_init(|| Pool::new("mf-extract-bg", self.opts.extract_pool, None).ok())
            .as_ref()
    }

    /// Cells queued or running on the background pool.
    pub(crate) fn background_depth(&self) -> u64 {
        self.background
            .get()
            .and_then(Option::as_ref)
            .map_or(0, Pool::depth)
    }

    /// Records how the extraction of `cell` ended: committed, given up for good
    /// ([`failed::record`]), retried later with backoff (a model failure), or, for any other
    /// error, the store's background error.
    pub(crate) fn settle_cell(
        &self,
        tenant: &TenantId,
        cell: u64,
        result: Result<CellOutcome, MemoryError>,
    ) {
        let outcome = match result {
            Err(e) if failed::is_permanent(&e) => failed::record(self, tenant, cell, &e),
            other => other.map(|_| ()),
        };
        match outcome {
            Ok(()) => self.cell_done(tenant, cell),
            Err(MemoryError::Model(_)) => self.retry_cell(tenant, cell),
            Err(e) => {
                self.cell_done(tenant, cell);
                self.set_error(e);
            }
        }
    }

    /// Blocks while more than `extract_backlog` cells wait on the background pool,
    /// recording the stall.
    pub(crate) fn wait_extract_backlog(&self) {
        let limit = self.opts.extract_backlog;
        self.stall_while(
            || self.background_depth() > limit,
            || format!("extraction backlog over {limit} cells"),
        );
    }

    /// Blocks until the background pool is idle (at close, before the scheduler stops).
    pub(crate) fn wait_background(&self) {
        while self.background_depth() > 0 {
            self.wait_signal(Duration::from_millis(20));
        }
    }
}
