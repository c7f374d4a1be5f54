//! `Db::ingest_session`: commit the raw turns (and the cells they form, each marked
//! pending) in one batch, then extract the cells (in parallel on the extraction pool, or
//! on the calling thread for an extractor that runs inline when no embedder is set) and
//! commit all their facts and routing atomically in a second batch. Summaries are left to
//! the scheduler.

use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::unbounded;

use crate::db::Db;
use crate::key::{Table, TenantId};
use crate::memory::apply::{self, CellOutcome, Prepared};
use crate::memory::cell::segment;
use crate::memory::record::{
    self, CellRecord, SessionRecord, TurnRecord, CELL_PREFIX, PENDING_PREFIX, SESSION_PREFIX,
};
use crate::memory::session::Session;
use crate::memory::store::Staged;
use crate::memory::{MemoryError, Shared};

/// What one `ingest_session` call did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReceipt {
    /// Seqno of the raw-turn commit (0 when nothing new was ingested).
    pub seqno: u64,
    /// Turns newly stored.
    pub turns: u64,
    /// Cells newly cut.
    pub cells: u64,
    /// Cells whose extraction failed; they stay pending and are retried with backoff.
    pub cells_pending: u64,
    /// New canonical facts.
    pub facts_added: u64,
    /// Occurrences merged into existing facts (exact normalized-text duplicates).
    pub facts_merged: u64,
    /// Distinct trees that got a leaf.
    pub trees_touched: u64,
}

impl Db {
    /// Ingests `session` for `tenant`: turns beyond those already stored for this session
    /// id are committed to the WAL first (durable and readable before any extraction), cut
    /// into MemCells, extracted on the bounded extraction pool (on this thread when
    /// `Extractor::runs_inline` and no embedder is set), and committed as canonical facts
    /// with their tree inserts and dirty marks in one batch for the whole session (cells
    /// whose extraction failed stay pending and are committed by their retry).
    /// Re-ingesting a session with no new turns is a no-op. Summaries are regenerated in
    /// the background; this waits for them only while the dirty backlog exceeds
    /// `MemoryOptions::backlog_limit` (recorded in `memory_stats`).
    ///
    /// # Errors
    /// [`MemoryError::Engine`] for storage errors; [`MemoryError::Stopped`] while closing.
    /// A failed extraction is not an error: the cell is counted in `cells_pending`.
    pub fn ingest_session(
        &self,
        tenant: &TenantId,
        session: &Session,
    ) -> Result<IngestReceipt, MemoryError> {
        let shared = self.memory_shared()?;
        let (mut receipt, cells) = stage_turns(&shared, tenant, session)?;
        let mut ready = Vec::with_capacity(cells.len());
        for (cell, result) in extract(&shared, tenant, &cells)? {
            match result {
                Ok(p) => ready.push(p),
                Err(MemoryError::Model(_)) => {
                    receipt.cells_pending += 1;
                    shared.retry_cell(tenant, cell);
                }
                Err(e) => return Err(e),
            }
        }
        let CellOutcome {
            facts_added,
            facts_merged,
            trees,
            ..
        } = apply::commit(&shared, tenant, &ready)?;
        receipt.facts_added = facts_added;
        receipt.facts_merged = facts_merged;
        receipt.trees_touched = trees.len() as u64;
        shared.wake();
        shared.wait_backlog();
        Ok(receipt)
    }
}

/// A cell and its preparation (extraction) result.
type Extracted = (u64, Result<Prepared, MemoryError>);

/// Prepares (extracts) every cell, in order: on this thread when the extractor runs inline
/// and no embedder is set (handing a call of microseconds to a worker costs more than the
/// call: a channel send and a thread wake-up, which waits for a CPU on a busy machine),
/// else on the extraction pool, in parallel.
fn extract(
    shared: &Arc<Shared>,
    tenant: &TenantId,
    cells: &[u64],
) -> Result<Vec<Extracted>, MemoryError> {
    if shared.opts.extractor.runs_inline() && shared.opts.embedder.is_none() {
        return Ok(cells
            .iter()
            .map(|&cell| (cell, apply::prepare(shared, tenant, cell)))
            .collect());
    }
    let (tx, rx) = unbounded();
    for (i, &cell) in cells.iter().enumerate() {
        let (s, t, tx) = (Arc::clone(shared), tenant.clone(), tx.clone());
        let job = move || {
            let _ = tx.send((i, cell, apply::prepare(&s, &t, cell)));
        };
        if !shared.extract_pool.submit(job) {
            return Err(MemoryError::Stopped);
        }
    }
    drop(tx);
    let mut out: Vec<_> = rx.into_iter().collect();
    out.sort_unstable_by_key(|r| r.0);
    Ok(out.into_iter().map(|(_, cell, r)| (cell, r)).collect())
}

