//! The memory layer (MemForest write path): sessions are committed as raw turns, cut into
//! MemCells, extracted into canonical facts, routed into MemTrees (session, `entity:user`,
//! entities, scenes), and summarized in the background by a bounded worker pool.
//!
//! See `docs/format/memory.md` for the table layout.

pub(crate) mod apply;
mod background;
mod background_error;
pub(crate) mod cell;
pub mod embed;
mod error;
pub mod extract;
pub(crate) mod fact;
pub(crate) mod failed;
pub(crate) mod forest;
pub(crate) mod ingest;
pub mod limits;
pub mod model;
pub mod options;
pub(crate) mod pool;
pub mod record;
mod reembed;
pub(crate) mod route;
mod scheduler;
pub mod session;
pub mod stats;
pub(crate) mod store;
pub mod summarize;
pub mod text;
pub mod time;
pub(crate) mod turn_ids;

pub use error::MemoryError;
pub use ingest::IngestReceipt;
pub use options::MemoryOptions;
pub use stats::MemoryStats;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use memforest_tree::{MemTree, NodeId, TreeId};
use parking_lot::{Condvar, Mutex, RwLock};

use crate::memory::background_error::BackgroundError;
use crate::memory::forest::Forest;
use crate::memory::pool::Pool;
use crate::memory::record::{FAILED_PREFIX, PENDING_PREFIX};
use crate::memory::stats::Counters;
use crate::memory::store::{Kv, Staged};
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

#[derive(Debug, Default)]
struct Signal {
    wake: bool,
    /// Start the next refresh pass now, not at `refresh_interval` (set by [`Shared::hurry`]).
    hurry: bool,
    stop: bool,
    summarize_on_stop: bool,
    error: Option<BackgroundError>,
}

/// Retry bookkeeping: when a failed item may run again, and how often it failed.
type Backoff = HashMap<(TenantId, u64, u64), (Instant, u32)>;

/// State shared by ingest callers, the scheduler thread and the worker pools.
#[derive(Debug)]
pub struct Shared {
    pub(crate) kv: Kv,
    pub(crate) opts: MemoryOptions,
    pub(crate) forest: Mutex<Forest>,
    extract_pool: Pool,
    /// The pool of `memory::background`, started by its first use.
    background: OnceLock<Option<Pool>>,
    /// Cells waiting for the background pool, per user (`memory::background`).
    extract_queues: Mutex<background::ExtractQueues>,
    summary_pool: Pool,
    counters: Counters,
    signal: Mutex<Signal>,
    cv: Condvar,
    /// Pending cells to retry, keyed (tenant, cell, 0).
    cells: Mutex<Backoff>,
    /// Per user, the last model error of a cell's extraction since one of theirs last
    /// committed, which [`Memory::flush_summaries`] reports once every pending cell has
    /// given up.
    last_extract_error: Mutex<HashMap<TenantId, String>>,
    /// Failed summary nodes, keyed (tenant, tree, node).
    nodes: Mutex<Backoff>,
    /// Dirty nodes as counted by the scheduler's last refresh pass plus those ingest has
    /// dirtied since (see [`Shared::dirty_estimate`]).
    dirty_estimate: AtomicU64,
    /// Held shared by the scheduler while it reads summary inputs at a snapshot, outside
    /// the forest lock; [`Shared::wait_snapshot_reads`] takes it exclusively.
    snapshot_reads: RwLock<()>,
}

const NODE_KIND: u64 = u64::MAX;

/// How often [`Memory::flush_summaries`] looks again without a wake-up.
const POLL: Duration = Duration::from_millis(50);

impl Shared {
    /// The dirty-node backlog in O(1), for ingest's backpressure: the count of the
    /// scheduler's last refresh pass (which walks every dirty tree anyway) plus the nodes
    /// ingest has newly dirtied since. Nodes cleaned since that pass still count, and nodes
    /// dirtied by forget or purge do not yet, so it is an estimate, exact at each pass
    /// start. Counting exactly on every session would walk every dirty tree of every
    /// tenant, a cost that grows with the store.
    pub(crate) fn dirty_estimate(&self) -> u64 {
        self.dirty_estimate.load(Ordering::Relaxed)
    }

