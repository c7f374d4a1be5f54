//! Forgetting a fact, a turn or a session (staged into one batch).

use std::collections::BTreeSet;

use memforest_tree::{LeafKey, Payload, TimeRange, TreeKind};

use crate::lifecycle::fact::{drop_occurrences, remove_fact, Outcome};
use crate::lifecycle::tree::{delete_tree, remove_leaf, scrub_entities};
use crate::lifecycle::ForgetReport;
use crate::memory::forest::TenantForest;
use crate::memory::record::{
    self, CellRecord, FactRecord, Occurrence, SessionRecord, TurnRecord, CELL_PREFIX,
    FAILED_PREFIX, PENDING_PREFIX, SESSION_PREFIX,
};
use crate::memory::store::{Kv, Staged};
use crate::memory::text::normalize;
use crate::memory::turn_ids;
use crate::memory::MemoryError;
use crate::recall::index;
use crate::schema::Table;

/// The normalized keys of `rec`'s entities (a superset of the entity states naming it:
/// rejected keys have none).
fn entity_keys(rec: &FactRecord) -> BTreeSet<String> {
    rec.entities.iter().map(|e| normalize(e)).collect()
}

fn count(report: &mut ForgetReport, outcome: Outcome, removed: &mut Vec<u64>, id: u64) {
    match outcome {
        Outcome::Untouched => {}
        Outcome::Updated => report.facts_updated += 1,
        Outcome::Removed(leaves) => {
            report.facts_removed += 1;
            report.leaves_removed += leaves;
            removed.push(id);
        }
    }
}

/// Forgets fact `id`.
pub(crate) fn forget_fact(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    id: u64,
    report: &mut ForgetReport,
) -> Result<(), MemoryError> {
    let Some(b) = st.get(Table::Facts, &id.to_be_bytes())? else {
        return Ok(());
    };
    let rec: FactRecord = record::decode(&b, "fact")?;
    report.leaves_removed += remove_fact(kv, st, tf, id, &rec)?;
    report.facts_removed += 1;
    scrub_entities(st, &entity_keys(&rec), &[id], None)
}

/// Applies `edit` to the occurrences of every fact `session` sourced (found through the
/// occurrence index, so the cost follows the session's size, not the tenant's). Returns
/// the removed facts and the normalized entity keys of every fact it changed.
fn edit_facts(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    report: &mut ForgetReport,
    session: &str,
    edit: impl Fn(&mut Occurrence) -> bool,
) -> Result<(Vec<u64>, BTreeSet<String>), MemoryError> {
    let mut removed = Vec::new();
    let mut entities = BTreeSet::new();
    for id in index::session_facts(st, session)? {
        let Some(v) = st.get(Table::Facts, &id.to_be_bytes())? else {
            continue;
        };
        let rec: FactRecord = record::decode(&v, "fact")?;
        let keys = entity_keys(&rec);
        let outcome = drop_occurrences(kv, st, tf, id, rec, &edit)?;
        if outcome != Outcome::Untouched {
            entities.extend(keys);
        }
        count(report, outcome, &mut removed, id);
    }
    Ok((removed, entities))
}

fn session_record(st: &Staged<'_>, session: &str) -> Result<Option<SessionRecord>, MemoryError> {
    let key = record::prefixed(SESSION_PREFIX, session.as_bytes());
    st.get(Table::Sessions, &key)?
        .map(|b| record::decode(&b, "session"))
        .transpose()
}

fn cell_record(st: &Staged<'_>, id: u64) -> Result<Option<CellRecord>, MemoryError> {
    st.get(
        Table::Sessions,
        &record::prefixed(CELL_PREFIX, &id.to_be_bytes()),
    )?
    .map(|b| record::decode(&b, "cell"))
    .transpose()
}

