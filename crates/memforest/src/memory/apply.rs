//! Cell extraction and commit: [`prepare`] loads a cell and its turns and calls the
//! extractor (and the embedder), off any lock; [`commit`] then, under the forest lock,
//! upserts the facts of one or more prepared cells, routes them, inserts each cell into its
//! session tree and clears the cells' pending marks, all in one batch (ingest commits a
//! whole session's cells at once: one WAL write, and a tree page rewritten by many facts of
//! the session is written once). A cell whose pending mark is gone was already committed, so
//! a replay changes nothing; one forgotten or made again since its load is not committed
//! (the new cell is extracted on its own), and turns deleted since the load are left out. [`commit_or_fail`] keeps one cell that can never be committed
//! (`memory::failed`) from failing the others.

use std::collections::BTreeSet;

use memforest_tree::{Payload, TreeKind};

use crate::memory::extract::{CellTurn, ExtractedItem, Extraction, ExtractionInput};
use crate::memory::fact::{self, Upsert};
use crate::memory::failed;
use crate::memory::forest::Forest;
use crate::memory::model::guarded;
use crate::memory::record::{
    self, CellRecord, Occurrence, TurnRecord, CELL_PREFIX, PENDING_PREFIX,
};
use crate::memory::route::{FactRef, Router};
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::{MemoryError, Shared};
use crate::schema::Table;
use memforest_engine::TenantId;

/// What committing one cell did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellOutcome {
    /// New facts.
    pub facts_added: u64,
    /// Occurrences merged into existing facts.
    pub facts_merged: u64,
    /// Ids of the facts added or given an occurrence, in commit order.
    pub facts: Vec<u64>,
    /// Trees that got a leaf.
    pub trees: BTreeSet<u64>,
    /// Seqno of the commit (0 when nothing was written).
    pub seqno: u64,
}

/// Loads cell `cell` and the turns of it that exist; `None` when the cell was forgotten
/// after it was queued (a forget of its session, which removes its pending mark with it,
/// ran between the ingest that wrote it and this extraction). A turn deleted meanwhile
/// (`Memory::delete_message`) is left out: what is left of the cell is extracted, nothing
/// when no turn is left.
fn load(
    shared: &Shared,
    tenant: &TenantId,
    cell: u64,
) -> Result<Option<(CellRecord, Vec<TurnRecord>)>, MemoryError> {
    let key = record::prefixed(CELL_PREFIX, &cell.to_be_bytes());
    let Some(bytes) = shared.kv.get(tenant, Table::Sessions, &key)? else {
        // Told apart from damage by the pending mark: a forget removes it with the cell.
        let pending = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
        return match shared.kv.get(tenant, Table::RouterState, &pending)? {
            None => Ok(None),
            Some(_) => Err(MemoryError::Invariant("pending cell has no cell record")),
        };
    };
    let rec: CellRecord = record::decode(&bytes, "cell")?;
    let turns = cell_turns(|k| Ok(shared.kv.get(tenant, Table::Turns, k)?), &rec)?;
    Ok(Some((rec, turns)))
}

/// The turns of cell `rec` that exist, in order, read through `get` (a `Turns` key to its
/// value).
fn cell_turns<B: AsRef<[u8]>>(
    mut get: impl FnMut(&[u8]) -> Result<Option<B>, MemoryError>,
    rec: &CellRecord,
) -> Result<Vec<TurnRecord>, MemoryError> {
    let mut turns = Vec::with_capacity(rec.count as usize);
    for i in rec.first..rec.first.saturating_add(rec.count) {
        if let Some(b) = get(&record::turn_key(&rec.session, i))? {
            turns.push(record::decode(b.as_ref(), "turn")?);
        }
    }
    Ok(turns)
}

/// A cell whose extraction is done, ready for [`commit`].
#[derive(Debug, Clone)]
pub struct Prepared {
    cell: u64,
    rec: CellRecord,
    turns: Vec<TurnRecord>,
    extraction: Extraction,
    embeddings: Option<Vec<Vec<f32>>>,
}

impl Prepared {
    /// A cell with `items` as its extraction (no usage counted here).
    fn of_items(
        cell: u64,
        rec: CellRecord,
        turns: Vec<TurnRecord>,
        items: Vec<ExtractedItem>,
        embeddings: Option<Vec<Vec<f32>>>,
    ) -> Self {
        Self {
            cell,
            rec,
            turns,
            extraction: Extraction {
                items,
                ..Extraction::default()
            },
            embeddings,
        }
    }

