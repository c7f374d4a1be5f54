//! Removing facts and occurrences: a fact loses the occurrences whose source is forgotten;
//! a fact left with none (an orphan) leaves every tree it is in, its memberships, its time
//! index entry, its postings and slots, and the scene statistics it fed.

use memforest_tree::{Payload, TimeRange};

use crate::lifecycle::tree::{remove_leaf, scrub_scene};
use crate::memory::forest::TenantForest;
use crate::memory::record::{self, FactRecord, Occurrence};
use crate::memory::store::{Kv, Staged};
use crate::memory::MemoryError;
use crate::recall::index;
use crate::schema::Table;

/// Every time range the fact's leaves may carry: a leaf's key holds the fact's time when it
/// was inserted, the union of a prefix of its occurrences.
fn leaf_times(rec: &FactRecord) -> Vec<TimeRange> {
    let mut out = Vec::new();
    let mut acc: Option<(i64, i64)> = None;
    for o in &rec.occurrences {
        let t = acc.map_or(o.time, |a| (a.0.min(o.time.0), a.1.max(o.time.1)));
        acc = Some(t);
        if let Some(r) = TimeRange::new(t.0, t.1.max(t.0)) {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    if let Some(r) = TimeRange::new(rec.time.0, rec.time.1.max(rec.time.0)) {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Stages the complete removal of fact `id`; returns the number of leaves removed.
///
/// # Errors
/// Tree, engine and record errors.
pub fn remove_fact(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    id: u64,
    rec: &FactRecord,
) -> Result<u64, MemoryError> {
    let times = leaf_times(rec);
    let mut leaves = 0;
    for (k, _) in st.scan_prefix(Table::Memberships, &id.to_be_bytes())? {
        let Some(tree) = k.get(8..).and_then(record::be_u64) else {
            continue;
        };
        scrub_scene(kv, st, tf, tree, &rec.topics)?;
        if remove_leaf(st, tf, tree, Payload::fact(id), &times)? {
            leaves += 1;
        }
        st.delete(Table::Memberships, &k);
    }
    st.delete(Table::Facts, &id.to_be_bytes());
    st.delete(
        Table::FactTimeIndex,
        &record::time_index_key(rec.time.0, id),
    );
    index::remove_fact(st, id, rec)?;
    crate::recall::vectors::delete(st, id);
    Ok(leaves)
}

/// What [`drop_occurrences`] did to one fact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No occurrence matched.
    Untouched,
    /// Some occurrences were dropped; the fact remains.
    Updated,
    /// Every occurrence was dropped; the fact was removed (this many leaves).
    Removed(u64),
}

/// Applies `edit` to every occurrence of fact `id` (returning `false` drops it); removes the
/// fact when none remains, else rewrites it with its time recomputed.
///
/// # Errors
/// As [`remove_fact`].
pub fn drop_occurrences(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    id: u64,
    mut rec: FactRecord,
    edit: impl Fn(&mut Occurrence) -> bool,
) -> Result<Outcome, MemoryError> {
    let before = rec.occurrences.clone();
    let mut kept = before.clone();
    kept.retain_mut(|o| edit(o));
    if kept == before {
        return Ok(Outcome::Untouched);
    }
    if kept.is_empty() {
        return Ok(Outcome::Removed(remove_fact(kv, st, tf, id, &rec)?));
    }
    for o in &before {
        if !kept.iter().any(|k| k.session == o.session) {
            index::drop_occurrence(st, &o.session, id);
        }
        if !kept.iter().any(|k| k.cell == o.cell) {
            index::drop_cell(st, o.cell, id);
        }
    }
    let old = rec.time;
    rec.time = kept.iter().fold((i64::MAX, i64::MIN), |a, o| {
        (a.0.min(o.time.0), a.1.max(o.time.1))
    });
    rec.occurrences = kept;
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
    st.put(Table::Facts, &id.to_be_bytes(), record::encode(&rec)?);
    index::stamp_slots(st, id, &rec);
    Ok(Outcome::Updated)
}