    /// A guard to hold while reading at a snapshot taken outside the forest lock.
    pub(crate) fn snapshot_read(&self) -> parking_lot::RwLockReadGuard<'_, ()> {
        self.snapshot_reads.read()
    }

    /// Waits until every snapshot read that started before the call has finished: after
    /// it, every snapshot the scheduler holds was taken after the call, so it sees every
    /// write (and forget) committed before it (what `Memory::purge` needs for compaction to
    /// drop forgotten versions).
    pub(crate) fn wait_snapshot_reads(&self) {
        drop(self.snapshot_reads.write());
    }

    /// Sets the estimate to a refresh pass's count.
    pub(crate) fn set_dirty_estimate(&self, nodes: u64) {
        self.dirty_estimate.store(nodes, Ordering::Relaxed);
    }

    /// Adds nodes a commit has newly dirtied to the estimate.
    pub(crate) fn add_dirty_estimate(&self, nodes: u64) {
        let _ = self
            .dirty_estimate
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(nodes))
            });
    }

    fn backoff(&self, attempts: u32) -> Duration {
        let factor = 1u32 << attempts.min(16);
        (self.opts.retry_backoff * factor).min(self.opts.max_backoff)
    }

    fn schedule(&self, map: &Mutex<Backoff>, key: (TenantId, u64, u64)) {
        let mut m = map.lock();
        let attempts = m.get(&key).map_or(0, |e| e.1);
        m.insert(key, (Instant::now() + self.backoff(attempts), attempts + 1));
    }

    /// Waits until no pool runs or holds a job. A job owns a handle on this state (and
    /// so on the engine) until it returns, also after the work it counted is done: a
    /// close that returned before would leave the directory locked for a moment, and an
    /// open right after it would fail with `Locked`.
    fn wait_pools_idle(&self) {
        let busy = || {
            self.extract_pool.depth()
                + self.summary_pool.depth()
                + self
                    .background
                    .get()
                    .and_then(Option::as_ref)
                    .map_or(0, Pool::depth)
        };
        while busy() > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn retry_cell(&self, tenant: &TenantId, cell: u64) {
        self.schedule(&self.cells, (tenant.clone(), cell, 0));
    }

    /// A cell's extraction failed with model error `error`: retried later with backoff.
    fn extraction_failed(&self, tenant: &TenantId, cell: u64, error: &str) {
        self.last_extract_error
            .lock()
            .insert(tenant.clone(), error.to_owned());
        self.retry_cell(tenant, cell);
    }

    /// Cells pending extraction, and how many of them have failed `extract_attempts` times
    /// or more.
    fn pending_cells(&self) -> (usize, usize) {
        let cells = self.cells.lock();
        let given_up = cells
            .values()
            .filter(|(_, failures)| *failures >= self.opts.extract_attempts)
            .count();
        (cells.len(), given_up)
    }

    fn cell_done(&self, tenant: &TenantId, cell: u64) {
        self.cells.lock().remove(&(tenant.clone(), cell, 0));
    }

    /// A cell's extraction was committed: it leaves the pending set, unless its pending
    /// mark is still stored. Then the cell was forgotten and made again under the same id
    /// while this extraction ran (`apply::commit` skipped it), and the new cell's own
    /// extraction, queued by its add, settles it; `flush_summaries` waits for that one.
    fn cell_committed(&self, tenant: &TenantId, cell: u64) {
        let mark = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
        if !matches!(self.kv.get(tenant, Table::RouterState, &mark), Ok(Some(_))) {
            self.cell_done(tenant, cell);
        }
        self.last_extract_error.lock().remove(tenant);
    }

    fn due_cells(&self) -> Vec<(TenantId, u64)> {
        let now = Instant::now();
        let m = self.cells.lock();
        m.iter()
            .filter(|(_, (due, _))| *due <= now)
            .map(|(k, _)| (k.0.clone(), k.1))
            .collect()
    }

    fn node_key(item: &(TenantId, u64, NodeId)) -> (TenantId, u64, u64) {
        (item.0.clone(), item.1, item.2 .0 ^ NODE_KIND)
    }

    fn node_due(&self, item: &(TenantId, u64, NodeId), now: Instant) -> bool {
        self.nodes
            .lock()
            .get(&Self::node_key(item))
            .is_none_or(|(due, _)| *due <= now)
    }

    /// How many summary calls for `item` have failed in a row.
    fn node_failures(&self, item: &(TenantId, u64, NodeId)) -> u32 {
        self.nodes
            .lock()
            .get(&Self::node_key(item))
            .map_or(0, |(_, attempts)| *attempts)
    }

    fn node_failed(&self, item: &(TenantId, u64, NodeId)) {
        self.schedule(&self.nodes, Self::node_key(item));
    }

    fn node_ok(&self, item: &(TenantId, u64, NodeId)) {
        self.nodes.lock().remove(&Self::node_key(item));
    }

    pub(crate) fn wake(&self) {
        self.signal.lock().wake = true;
        self.cv.notify_all();
    }

    /// Wakes the scheduler and has its next refresh pass start at once, whatever
    /// `refresh_interval` says (someone waits for the dirty set to drain).
    pub(crate) fn hurry(&self) {
        let mut s = self.signal.lock();
        s.wake = true;
        s.hurry = true;
        self.cv.notify_all();
    }

    /// Waits until `deadline` (`None`: none), returning early when hurried, stopping, or a
    /// cell or node retry falls due; clears the hurry.
    fn pace(&self, deadline: Option<Instant>) {
        let mut s = self.signal.lock();
        loop {
            let until = match (deadline, self.next_retry()) {
                (Some(d), Some(r)) => Some(d.min(r)),
                (d, r) => d.or(r),
            };
            if s.hurry || s.stop || until.is_some_and(|u| Instant::now() >= u) {
                break;
            }
            match until {
                Some(u) => {
                    self.cv.wait_until(&mut s, u);
                }
                None => self.cv.wait(&mut s),
            }
        }
        s.hurry = false;
    }

    /// When the earliest pending cell or failed node may be retried.
    fn next_retry(&self) -> Option<Instant> {
        let cells = self.cells.lock().values().map(|(due, _)| *due).min();
        let nodes = self.nodes.lock().values().map(|(due, _)| *due).min();
        cells.into_iter().chain(nodes).min()
    }

    fn notify(&self) {
        self.cv.notify_all();
    }

    fn stopping(&self) -> bool {
        self.signal.lock().stop
    }

    fn summarize_on_stop(&self) -> bool {
        self.signal.lock().summarize_on_stop
    }

    fn set_error(&self, e: MemoryError) {
        let _ = self.record_error(e);
    }

    /// Records `e` as the background error (as [`Shared::set_error`]) and returns it, for a
    /// caller that must record it before it changes what `flush_summaries` sees.
    fn record_error(&self, e: MemoryError) -> MemoryError {
        let kept = BackgroundError::of(e);
        let out = kept.error();
        self.signal.lock().error = Some(kept);
        self.cv.notify_all();
        out
    }

    /// Waits until woken (or `timeout`, or a retry falls due), then clears the wake and
    /// hurry flags (the pass that follows starts at once anyway).
    fn wait_work(&self, timeout: Duration) {
        let mut s = self.signal.lock();
        if !s.wake && !s.stop {
            let next_due = self
                .next_retry()
                .map_or(timeout, |due| due.saturating_duration_since(Instant::now()));
            self.cv.wait_for(&mut s, next_due.min(timeout));
        }
        s.wake = false;
        s.hurry = false;
    }

    /// Waits for any notification, at most `timeout`.
    fn wait_signal(&self, timeout: Duration) {
        let mut s = self.signal.lock();
        self.cv.wait_for(&mut s, timeout);
    }
}