    /// A cell forgotten before its extraction: nothing to extract, and [`commit`] skips it
    /// (its cell record is gone, or is another cell's made since under the same id).
    fn gone(cell: u64) -> Self {
        Self::of_items(cell, CellRecord::default(), Vec::new(), Vec::new(), None)
    }

    /// The cell's id.
    #[must_use]
    pub fn cell(&self) -> u64 {
        self.cell
    }
}

/// Extracts and commits cell `cell` of `tenant` on its own (a commit that fails for good
/// records the cell as failed: [`commit_or_fail`]).
///
/// # Errors
/// [`MemoryError`]; a model failure leaves the pending mark for a retry; a permanent
/// failure of the extraction ([`failed::is_permanent`]) is returned for the caller to
/// record.
pub fn process(shared: &Shared, tenant: &TenantId, cell: u64) -> Result<CellOutcome, MemoryError> {
    let prepared = prepare(shared, tenant, cell)?;
    commit_or_fail(shared, tenant, std::slice::from_ref(&prepared)).map(|(out, _)| out)
}

/// Loads cell `cell` of `tenant` and runs the extractor (and the embedder) on it.
///
/// # Errors
/// [`MemoryError::Model`] when the extractor or the embedder fails (the cell stays
/// pending); engine and record errors.
pub fn prepare(shared: &Shared, tenant: &TenantId, cell: u64) -> Result<Prepared, MemoryError> {
    let Some((rec, turns)) = load(shared, tenant, cell)? else {
        return Ok(Prepared::gone(cell));
    };
    if turns.is_empty() {
        return Ok(Prepared::of_items(cell, rec, turns, Vec::new(), None));
    }
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let input = input_of(&rec, &turns);
    let extraction = match guarded("extractor", || shared.opts.extractor.extract(&input)) {
        Ok(x) => {
            shared
                .counters
                .call(&name, CallKind::Extraction, Ok(x.usage));
            x
        }
        Err(e) => {
            shared.counters.call(&name, CallKind::Extraction, Err(()));
            return Err(MemoryError::Model(e.to_string()));
        }
    };
    let embeddings = embed_items(shared, &name, &extraction.items)?;
    Ok(Prepared {
        cell,
        rec,
        turns,
        extraction,
        embeddings,
    })
}

/// The extractor's input for a cell and its turns.
fn input_of(rec: &CellRecord, turns: &[TurnRecord]) -> ExtractionInput {
    ExtractionInput {
        session_id: rec.session.clone(),
        session_start: rec.session_start,
        turns: turns
            .iter()
            .map(|t| CellTurn {
                turn_id: t.id.clone(),
                role: t.role,
                speaker: t.speaker.clone(),
                text: t.text.clone(),
                time: t.time,
            })
            .collect(),
    }
}

