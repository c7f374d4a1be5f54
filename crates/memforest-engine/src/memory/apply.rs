//! One cell's extraction and commit: load the cell and its turns, call the extractor (and
//! the embedder), then under the forest lock upsert the facts, route them, insert the cell
//! into its session tree and clear the cell's pending mark, all in one batch. A cell whose
//! pending mark is gone was already committed, so a replay changes nothing.

use std::collections::BTreeSet;

use memforest_tree::{Payload, TreeKind};

use crate::key::{Table, TenantId};
use crate::memory::extract::{CellTurn, Extraction, ExtractionInput};
use crate::memory::fact::{self, Upsert};
use crate::memory::record::{
    self, CellRecord, Occurrence, TurnRecord, CELL_PREFIX, PENDING_PREFIX,
};
use crate::memory::route::{FactRef, Router};
use crate::memory::stats::CallKind;
use crate::memory::store::Staged;
use crate::memory::{MemoryError, Shared};

/// What committing one cell did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellOutcome {
    /// New facts.
    pub facts_added: u64,
    /// Occurrences merged into existing facts.
    pub facts_merged: u64,
    /// Trees that got a leaf.
    pub trees: BTreeSet<u64>,
    /// Seqno of the commit (0 when nothing was written).
    pub seqno: u64,
}

/// Loads cell `cell` and its turns.
fn load(
    shared: &Shared,
    tenant: &TenantId,
    cell: u64,
) -> Result<(CellRecord, Vec<TurnRecord>), MemoryError> {
    let key = record::prefixed(CELL_PREFIX, &cell.to_be_bytes());
    let bytes = shared
        .kv
        .get(tenant, Table::Sessions, &key)?
        .ok_or(MemoryError::Invariant("pending cell has no cell record"))?;
    let rec: CellRecord = record::decode(&bytes, "cell")?;
    let mut turns = Vec::with_capacity(rec.count as usize);
    for i in rec.first..rec.first + rec.count {
        let b = shared
            .kv
            .get(tenant, Table::Turns, &record::turn_key(&rec.session, i))?
            .ok_or(MemoryError::Invariant("cell turn missing"))?;
        turns.push(record::decode(&b, "turn")?);
    }
    Ok((rec, turns))
}

/// Extracts and commits cell `cell` of `tenant`.
///
/// # Errors
/// [`MemoryError`]; a model failure leaves the pending mark for a retry.
pub fn process(shared: &Shared, tenant: &TenantId, cell: u64) -> Result<CellOutcome, MemoryError> {
    let (rec, turns) = load(shared, tenant, cell)?;
    let input = ExtractionInput {
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
    };
    let name = String::from_utf8_lossy(tenant.name()).into_owned();
    let extraction = match shared.opts.extractor.extract(&input) {
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
    let embeddings = match &shared.opts.embedder {
        Some(emb) if !extraction.items.is_empty() => {
            let texts: Vec<String> = extraction
                .items
                .iter()
                .map(|i| i.fact_text.clone())
                .collect();
            match emb.embed(&texts) {
                Ok(e) => {
                    shared
                        .counters
                        .call(&name, CallKind::Embedding, Ok(e.usage));
                    Some(e.vectors)
                }
                Err(_) => {
                    shared.counters.call(&name, CallKind::Embedding, Err(()));
                    None
                }
            }
        }
        _ => None,
    };
    commit(
        shared,
        tenant,
        cell,
        &rec,
        &turns,
        &extraction,
        embeddings.as_deref(),
    )
}

fn commit(
    shared: &Shared,
    tenant: &TenantId,
    cell: u64,
    rec: &CellRecord,
    turns: &[TurnRecord],
    extraction: &Extraction,
    embeddings: Option<&[Vec<f32>]>,
) -> Result<CellOutcome, MemoryError> {
    let mut forest = shared.forest.lock();
    let pending = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
    if shared
        .kv
        .get(tenant, Table::RouterState, &pending)?
        .is_none()
    {
        return Ok(CellOutcome::default());
    }
    let mut st = Staged::new(&shared.kv, tenant.clone());
    let tf = forest.tenants.entry(tenant.clone()).or_default();
    let mut out = CellOutcome::default();
    let result = (|| {
        let mut router = Router {
            st: &mut st,
            forest: tf,
            kv: &shared.kv,
            opts: &shared.opts,
            touched: BTreeSet::new(),
        };
        let text: Vec<String> = turns
            .iter()
            .map(|t| format!("{}: {}", t.speaker, t.text))
            .collect();
        router.insert(
            TreeKind::Session,
            &rec.session,
            Payload::cell(cell),
            rec.time,
            &text.join("\n"),
        )?;
        for (i, item) in extraction.items.iter().enumerate() {
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
            let Some((id, fact_rec, what)) = fact::upsert(router.st, item, occ)? else {
                continue;
            };
            match what {
                Upsert::Added => {
                    out.facts_added += 1;
                    crate::recall::index::add_fact(router.st, id, &fact_rec)?;
                }
                Upsert::Merged => {
                    out.facts_merged += 1;
                    crate::recall::index::note_occurrence(router.st, &rec.session, id);
                }
                Upsert::Unchanged => continue,
            }
            router.route_fact(FactRef {
                id,
                rec: &fact_rec,
                new: what == Upsert::Added,
                session: &rec.session,
                embedding: embeddings.and_then(|e| e.get(i)).map(Vec::as_slice),
            })?;
        }
        out.trees = std::mem::take(&mut router.touched);
        Ok::<(), MemoryError>(())
    })();
    if let Err(e) = result {
        forest.tenants.remove(tenant);
        return Err(e);
    }
    st.delete(Table::RouterState, &pending);
    match st.commit(shared.opts.durability) {
        Ok(seqno) => out.seqno = seqno,
        Err(e) => {
            forest.tenants.remove(tenant);
            return Err(e.into());
        }
    }
    shared
        .counters
        .dirty_now(!out.trees.is_empty() || forest.dirty_total() > 0);
    Ok(out)
}