/// The running memory layer of a `Db`: the scheduler thread and the worker pools.
#[derive(Debug)]
pub struct Runtime {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Runtime {
    /// Starts the memory layer for `db`: finds cells whose extraction never committed and
    /// trees with dirty marks (left by a crash), and, with `scheduler` (off for a
    /// read-only handle, which must not write), starts the scheduler, which resumes both.
    ///
    /// # Errors
    /// Engine read errors; corrupt tree pages; thread spawn errors.
    pub(crate) fn start(
        db: &Arc<memforest_engine::Db>,
        opts: MemoryOptions,
        scheduler: bool,
        caches: crate::recall::write_through::Caches,
    ) -> Result<Self, MemoryError> {
        opts.validate()?;
        let kv = Kv::new(Arc::clone(db), caches);
        let mut forest = Forest::default();
        let mut cells = Backoff::new();
        let mut failed = 0u64;
        let now = Instant::now();
        for tenant in db.tenants()? {
            for (k, _) in kv.scan_prefix(&tenant, Table::RouterState, &[PENDING_PREFIX])? {
                if let Some(cell) = record::be_u64(k.get(1..).unwrap_or_default()) {
                    cells.insert((tenant.clone(), cell, 0), (now, 0));
                }
            }
            failed += kv
                .scan_prefix(&tenant, Table::RouterState, &[FAILED_PREFIX])?
                .len() as u64;
            let marks = kv.scan_prefix(&tenant, Table::DirtyMarks, &[])?;
            if marks.is_empty() {
                continue;
            }
            let st = Staged::new(&kv, tenant.clone());
            let tf = forest.tenants.entry(tenant.clone()).or_default();
            for (k, _) in marks {
                if let Some(id) = record::be_u64(&k) {
                    tf.trees.insert(id, MemTree::open(&st, TreeId(id))?);
                    tf.dirty.insert(id);
                }
            }
        }
        let io = |e: std::io::Error| {
            MemoryError::Engine(memforest_engine::Error::Io {
                op: "spawn memory thread",
                path: db.dir().to_path_buf(),
                source: e,
            })
        };
        let counters = Counters::default();
        counters.cells_failed(failed);
        let shared = Arc::new(Shared {
            kv,
            extract_pool: Pool::new("mf-extract", opts.extract_pool, Some(opts.extract_pool))
                .map_err(io)?,
            background: OnceLock::new(),
            extract_queues: Mutex::new(background::ExtractQueues::default()),
            summary_pool: Pool::new("mf-summary", opts.summary_pool, None).map_err(io)?,
            opts,
            forest: Mutex::new(forest),
            counters,
            signal: Mutex::new(Signal {
                wake: true,
                ..Signal::default()
            }),
            cv: Condvar::new(),
            cells: Mutex::new(cells),
            last_extract_error: Mutex::new(HashMap::new()),
            nodes: Mutex::new(Backoff::new()),
            dirty_estimate: AtomicU64::new(0),
            snapshot_reads: RwLock::new(()),
        });
        let thread = if scheduler {
            let s = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name("mf-scheduler".into())
                .stack_size(crate::memory::pool::STACK_SIZE)
                .spawn(move || scheduler::run(&s))
                .map_err(io)?;
            Some(spawned)
        } else {
            None
        };
        Ok(Self { shared, thread })
    }