/// [`prepare`] for several cells of `tenant` at once, in order: one
/// `Extractor::extract_batch` call for them all, then one embedder call for the facts of
/// every cell it answered. A cell that does not load, or that the reply leaves out or
/// answers with nothing usable, gets its own error (a model failure, counted as a failed
/// extraction call, so it is retried on its own); when the call or the embedding fails
/// every cell gets the model error.
pub fn prepare_batch(
    shared: &Shared,
    tenant: &TenantId,
    cells: &[u64],
) -> Vec<(u64, Result<Prepared, MemoryError>)> {
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let mut out: Vec<(u64, Result<Prepared, MemoryError>)> = Vec::with_capacity(cells.len());
    let mut loaded = Vec::with_capacity(cells.len());
    for &cell in cells {
        match load(shared, tenant, cell) {
            Ok(Some((rec, turns))) if turns.is_empty() => out.push((
                cell,
                Ok(Prepared::of_items(cell, rec, turns, Vec::new(), None)),
            )),
            Ok(Some(l)) => loaded.push((cell, l)),
            Ok(None) => out.push((cell, Ok(Prepared::gone(cell)))),
            Err(e) => out.push((cell, Err(e))),
        }
    }
    let inputs: Vec<ExtractionInput> = loaded.iter().map(|(_, (r, t))| input_of(r, t)).collect();
    let batch = match guarded("extractor", || shared.opts.extractor.extract_batch(&inputs)) {
        Ok(b) if b.cells.len() == inputs.len() => {
            shared
                .counters
                .call(&name, CallKind::Extraction, Ok(b.usage));
            b
        }
        result => {
            shared.counters.call(&name, CallKind::Extraction, Err(()));
            let why = match result {
                Err(e) => e.to_string(),
                Ok(b) => format!(
                    "extractor returned {} results for {} cells",
                    b.cells.len(),
                    inputs.len()
                ),
            };
            out.extend(
                loaded
                    .into_iter()
                    .map(|(cell, _)| (cell, Err(MemoryError::Model(why.clone())))),
            );
            return out;
        }
    };
    let mut answered = Vec::with_capacity(loaded.len());
    for ((cell, (rec, turns)), items) in loaded.into_iter().zip(batch.cells) {
        match items {
            Ok(items) => answered.push((cell, rec, turns, items)),
            Err(e) => {
                shared.counters.call(&name, CallKind::Extraction, Err(()));
                out.push((cell, Err(MemoryError::Model(e.to_string()))));
            }
        }
    }
    let all: Vec<ExtractedItem> = answered.iter().flat_map(|a| a.3.iter().cloned()).collect();
    let mut vectors = match embed_items(shared, &name, &all) {
        Ok(v) => v.map(Vec::into_iter),
        Err(e) => {
            let why = match e {
                MemoryError::Model(why) => why,
                other => other.to_string(),
            };
            out.extend(
                answered
                    .into_iter()
                    .map(|a| (a.0, Err(MemoryError::Model(why.clone())))),
            );
            return out;
        }
    };
    for (cell, rec, turns, items) in answered {
        let embeddings = vectors
            .as_mut()
            .map(|v| v.by_ref().take(items.len()).collect::<Vec<_>>())
            .filter(|v| !v.is_empty());
        out.push((
            cell,
            Ok(Prepared::of_items(cell, rec, turns, items, embeddings)),
        ));
    }
    out
}

/// The vectors of `items`' fact texts, when the store has an embedder (`None` without
/// one or without items).
///
/// # Errors
/// [`MemoryError::Model`] when the embedder fails or returns another number of vectors:
/// the caller keeps its work queued (a fact stored without its vector could never be
/// found by meaning).
pub fn embed_items(
    shared: &Shared,
    tenant: &str,
    items: &[ExtractedItem],
) -> Result<Option<Vec<Vec<f32>>>, MemoryError> {
    let Some(emb) = shared.opts.embedder.as_ref().filter(|_| !items.is_empty()) else {
        return Ok(None);
    };
    let texts: Vec<String> = items.iter().map(|i| i.fact_text.clone()).collect();
    match crate::memory::embed::checked(emb.as_ref(), &texts) {
        Ok(e) => {
            shared
                .counters
                .call(tenant, CallKind::Embedding, Ok(e.usage));
            Ok(Some(e.vectors))
        }
        Err(e) => {
            shared.counters.call(tenant, CallKind::Embedding, Err(()));
            Err(MemoryError::Model(e.to_string()))
        }
    }
}

/// Cell `cell`, staged in `st` and not committed yet, with `items` as its extraction (no
/// extractor call) and `embeddings` as their vectors ([`embed_items`]): facts the caller
/// states, e.g. a new version given to `Memory::update`, committed with their message by
/// [`commit_with`].
///
/// # Errors
/// The cell not staged ([`MemoryError::Invariant`]); engine and record errors.
pub fn prepare_stated(
    st: &Staged<'_>,
    cell: u64,
    items: Vec<ExtractedItem>,
    embeddings: Option<Vec<Vec<f32>>>,
) -> Result<Prepared, MemoryError> {
    let key = record::prefixed(CELL_PREFIX, &cell.to_be_bytes());
    let bytes = st
        .get(Table::Sessions, &key)?
        .ok_or(MemoryError::Invariant("a stated cell has no cell record"))?;
    let rec: CellRecord = record::decode(&bytes, "cell")?;
    let turns = cell_turns(|k| Ok(st.get(Table::Turns, k)?), &rec)?;
    Ok(Prepared::of_items(cell, rec, turns, items, embeddings))
}

