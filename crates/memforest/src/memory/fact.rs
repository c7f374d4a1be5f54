//! Canonical facts: deterministic ids from normalized text, and exact-duplicate merging
//! (a repeat adds an occurrence instead of a second fact; a version an update states
//! has ids of its own and merges only within its memory's versions), staged in the same
//! batch as the routing it causes.

use crate::memory::extract::{ExtractedItem, Origin, SemanticRole};
use crate::memory::record::{self, FactRecord, Occurrence};
use crate::memory::store::Staged;
use crate::memory::text::normalize;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::schema::Table;

/// What [`upsert`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    /// A new fact.
    Added,
    /// An occurrence was added to an existing fact.
    Merged,
    /// The fact already had this occurrence (a replay): nothing changed.
    Unchanged,
}

/// Keeps at most `n` non-empty strings.
fn cap(v: &[String], n: usize) -> Vec<String> {
    v.iter()
        .filter(|s| !s.trim().is_empty())
        .take(n)
        .cloned()
        .collect()
}

/// Stores `item` (seen at `occ`) as a canonical fact: a new one, or a new occurrence of
/// the fact with the same normalized text. Returns the fact id, its record and what
/// happened; `None` for an item whose text normalizes to nothing.
///
/// # Errors
/// Engine read errors; corrupt fact records.
pub fn upsert(
    st: &mut Staged<'_>,
    item: &ExtractedItem,
    occ: Occurrence,
) -> Result<Option<(u64, FactRecord, Upsert)>, MemoryError> {
    let norm = normalize(&item.fact_text);
    if norm.is_empty() {
        return Ok(None);
    }
    // A version `Memory::update` states is a memory of its own: its id comes from its
    // text, its version key and the memory it replaces, so it merges only into the same
    // update sent again (a retry), and no memory extracted from a conversation, nor
    // another version (an earlier one with the same text included), ever merges into it
    // or shares its ids' probe sequence.
    let version = crate::api::version_key_in(&item.attribute_keys);
    let seed = match version {
        Some(v) => {
            let replaced = item
                .source_turns
                .iter()
                .find_map(|t| crate::api::replaced_by_update(t))
                .unwrap_or_default();
            format!("{norm}\0{v}\0{replaced}")
        }
        None => norm.clone(),
    };
    for probe in 0..64u32 {
        let id = record::fact_id(&seed, probe);
        let key = id.to_be_bytes();
        match st.get(Table::Facts, &key)? {
            None => {
                let keys = [
                    &item.attribute_keys,
                    &item.domain_keys,
                    &item.collection_keys,
                ]
                .into_iter()
                .flat_map(|k| cap(k, 2))
                .collect();
                let rec = FactRecord {
                    text: item.fact_text.trim().to_owned(),
                    norm,
                    origin: item.origin.unwrap_or(Origin::Unknown),
                    role: item.semantic_role.unwrap_or(SemanticRole::Detail),
                    participants: item.participants.clone(),
                    entities: item.entities.clone(),
                    topics: cap(&item.topics, 3),
                    keys,
                    time: occ.time,
                    occurrences: vec![occ],
                };
                st.put(Table::Facts, &key, record::encode(&rec)?);
                st.put(
                    Table::FactTimeIndex,
                    &record::time_index_key(rec.time.0, id),
                    Vec::new(),
                );
                return Ok(Some((id, rec, Upsert::Added)));
            }
            Some(bytes) => {
                let mut rec: FactRecord = record::decode(&bytes, "fact")?;
                let same_memory =
                    version.is_none_or(|v| crate::api::version_key_in(&rec.keys) == Some(v));
                if rec.norm != norm || !same_memory {
                    continue;
                }
                if rec.occurrences.iter().any(|o| o.cell == occ.cell) {
                    return Ok(Some((id, rec, Upsert::Unchanged)));
                }
                let old = rec.time;
                rec.time = (rec.time.0.min(occ.time.0), rec.time.1.max(occ.time.1));
                rec.occurrences.push(occ);
                if rec.time.0 != old.0 {
                    st.delete(Table::FactTimeIndex, &record::time_index_key(old.0, id));
                    st.put(
                        Table::FactTimeIndex,
                        &record::time_index_key(rec.time.0, id),
                        Vec::new(),
                    );
                }
                if rec.time != old {
                    index::note_span(st, id, Some(old), Some(rec.time));
                }
                st.put(Table::Facts, &key, record::encode(&rec)?);
                return Ok(Some((id, rec, Upsert::Merged)));
            }
        }
    }
    Err(MemoryError::Invariant(
        "64 fact-id hash collisions in a row",
    ))
}
