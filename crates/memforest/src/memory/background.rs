//! Extraction off the caller's thread: `Memory::add` without `AddOptions::wait`, with an
//! extractor that calls a model, returns once the new turns and their cells are durable
//! (each cell marked pending in the same WAL commit, so a crash re-extracts it at the next
//! open). The cells are extracted and committed on the background pool, its
//! `MemoryOptions::extract_pool` workers bounding the concurrent model calls, users in
//! parallel. Until its facts commit a cell counts as pending
//! (`MemoryStats::pending_cells`), `Memory::flush_summaries` waits for it, and
//! `Memory::close` lets it finish.
//!
//! Each user's cells wait in a queue of their own, in turn order, served by one job at a
//! time: it takes up to `MemoryOptions::extract_batch` cells (and the extractor's
//! `max_batch`) from the front, extracts them in one model call
//! (`Extractor::extract_batch`) and embeds their facts in one embedder call, commits them
//! in one batch, then goes to the back of the pool's queue if more cells wait. So cells
//! that arrive while the model answers are extracted together, and one user's facts
//! commit in the order their turns were added. A cell the batched reply leaves out, or
//! answers with nothing usable, stays pending and is retried on its own with backoff.
//!
//! The backlog is bounded: while more than `MemoryOptions::extract_backlog` cells are
//! queued or running, `add` waits, and the wait is recorded as a stall with its reason.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::memory::apply::{self, CellOutcome};
use crate::memory::pool::Pool;
use crate::memory::{failed, MemoryError, Shared};
use memforest_engine::TenantId;

/// The due time of a cell in flight on the background pool: far enough that the
/// scheduler's retry loop never takes it meanwhile; the job replaces it when it ends.
const IN_FLIGHT: Duration = Duration::from_secs(24 * 3600);