/// Commits the facts and routing of `cells` (prepared by [`prepare`]) in one batch, in
/// order; cells already committed (no pending mark), forgotten or made again since their
/// load are skipped (see the module docs).
///
/// # Errors
/// Engine, tree and record errors (nothing is committed; the tenant's cache is dropped).
pub fn commit(
    shared: &Shared,
    tenant: &TenantId,
    cells: &[Prepared],
) -> Result<CellOutcome, MemoryError> {
    let mut forest = shared.forest.lock();
    // An index dropped (`Memory::drop_derived`) or of another version is rebuilt first: the
    // first fact staged into an empty index marks it complete.
    crate::recall::index::ensure(&shared.kv, tenant)?;
    let st = Staged::new(&shared.kv, tenant.clone());
    commit_with(shared, &mut forest, st, cells)
}

/// [`commit`] of `cells` staged into `st`, which may already hold other writes of its
/// tenant (an update's message and cell): everything commits as one batch. The caller
/// holds `forest`'s lock and called `recall::index::ensure` before staging anything (the
/// rebuild of a dropped index writes batches of its own).
///
/// # Errors
/// As [`commit`].
pub fn commit_with(
    shared: &Shared,
    forest: &mut Forest,
    mut st: Staged<'_>,
    cells: &[Prepared],
) -> Result<CellOutcome, MemoryError> {
    let tenant = &st.tenant().clone();
    let tf = forest.tenants.entry(tenant.clone()).or_default();
    let mut out = CellOutcome::default();
    let mut router = Router {
        st: &mut st,
        forest: tf,
        kv: &shared.kv,
        opts: &shared.opts,
        touched: BTreeSet::new(),
        fresh: std::collections::HashSet::new(),
        dirtied: 0,
    };
    let result = cells
        .iter()
        .try_for_each(|p| commit_cell(&mut router, p, &mut out));
    out.trees = std::mem::take(&mut router.touched);
    let dirtied = router.dirtied;
    if let Err(e) = result {
        forest.tenants.remove(tenant);
        return Err(e);
    }
    match st.commit(shared.opts.durability) {
        Ok(seqno) => {
            out.seqno = seqno;
            shared.add_dirty_estimate(dirtied);
            if let Some(tf) = forest.tenants.get_mut(tenant) {
                tf.trim(shared.opts.tree_cache_per_tenant);
            }
        }
        Err(e) => {
            forest.tenants.remove(tenant);
            return Err(e.into());
        }
    }
    shared
        .counters
        .dirty_now(!out.trees.is_empty() || forest.any_dirty());
    Ok(out)
}

impl CellOutcome {
    /// Adds what another commit did.
    fn absorb(&mut self, other: Self) {
        self.facts_added += other.facts_added;
        self.facts_merged += other.facts_merged;
        self.facts.extend(other.facts);
        self.trees.extend(other.trees);
        self.seqno = self.seqno.max(other.seqno);
    }
}

/// [`commit`]s `cells` in one batch; when that fails for a reason that may be one cell's
/// own ([`failed::is_permanent`]), commits them one at a time instead and records each cell
/// that fails so as failed ([`failed::record`]). Returns what was committed and how many
/// cells were recorded as failed.
///
/// # Errors
/// As [`commit`], for failures that are not permanent (nothing of the failing commit is
/// applied).
pub fn commit_or_fail(
    shared: &Shared,
    tenant: &TenantId,
    cells: &[Prepared],
) -> Result<(CellOutcome, u64), MemoryError> {
    let e = match commit(shared, tenant, cells) {
        Ok(out) => return Ok((out, 0)),
        Err(e) if failed::is_permanent(&e) => e,
        Err(e) => return Err(e),
    };
    if let [only] = cells {
        failed::record(shared, tenant, only.cell, &e)?;
        return Ok((CellOutcome::default(), 1));
    }
    let mut out = CellOutcome::default();
    let mut gave_up = 0;
    for p in cells {
        match commit(shared, tenant, std::slice::from_ref(p)) {
            Ok(one) => out.absorb(one),
            Err(e) if failed::is_permanent(&e) => {
                failed::record(shared, tenant, p.cell, &e)?;
                gave_up += 1;
            }
            Err(e) => return Err(e),
        }
    }
    Ok((out, gave_up))
}

/// `item` with the speakers of its source turns among its participants, so that a search
/// by speaker (`Query::speaker`) finds what a model extracted as well.
fn with_speakers(item: &ExtractedItem, turns: &[TurnRecord]) -> ExtractedItem {
    let mut item = item.clone();
    for t in turns.iter().filter(|t| item.source_turns.contains(&t.id)) {
        let name = t.speaker_name();
        if !item
            .participants
            .iter()
            .any(|p| p.eq_ignore_ascii_case(name))
        {
            item.participants.push(name.to_owned());
        }
    }
    item
}