    /// The shared state (for ingest).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Stops the scheduler; with `summarize` it first lets background extraction finish
    /// and (with `summarize_on_shutdown`) summarizes everything dirty.
    pub(crate) fn stop(&mut self, summarize: bool) {
        if summarize {
            self.shared.wait_background();
        }
        {
            let mut s = self.shared.signal.lock();
            s.stop = true;
            s.summarize_on_stop = summarize;
        }
        self.shared.cv.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if summarize {
            self.shared.wait_pools_idle();
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop(false);
    }
}

impl Memory {
    pub(crate) fn memory_shared(&self) -> Result<Arc<Shared>, MemoryError> {
        self.runtime()
            .map(|r| Arc::clone(r.shared()))
            .ok_or(MemoryError::Stopped)
    }

    /// Waits until no tree node is dirty and no cell is pending extraction (summaries are
    /// regenerated by the scheduler meanwhile; failed calls are retried with backoff).
    /// While background extraction still has cells, refresh passes keep their
    /// `MemoryOptions::refresh_interval` pace (the cells will dirty the same nodes again);
    /// once it is done, the next pass starts at once. On a read-only store (no background
    /// work) it returns at once.
    ///
    /// # Errors
    /// [`MemoryError::Stopped`] when the runtime stopped; [`MemoryError::Engine`]
    /// (`Error::Background`, holding the engine's error) when the background work hit a
    /// storage error (a full disk, which poisons the WAL: reopen the store);
    /// [`MemoryError::Model`] when every cell still pending has failed its extraction
    /// `MemoryOptions::extract_attempts` times (a model that stays down or keeps giving
    /// unusable replies), with the last model error: the cells stay pending and are
    /// retried.
    pub fn flush_summaries(&self) -> Result<(), MemoryError> {
        self.flush_until(None).map(|_| ())
    }