/// Commits the new turns, their cells and the cells' pending marks; returns the new cells.
fn stage_turns(
    shared: &Shared,
    tenant: &TenantId,
    session: &Session,
) -> Result<(IngestReceipt, Vec<u64>), MemoryError> {
    let _guard = shared.forest.lock();
    let skey = record::prefixed(SESSION_PREFIX, session.id.as_bytes());
    let mut srec = match shared.kv.get(tenant, Table::Sessions, &skey)? {
        Some(b) => record::decode::<SessionRecord>(&b, "session")?,
        None => SessionRecord {
            id: session.id.clone(),
            start: session.start,
            turns: 0,
            cells: 0,
            last_time: session.start,
        },
    };
    let mut receipt = IngestReceipt::default();
    let first = srec.turns as usize;
    let Some(new) = session.turns.get(first..).filter(|t| !t.is_empty()) else {
        return Ok((receipt, Vec::new()));
    };
    let mut st = Staged::new(&shared.kv, tenant.clone());
    let mut resolved = Vec::with_capacity(new.len());
    let mut last = srec.last_time;
    for (i, turn) in new.iter().enumerate() {
        let index =
            u32::try_from(first + i).map_err(|_| MemoryError::Invariant("too many turns"))?;
        last = turn.time.unwrap_or(last);
        let rec = TurnRecord {
            id: turn
                .id
                .clone()
                .unwrap_or_else(|| format!("{}#turn_{index}", session.id)),
            role: turn.role,
            speaker: turn.speaker.clone(),
            text: turn.text.clone(),
            time: last,
        };
        st.put(
            Table::Turns,
            &record::turn_key(&session.id, index),
            record::encode(&rec)?,
        );
        resolved.push((rec.time, rec.text.chars().count()));
    }
    let mut cells = Vec::new();
    for range in segment(&resolved, shared.opts.cells) {
        let index = srec.cells;
        srec.cells += 1;
        let id = record::cell_id(&session.id, index);
        let times = (
            resolved.get(range.start).map_or(last, |t| t.0),
            resolved.get(range.end - 1).map_or(last, |t| t.0),
        );
        let rec = CellRecord {
            session: session.id.clone(),
            session_start: srec.start,
            index,
            first: srec.turns + u32::try_from(range.start).unwrap_or(u32::MAX),
            count: u32::try_from(range.len()).unwrap_or(u32::MAX),
            time: (times.0.min(times.1), times.1.max(times.0)),
        };
        st.put(
            Table::Sessions,
            &record::prefixed(CELL_PREFIX, &id.to_be_bytes()),
            record::encode(&rec)?,
        );
        st.put(
            Table::RouterState,
            &record::prefixed(PENDING_PREFIX, &id.to_be_bytes()),
            Vec::new(),
        );
        cells.push(id);
    }
    receipt.turns = new.len() as u64;
    receipt.cells = cells.len() as u64;
    srec.turns += u32::try_from(new.len()).map_err(|_| MemoryError::Invariant("too many turns"))?;
    srec.last_time = last;
    st.put(Table::Sessions, &skey, record::encode(&srec)?);
    crate::recall::index::note_session(&mut st, &srec.id, srec.last_time)?;
    receipt.seqno = st.commit(shared.opts.durability)?;
    Ok((receipt, cells))
}

impl Shared {
    /// Blocks while the dirty backlog ([`Shared::dirty_estimate`]) exceeds the limit,
    /// recording the stall.
    fn wait_backlog(&self) {
        let limit = self.opts.backlog_limit;
        let started = Instant::now();
        let mut stalled = false;
        while self.dirty_estimate() > limit && !self.stopping() {
            if !stalled {
                stalled = true;
                self.counters
                    .stall_begin(format!("summary backlog over {limit} dirty nodes"));
            }
            self.hurry();
            self.wait_signal(std::time::Duration::from_millis(20));
        }
        if stalled {
            self.counters.stall_end(started.elapsed());
        }
    }
}