/// `item` without its source turns that were `loaded` and are no longer among `now`
/// (deleted since the load); `None` when it had source turns among the loaded ones and
/// none of them is left. Ids of turns that were never in the cell are left as they are.
fn supported(
    item: &ExtractedItem,
    loaded: &[TurnRecord],
    now: &[TurnRecord],
) -> Option<ExtractedItem> {
    let has = |turns: &[TurnRecord], id: &String| turns.iter().any(|t| &t.id == id);
    let mut item = item.clone();
    let had = item.source_turns.iter().any(|id| has(loaded, id));
    item.source_turns
        .retain(|id| has(now, id) || !has(loaded, id));
    let left = item.source_turns.iter().any(|id| has(now, id));
    (!had || left).then_some(item)
}

/// Stages one cell: its session-tree leaf, its facts and their routing, and the removal
/// of its pending mark.
fn commit_cell(
    router: &mut Router<'_, '_>,
    p: &Prepared,
    out: &mut CellOutcome,
) -> Result<(), MemoryError> {
    let (cell, rec) = (p.cell, &p.rec);
    let pending = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
    if router.st.get(Table::RouterState, &pending)?.is_none() {
        return Ok(());
    }
    // What the extraction read must still be the cell: a cell forgotten and made again
    // under the same id (a deleted session written again starts its cells at index 0)
    // is another cell, extracted on its own; turns deleted since the load are left out
    // with the items only they support, so a deleted message does not come back.
    let current = router
        .st
        .get(
            Table::Sessions,
            &record::prefixed(CELL_PREFIX, &cell.to_be_bytes()),
        )?
        .map(|b| record::decode::<CellRecord>(&b, "cell"))
        .transpose()?;
    if current.as_ref() != Some(rec) {
        return Ok(());
    }
    let now = cell_turns(|k| Ok(router.st.get(Table::Turns, k)?), rec)?;
    if now.iter().any(|t| !p.turns.contains(t)) {
        return Ok(());
    }
    let turns = &now;
    if !turns.is_empty() {
        let text: Vec<String> = turns
            .iter()
            .map(|t| format!("{}: {}", t.speaker_name(), t.text))
            .collect();
        router.insert(
            TreeKind::Session,
            &rec.session,
            Payload::cell(cell),
            rec.time,
            &text.join("\n"),
        )?;
    }
    for (i, item) in p.extraction.items.iter().enumerate() {
        let Some(item) = supported(item, &p.turns, turns) else {
            continue;
        };
        let item = &item;
        let turn_time = item
            .source_turns
            .first()
            .and_then(|id| turns.iter().find(|t| &t.id == id))
            .map(|t| (t.time, t.time));
        let time = match (item.time_start, item.time_end) {
            (Some(s), e) => (s, e.unwrap_or(s).max(s)),
            _ => turn_time.unwrap_or(rec.time),
        };
        let occ = Occurrence {
            session: rec.session.clone(),
            cell,
            turns: item.source_turns.clone(),
            time,
        };
        let item = with_speakers(item, turns);
        let Some((id, fact_rec, what)) = fact::upsert(router.st, &item, occ)? else {
            continue;
        };
        let embedding = p
            .embeddings
            .as_ref()
            .and_then(|e| e.get(i))
            .map(Vec::as_slice);
        match what {
            Upsert::Added => {
                out.facts_added += 1;
                out.facts.push(id);
                router.fresh.insert(id);
                crate::recall::index::add_fact(router.st, id, &fact_rec)?;
                if let Some(v) = embedding {
                    crate::recall::vectors::put(router.st, id, v);
                }
            }
            Upsert::Merged => {
                out.facts_merged += 1;
                out.facts.push(id);
                crate::recall::index::note_occurrence(router.st, &rec.session, cell, id);
                crate::recall::index::stamp_slots(router.st, id, &fact_rec);
            }
            Upsert::Unchanged => continue,
        }
        router.route_fact(FactRef {
            id,
            rec: &fact_rec,
            new: what == Upsert::Added,
            session: &rec.session,
            embedding,
        })?;
    }
    let embedder = crate::recall::vectors::writer_name(router.opts.embedder.as_deref());
    crate::recall::vectors::record_embedder(router.st, embedder)?;
    router.st.delete(Table::RouterState, &pending);
    Ok(())
}
