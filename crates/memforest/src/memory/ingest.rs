//! `Memory::ingest_session`: check the session against the input limits, commit the turns not
//! stored yet (and the cells they form, each marked pending) in one batch, then extract
//! the cells (in parallel on the extraction pool, or on the calling thread for an
//! extractor that runs inline when the embedder does too, or none is set) and commit all their facts and
//! routing atomically in a second batch. Summaries are left to the scheduler.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::unbounded;

use crate::api::UPDATES_SESSION;
use crate::memory::apply::{self, CellOutcome, Prepared};
use crate::memory::cell::{segment, TurnSize};
use crate::memory::extract::ExtractedItem;
use crate::memory::failed;
use crate::memory::limits::{check_session, check_user};
use crate::memory::record::{
    self, CellRecord, SessionRecord, TurnRecord, CELL_PREFIX, PENDING_PREFIX, SESSION_PREFIX,
};
use crate::memory::session::{Role, Session};
use crate::memory::store::Staged;
use crate::memory::turn_ids;
use crate::memory::{MemoryError, Shared};
use crate::schema::Table;
use crate::Memory;
use memforest_engine::TenantId;

/// What one `ingest_session` call did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestReceipt {
    /// Seqno of the raw-turn commit (0 when nothing new was ingested).
    pub seqno: u64,
    /// Turns newly stored (appended after the session's stored turns).
    pub turns: u64,
    /// Turns skipped because a turn with their id is already stored in the session (or
    /// came earlier in the same call) with the same role, speaker and text.
    pub turns_duplicate: u64,
    /// Ids of the turns skipped because a turn with their id is already stored (or came
    /// earlier in the call) with a different role, speaker or text; the stored turn is
    /// kept unchanged.
    pub conflicts: Vec<String>,
    /// Cells newly cut.
    pub cells: u64,
    /// Cells whose extraction failed; they stay pending and are retried with backoff.
    pub cells_pending: u64,
    /// Cells given up as never extractable (`memory::failed`): their raw turns are stored,
    /// they yield no facts and are not retried.
    pub cells_failed: u64,
    /// New canonical facts.
    pub facts_added: u64,
    /// Occurrences merged into existing facts (exact normalized-text duplicates).
    pub facts_merged: u64,
    /// Ids of the facts added or given a new occurrence by this call's committed cells, in
    /// commit order (a fact may repeat).
    pub facts: Vec<u64>,
    /// Distinct trees that got a leaf.
    pub trees_touched: u64,
}