/// Forgets a whole session.
pub(crate) fn forget_session(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    session: &str,
    report: &mut ForgetReport,
) -> Result<(), MemoryError> {
    let Some(srec) = session_record(st, session)? else {
        return Ok(());
    };
    for i in 0..srec.turns {
        let key = record::turn_key(session, i);
        if let Some(b) = st.get(Table::Turns, &key)? {
            // A turn that does not decode is deleted all the same.
            if let Ok(turn) = record::decode::<TurnRecord>(&b, "turn") {
                turn_ids::remove(st, session, &turn.id);
            }
            st.delete(Table::Turns, &key);
            report.turns += 1;
        }
        st.delete(Table::Sessions, &record::metadata_key(session, i));
    }
    turn_ids::unmark(st, session);
    st.delete(Table::Sessions, &record::agent_key(session));
    for i in 0..srec.cells {
        let id = record::cell_id(session, i);
        st.delete(
            Table::Sessions,
            &record::prefixed(CELL_PREFIX, &id.to_be_bytes()),
        );
        for mark in [PENDING_PREFIX, FAILED_PREFIX] {
            st.delete(
                Table::RouterState,
                &record::prefixed(mark, &id.to_be_bytes()),
            );
        }
    }
    let tree = record::tree_id(TreeKind::Session, session);
    if let Some(t) = tf.tree(st, tree)? {
        report.leaves_removed += t.len();
        delete_tree(st, tf, tree)?;
    }
    let (removed, entities) = edit_facts(kv, st, tf, report, session, |o| o.session != session)?;
    scrub_entities(st, &entities, &removed, Some(session))?;
    st.delete(
        Table::Sessions,
        &record::prefixed(SESSION_PREFIX, session.as_bytes()),
    );
    // Only forgetting the latest session makes the short-term memory look for another.
    if index::latest_session_staged(st)?.as_deref() == Some(session) {
        st.delete(Table::Postings, index::LATEST_SESSION_KEY);
        for (_, v) in st.scan_prefix(Table::Sessions, &[SESSION_PREFIX])? {
            let s: SessionRecord = record::decode(&v, "session")?;
            if s.id != session {
                index::note_session(st, &s.id, s.last_time)?;
            }
        }
    }
    Ok(())
}

/// Forgets turn `index` of `session`: the turn, its text in its cell's session-tree leaf
/// (the leaf is rebuilt from the cell's other turns; a cell still pending extraction gets
/// its leaf when it is committed, without the turn), and its facts' occurrences.
pub(crate) fn forget_turn(
    kv: &Kv,
    st: &mut Staged<'_>,
    tf: &mut TenantForest,
    session: &str,
    index: u32,
    config: &memforest_tree::TreeConfig,
    report: &mut ForgetReport,
) -> Result<(), MemoryError> {
    let Some(srec) = session_record(st, session)? else {
        return Ok(());
    };
    let key = record::turn_key(session, index);
    let Some(b) = st.get(Table::Turns, &key)? else {
        return Ok(());
    };
    let turn: TurnRecord = record::decode(&b, "turn")?;
    turn_ids::remove(st, session, &turn.id);
    st.delete(Table::Turns, &key);
    st.delete(Table::Sessions, &record::metadata_key(session, index));
    report.turns += 1;
    for c in 0..srec.cells {
        let cell = record::cell_id(session, c);
        let Some(crec) = cell_record(st, cell)? else {
            continue;
        };
        if !(crec.first..crec.first.saturating_add(crec.count)).contains(&index) {
            continue;
        }
        let tree = record::tree_id(TreeKind::Session, session);
        let time = TimeRange::new(crec.time.0, crec.time.1.max(crec.time.0))
            .ok_or(MemoryError::Invariant("bad cell time range"))?;
        if remove_leaf(st, tf, tree, Payload::cell(cell), &[time])? {
            report.leaves_removed += 1;
        }
        let mut lines = Vec::new();
        for i in crec.first..crec.first + crec.count {
            if let Some(b) = st.get(Table::Turns, &record::turn_key(session, i))? {
                let t: TurnRecord = record::decode(&b, "turn")?;
                lines.push(format!("{}: {}", t.speaker, t.text));
            }
        }
        // A cell still waiting for its extraction has no leaf yet: its commit writes one
        // of the turns left then.
        let pending = record::prefixed(PENDING_PREFIX, &cell.to_be_bytes());
        if !lines.is_empty() && st.get(Table::RouterState, &pending)?.is_none() {
            let t = tf.ensure_tree(st, TreeKind::Session, session, config)?;
            let leaf = LeafKey {
                time,
                payload: Payload::cell(cell),
            };
            t.insert(st, leaf, &lines.join("\n"))?;
            st.put(Table::DirtyMarks, &tree.to_be_bytes(), Vec::new());
            tf.dirty.insert(tree);
        }
    }
    let (removed, entities) = edit_facts(kv, st, tf, report, session, |o| {
        if o.session == session {
            let had = o.turns.contains(&turn.id);
            o.turns.retain(|t| *t != turn.id);
            !(had && o.turns.is_empty())
        } else {
            true
        }
    })?;
    scrub_entities(st, &entities, &removed, None)
}