/// The cells waiting for background extraction, per user.
#[derive(Debug, Default)]
pub(crate) struct ExtractQueues {
    /// Each user with a job on the pool, and the cells its job has yet to take, in turn
    /// order. A user is here exactly while a job for it is queued or running.
    waiting: HashMap<TenantId, VecDeque<u64>>,
    /// Cells queued or being extracted.
    cells: u64,
}

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
        {
            let mut retry = self.cells.lock();
            for &cell in cells {
                retry.insert((tenant.clone(), cell, 0), (Instant::now() + IN_FLIGHT, 0));
            }
        }
        let start = {
            let mut q = self.extract_queues.lock();
            q.cells += cells.len() as u64;
            let start = !q.waiting.contains_key(tenant);
            q.waiting
                .entry(tenant.clone())
                .or_default()
                .extend(cells.iter().copied());
            start
        };
        if start {
            self.submit_batch_job(pool, tenant);
        }
    }

    /// Puts the job that extracts `tenant`'s next batch on `pool`; when the pool refuses
    /// it, the waiting cells go to the scheduler's retry loop.
    fn submit_batch_job(self: &Arc<Self>, pool: &Pool, tenant: &TenantId) {
        let (s, t) = (Arc::clone(self), tenant.clone());
        if !pool.submit(move || s.extract_next_batch(&t)) {
            let left = self.drop_waiting(tenant);
            for &cell in &left {
                self.retry_cell(tenant, cell);
            }
            self.extracted(left.len());
        }
    }

    /// Ends `tenant`'s job: removes the user from the queues, returning the cells it had
    /// yet to take.
    fn drop_waiting(&self, tenant: &TenantId) -> Vec<u64> {
        let mut q = self.extract_queues.lock();
        q.waiting.remove(tenant).map(Vec::from).unwrap_or_default()
    }

    /// Takes up to `n` of `tenant`'s waiting cells; with none left the user's job ends
    /// (the user leaves the queues).
    fn take_waiting(&self, tenant: &TenantId, n: usize) -> Vec<u64> {
        let mut q = self.extract_queues.lock();
        let Some(cells) = q.waiting.get_mut(tenant) else {
            return Vec::new();
        };
        let batch: Vec<u64> = cells.drain(..n.min(cells.len())).collect();
        if batch.is_empty() {
            q.waiting.remove(tenant);
        }
        batch
    }

    /// Counts `n` cells out of the background backlog.
    fn extracted(&self, n: usize) {
        let mut q = self.extract_queues.lock();
        q.cells = q.cells.saturating_sub(n as u64);
    }

    /// A background job: extracts and commits `tenant`'s next batch, then queues the job
    /// again if more cells wait. At a close without summaries (a drop) the cells stay
    /// pending in the store.
    fn extract_next_batch(self: &Arc<Self>, tenant: &TenantId) {
        // The extractor is the caller's code: a panic in it must not end this job with
        // the user's cells still queued behind it.
        let max_batch =
            std::panic::catch_unwind(AssertUnwindSafe(|| self.opts.extractor.max_batch()))
                .unwrap_or(1);
        let limit = self.opts.extract_batch.min(max_batch).max(1);
        if self.stopping() && !self.summarize_on_stop() {
            let left = self.drop_waiting(tenant);
            self.extracted(left.len());
            return;
        }
        let batch = self.take_waiting(tenant, limit);
        if batch.is_empty() {
            return;
        }
        let done = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.extract_cells(tenant, &batch);
        }));
        if done.is_err() {
            // A bug outside the guarded model calls: the user's cached trees may hold
            // what never committed, and the cells stay pending in the store for the next
            // open. The error first, as in `settle_cell`.
            self.forest.lock().tenants.remove(tenant);
            self.set_error(MemoryError::Invariant(
                "background extraction panicked (the log has the message)",
            ));
            for &cell in &batch {
                self.cell_done(tenant, cell);
            }
        }
        self.extracted(batch.len());
        self.wake();
        if let Some(pool) = self.background_pool() {
            self.submit_batch_job(pool, tenant);
        }
    }

    /// Extracts and commits `cells` of `tenant`: alone through [`apply::process`], or
    /// several in one extractor call and one commit ([`apply::prepare_batch`]), each cell
    /// settled as [`Shared::settle_cell`] does.
    fn extract_cells(&self, tenant: &TenantId, cells: &[u64]) {
        if let [cell] = cells {
            let result = apply::process(self, tenant, *cell);
            self.settle_cell(tenant, *cell, result);
            return;
        }
        let mut ready = Vec::with_capacity(cells.len());
        for (cell, prepared) in apply::prepare_batch(self, tenant, cells) {
            match prepared {
                Ok(p) => ready.push(p),
                Err(e) => self.settle_cell(tenant, cell, Err(e)),
            }
        }
        let committed = apply::commit_or_fail(self, tenant, &ready);
        let cells = ready.iter().map(apply::Prepared::cell);
        match committed {
            Ok(_) => cells.for_each(|cell| self.cell_committed(tenant, cell)),
            Err(MemoryError::Model(e)) => {
                cells.for_each(|cell| self.extraction_failed(tenant, cell, &e));
            }
            Err(e) => {
                self.set_error(e);
                cells.for_each(|cell| self.cell_done(tenant, cell));
            }
        }
    }

    /// The background pool, started on first use; `None` when its threads cannot start.
    fn background_pool(&self) -> Option<&Pool> {
        self.background
            .get_or_init(|| Pool::new("mf-extract-bg", self.opts.extract_pool, None).ok())
            .as_ref()
    }

    /// Cells queued or being extracted in the background.
    pub(crate) fn background_depth(&self) -> u64 {
        self.extract_queues.lock().cells
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
            Ok(()) => self.cell_committed(tenant, cell),
            Err(MemoryError::Model(e)) => self.extraction_failed(tenant, cell, &e),
            Err(e) => {
                // The error first: a `flush_summaries` that finds no cell pending must
                // find it.
                self.set_error(e);
                self.cell_done(tenant, cell);
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