impl Memory {
    /// Ingests `session` for `tenant`.
    ///
    /// **Checks first.** The session is checked against `memory::limits` (ids of
    /// 1..=1024 bytes without NUL, turn texts of 1..=32 KiB, speakers of at most 1 KiB, at
    /// most 64 MiB of text per call) before anything is read or written; a failure names
    /// the session, the turn (index and id) and the field, and nothing is stored.
    ///
    /// **Append, idempotent by turn id.** A turn's id is `Turn::id`, or
    /// `{session}#turn_{i}` for a turn given without one (`i` its position in
    /// `session.turns`). Turns whose id is not yet stored in this session are appended
    /// after the stored ones, in order; a turn whose id is already stored (or came earlier
    /// in this call) is skipped: counted in `turns_duplicate` when its role, speaker and
    /// text are the same, listed in `conflicts` when they differ (the stored turn is kept).
    /// So re-sending a session, or a prefix of it, is a no-op; re-sending it with turns
    /// added extends it; a session id seen again with new turn ids (e.g. a second JSONL
    /// line for it) appends them. To append one exchange at a time, give each turn an id
    /// (positions restart at 0 in every call). The session's start time is the first
    /// call's. A turn removed by `Memory::forget` is no longer stored, so sending it again
    /// stores it again.
    ///
    /// The new turns are committed to the WAL first (durable and readable before any
    /// extraction), cut into MemCells, extracted on the bounded extraction pool (on this
    /// thread when `Extractor::runs_inline` and `Embedder::runs_inline` or no embedder), and committed as
    /// canonical facts with their tree inserts and dirty marks in one batch for the whole
    /// session. Cells whose extraction failed stay pending and are committed by their
    /// retry; a cell that can never be committed (`memory::failed`) is recorded as failed
    /// without blocking the others. Summaries are regenerated in the background; this
    /// waits for them only while the dirty backlog exceeds `MemoryOptions::backlog_limit`
    /// (recorded in `memory_stats`).
    ///
    /// # Errors
    /// [`MemoryError::Name`] for a tenant whose name is only whitespace and
    /// [`MemoryError::Input`] for a session over the limits, a session id that is only
    /// whitespace or a speaker holding NUL (nothing written);
    /// [`MemoryError::ReservedSession`] for session [`UPDATES_SESSION`], which holds the
    /// texts of `Memory::update` (nothing written);
    /// [`MemoryError::EmbedderMismatch`] when the tenant's memories were embedded by
    /// another embedder, or by none while this store has one, or the reverse (nothing
    /// written); [`MemoryError::Engine`] for storage errors; [`MemoryError::Stopped`] while
    /// closing.
    /// A failed extraction is not an error: the cell is counted in `cells_pending` (or
    /// `cells_failed`).
    pub fn ingest_session(
        &self,
        tenant: &TenantId,
        session: &Session,
    ) -> Result<IngestReceipt, MemoryError> {
        self.ingest(tenant, session, Numbering::Position, true)
    }

    /// [`Memory::ingest_session`], with the turns given without an id numbered by
    /// `numbering`; without `wait`, and with an extractor or embedder that calls a model
    /// (`Extractor::is_local`, `Embedder::runs_inline`), it returns once the turns are
    /// committed and leaves their cells to the background pool (`memory::background`):
    /// every new cell is then counted in `cells_pending` and no fact is reported.
    ///
    /// # Errors
    /// As [`Memory::ingest_session`].
    pub(crate) fn ingest(
        &self,
        tenant: &TenantId,
        session: &Session,
        numbering: Numbering,
        wait: bool,
    ) -> Result<IngestReceipt, MemoryError> {
        check_user(tenant)?;
        check_session(session)?;
        if session.id == UPDATES_SESSION {
            return Err(MemoryError::ReservedSession(session.id.clone()));
        }
        let shared = self.memory_shared()?;
        crate::recall::vectors::check_writer(&shared.kv, tenant, shared.opts.embedder.as_deref())?;
        let (mut receipt, cells) = stage_turns(&shared, tenant, session, numbering)?;
        if !wait && !is_local(&shared) {
            shared.extract_later(tenant, &cells);
            receipt.cells_pending = cells.len() as u64;
            shared.wake();
            shared.wait_backlog();
            shared.wait_extract_backlog();
            return Ok(receipt);
        }
        let mut ready = Vec::with_capacity(cells.len());
        for (cell, result) in extract(&shared, tenant, &cells)? {
            match result {
                Ok(p) => ready.push(p),
                Err(MemoryError::Model(e)) => {
                    receipt.cells_pending += 1;
                    shared.extraction_failed(tenant, cell, &e);
                }
                Err(e) if failed::is_permanent(&e) => {
                    failed::record(&shared, tenant, cell, &e)?;
                    receipt.cells_failed += 1;
                }
                Err(e) => return Err(e),
            }
        }
        let (
            CellOutcome {
                facts_added,
                facts_merged,
                facts,
                trees,
                ..
            },
            gave_up,
        ) = apply::commit_or_fail(&shared, tenant, &ready)?;
        receipt.cells_failed += gave_up;
        receipt.facts_added = facts_added;
        receipt.facts_merged = facts_merged;
        receipt.facts = facts;
        receipt.trees_touched = trees.len() as u64;
        shared.wake();
        shared.wait_backlog();
        Ok(receipt)
    }
}