    /// [`Memory::flush_summaries`] for at most about `wait` (it checks every 50 ms):
    /// `Ok(true)` once nothing is dirty or pending, `Ok(false)` when `wait` ran out first
    /// (the background work goes on). Lets a caller stay responsive while it waits, e.g.
    /// to a Ctrl-C.
    ///
    /// # Errors
    /// As [`Memory::flush_summaries`].
    pub fn flush_summaries_for(&self, wait: Duration) -> Result<bool, MemoryError> {
        self.flush_until(Some(Instant::now() + wait))
    }

    /// Waits as [`Memory::flush_summaries`] until `deadline` (`None`: no deadline);
    /// whether everything was done.
    fn flush_until(&self, deadline: Option<Instant>) -> Result<bool, MemoryError> {
        if self.is_read_only() {
            // No background work runs on a read-only store.
            return Ok(true);
        }
        let shared = self.memory_shared()?;
        loop {
            // The counts before the error: a background failure is recorded before its
            // nodes or cells leave the counts, so counts that dropped to zero through a
            // failure come with the error.
            let dirty = shared.forest.lock().dirty_total();
            let (pending, given_up) = shared.pending_cells();
            if let Some(e) = &shared.signal.lock().error {
                return Err(e.error());
            }
            if dirty == 0 && pending == 0 {
                return Ok(true);
            }
            if dirty == 0 && given_up == pending {
                let last = shared
                    .last_extract_error
                    .lock()
                    .values()
                    .next()
                    .map_or_else(String::new, |e| format!("; the last error: {e}"));
                return Err(MemoryError::Model(format!(
                    "the extraction of {pending} cells failed {} times each; they stay pending, retried in the background and at the next open{last}",
                    shared.opts.extract_attempts
                )));
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if left.is_some_and(|l| l.is_zero()) {
                return Ok(false);
            }
            if shared.background_depth() == 0 {
                shared.hurry();
            }
            shared.wait_signal(left.map_or(POLL, |l| l.min(POLL)));
        }
    }

    /// A snapshot of the memory layer's counters.
    #[must_use]
    pub fn memory_stats(&self) -> MemoryStats {
        let Some(r) = self.runtime() else {
            return MemoryStats::default();
        };
        let s = r.shared();
        let depth = s.extract_pool.depth() + s.summary_pool.depth();
        let dirty = s.forest.lock().dirty_by_level();
        let pending = s.cells.lock().len() as u64;
        s.counters.snapshot(depth, dirty, pending)
    }
}