impl Memory {
    /// Stores `session`'s new turns as [`Memory::ingest_session`] does, but with `items` as
    /// the facts of its first new cell instead of what the extractor would find there
    /// (`Memory::update` states the new version of a memory), committed with the turns in
    /// one batch. Other new cells get no fact.
    ///
    /// # Errors
    /// As [`Memory::ingest_session`]; [`MemoryError::Model`] when the embedder fails
    /// (nothing is written).
    pub(crate) fn ingest_stated(
        &self,
        tenant: &TenantId,
        session: &Session,
        items: Vec<ExtractedItem>,
    ) -> Result<IngestReceipt, MemoryError> {
        check_user(tenant)?;
        check_session(session)?;
        let shared = self.memory_shared()?;
        crate::recall::vectors::check_writer(&shared.kv, tenant, shared.opts.embedder.as_deref())?;
        // Embedded before anything is written: an embedder that fails leaves nothing.
        let name = String::from_utf8_lossy(tenant.name()).into_owned();
        let embeddings = apply::embed_items(&shared, &name, &items)?;
        let mut forest = shared.forest.lock();
        crate::recall::index::ensure(&shared.kv, tenant)?;
        // The turns, their cell and the stated facts go in one batch: a crash keeps all of
        // them or none, so no message is left pending for the extractor to read as a
        // conversation of its own.
        let mut st = Staged::new(&shared.kv, tenant.clone());
        let (mut receipt, cells) =
            stage_turns_into(&shared, &mut st, session, Numbering::Position)?;
        let Some(&cell) = cells.first() else {
            return Ok(receipt);
        };
        let prepared = apply::prepare_stated(&st, cell, items, embeddings)?;
        let outcome = apply::commit_with(&shared, &mut forest, st, &[prepared])?;
        drop(forest);
        receipt.seqno = outcome.seqno;
        receipt.facts_added = outcome.facts_added;
        receipt.facts_merged = outcome.facts_merged;
        receipt.facts = outcome.facts;
        receipt.trees_touched = outcome.trees.len() as u64;
        shared.wake();
        Ok(receipt)
    }
}

/// A cell and its preparation (extraction) result.
type Extracted = (u64, Result<Prepared, MemoryError>);

/// Prepares (extracts) every cell, in order: on this thread when the extractor and the
/// embedder (if any) run inline (handing a call of microseconds to a worker costs more than the
/// call: a channel send and a thread wake-up, which waits for a CPU on a busy machine),
/// else on the extraction pool, in parallel.
fn extract(
    shared: &Arc<Shared>,
    tenant: &TenantId,
    cells: &[u64],
) -> Result<Vec<Extracted>, MemoryError> {
    if runs_inline(shared) {
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

/// Whether a cell's extraction (the extractor, and the embedder if any) is cheap enough to
/// run on the caller's thread.
fn runs_inline(shared: &Shared) -> bool {
    shared.opts.extractor.runs_inline() && embedder_in_process(shared)
}

/// Whether a cell's extraction (the extractor, and the embedder if any) calls no model.
fn is_local(shared: &Shared) -> bool {
    shared.opts.extractor.is_local() && embedder_in_process(shared)
}

/// Whether the embedder, if any, runs in process (`Embedder::runs_inline`).
fn embedder_in_process(shared: &Shared) -> bool {
    shared
        .opts
        .embedder
        .as_ref()
        .is_none_or(|e| e.runs_inline())
}

/// A stored or already-seen turn's content, to tell a duplicate from a conflict.
type Content<'a> = (Role, &'a str, &'a str);

/// The turns stored for session `srec` (none for a new session). A record that does not
/// decode is left out: its id cannot be known, and failing here would fail every later
/// ingest of the session.
fn stored_turns(
    shared: &Shared,
    tenant: &TenantId,
    srec: &SessionRecord,
) -> Result<Vec<(u32, TurnRecord)>, MemoryError> {
    if srec.turns == 0 {
        return Ok(Vec::new());
    }
    let prefix = record::session_hash(&srec.id).to_be_bytes();
    Ok(shared
        .kv
        .scan_prefix(tenant, Table::Turns, &prefix)?
        .iter()
        .filter_map(|(k, v)| {
            let index = k.get(8..).and_then(|b| <[u8; 4]>::try_from(b).ok())?;
            let turn = record::decode::<TurnRecord>(v, "turn").ok()?;
            Some((u32::from_be_bytes(index), turn))
        })
        .collect())
}

/// The id of a turn given without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Numbering {
    /// `{session}#turn_{i}`, `i` its position in the call (`Memory::ingest_session`: a
    /// session sent again is recognised turn by turn).
    Position,
    /// `{session}#turn_{n}`, `n` counting on from the turns the session holds, read under
    /// the same lock as the commit (`Memory::add`: concurrent adds to one session never
    /// draw the same number).
    AfterStored,
}

/// Refuses (`MemoryError::ReservedId`) an id of `ids`, new to session `session`, of the
/// form `{session}#turn_{n}` that turns without an id are numbered by after the stored ones
/// (`Numbering::AfterStored`), unless `n` is below `count`, the number of turns the
/// session holds once they are added: later numbers start there, so it can never be drawn
/// again. A session's messages sent back as `Memory::messages` returns them pass.
pub(crate) fn check_numbered_ids<'a>(
    session: &str,
    count: u64,
    mut ids: impl Iterator<Item = &'a str>,
) -> Result<(), MemoryError> {
    match ids.find(|id| record::default_turn_number(session, id).is_some_and(|n| n >= count)) {
        Some(id) => Err(MemoryError::ReservedId {
            session: session.to_owned(),
            id: id.to_owned(),
        }),
        None => Ok(()),
    }
}

/// Commits the turns of `session` whose ids are not stored yet, their cells and the cells'
/// pending marks; returns the new cells.
fn stage_turns(
    shared: &Shared,
    tenant: &TenantId,
    session: &Session,
    numbering: Numbering,
) -> Result<(IngestReceipt, Vec<u64>), MemoryError> {
    let _guard = shared.forest.lock();
    let mut st = Staged::new(&shared.kv, tenant.clone());
    let (mut receipt, cells) = stage_turns_into(shared, &mut st, session, numbering)?;
    if !cells.is_empty() {
        receipt.seqno = st.commit(shared.opts.durability)?;
    }
    Ok((receipt, cells))
}

/// Stages into `st` what [`stage_turns`] commits; the caller holds the forest lock and
/// commits `st` when new cells came back (else it staged at most the turn-id index of a
/// session stored before that index, which the next write stages again).
fn stage_turns_into(
    shared: &Shared,
    st: &mut Staged<'_>,
    session: &Session,
    numbering: Numbering,
) -> Result<(IngestReceipt, Vec<u64>), MemoryError> {
    let tenant = st.tenant().clone();
    let tenant = &tenant;
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
    // A session stored before the turn-id index is read whole once, and indexed below.
    let marked = srec.turns > 0 && turn_ids::complete(st, &session.id)?;
    let legacy: HashMap<String, TurnRecord> = if marked || srec.turns == 0 {
        HashMap::new()
    } else {
        stored_turns(shared, tenant, &srec)?
            .into_iter()
            .map(|(index, t)| {
                turn_ids::put(st, &session.id, &t.id, index);
                (t.id.clone(), t)
            })
            .collect()
    };
    let mut next = usize::try_from(srec.turns).unwrap_or(usize::MAX);
    let ids: Vec<Cow<'_, str>> = session
        .turns
        .iter()
        .enumerate()
        .map(|(i, t)| match (&t.id, numbering) {
            (Some(id), _) => Cow::Borrowed(id.as_str()),
            (None, Numbering::Position) => Cow::Owned(record::default_turn_id(&session.id, i)),
            (None, Numbering::AfterStored) => {
                next = next.saturating_add(1);
                Cow::Owned(record::default_turn_id(&session.id, next - 1))
            }
        })
        .collect();
    let mut fresh: HashMap<&str, Content<'_>> = HashMap::new();
    let mut new = Vec::new();
    for (turn, id) in session.turns.iter().zip(&ids) {
        let content = (turn.role, turn.speaker.as_str(), turn.text.as_str());
        let same = match fresh.get(id.as_ref()) {
            Some(seen) => Some(*seen == content),
            None => {
                let stored = match legacy.get(id.as_ref()) {
                    Some(t) => Some(t.clone()),
                    None => turn_ids::find(st, &session.id, id)?,
                };
                stored.map(|t| (t.role, t.speaker.as_str(), t.text.as_str()) == content)
            }
        };
        match same {
            Some(true) => receipt.turns_duplicate += 1,
            Some(false) => receipt.conflicts.push(id.to_string()),
            None => {
                fresh.insert(id.as_ref(), content);
                new.push((turn, id.as_ref()));
            }
        }
    }
    if new.is_empty() {
        return Ok((receipt, Vec::new()));
    }
    if numbering == Numbering::AfterStored {
        let count = u64::from(srec.turns).saturating_add(new.len() as u64);
        check_numbered_ids(&session.id, count, new.iter().map(|(_, id)| *id))?;
    }
    if !marked {
        turn_ids::mark_complete(st, &session.id);
    }
    let mut sizes = Vec::with_capacity(new.len());
    let mut last = srec.last_time;
    for (i, (turn, id)) in new.iter().enumerate() {
        let index = u32::try_from(i)
            .ok()
            .and_then(|i| srec.turns.checked_add(i))
            .ok_or(MemoryError::Invariant("too many turns"))?;
        last = turn.time.unwrap_or(last);
        let rec = TurnRecord {
            id: (*id).to_owned(),
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
        turn_ids::put(st, &session.id, id, index);
        if !turn.metadata.is_empty() {
            st.put(
                Table::Sessions,
                &record::metadata_key(&session.id, index),
                record::encode(&turn.metadata)?,
            );
        }
        sizes.push(TurnSize {
            time: rec.time,
            chars: rec.text.chars().count(),
            leaf_bytes: rec.speaker.len() + rec.text.len() + 3,
        });
    }
    let mut cells = Vec::new();
    for range in segment(&sizes, shared.opts.cells) {
        let index = srec.cells;
        srec.cells += 1;
        let id = record::cell_id(&session.id, index);
        let times = (
            sizes.get(range.start).map_or(last, |t| t.time),
            sizes.get(range.end - 1).map_or(last, |t| t.time),
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
    crate::recall::index::note_session(st, &srec.id, srec.last_time)?;
    Ok((receipt, cells))
}

impl Shared {
    /// Blocks while the dirty backlog ([`Shared::dirty_estimate`]) exceeds the limit,
    /// recording the stall.
    fn wait_backlog(&self) {
        let limit = self.opts.backlog_limit;
        self.stall_while(
            || {
                let over = self.dirty_estimate() > limit;
                if over {
                    self.hurry();
                }
                over
            },
            || format!("summary backlog over {limit} dirty nodes"),
        );
    }

    /// Blocks while `over()` holds (and the runtime is not stopping), recording one stall
    /// for `reason()` when it waited at all.
    pub(crate) fn stall_while(&self, over: impl Fn() -> bool, reason: impl Fn() -> String) {
        let started = Instant::now();
        let mut stalled = false;
        while over() && !self.stopping() {
            if !stalled {
                stalled = true;
                self.counters.stall_begin(reason());
            }
            self.wait_signal(std::time::Duration::from_millis(20));
        }
        if stalled {
            self.counters.stall_end(started.elapsed());
        }
    }
}
