//! The facts a filtered query may return, listed from the index rather than found by
//! loading facts in score order until enough pass ([`Query::admits`]).
//!
//! A query restricted to one session of many, to a rarely heard speaker or to a short
//! time ("since yesterday") passes few facts; testing candidates one by one then loads
//! most of the tenant's facts. The index lists them directly:
//! - sessions ([`Query::sessions`]): the occurrence entries of each session
//!   ([`index::occurrence_prefix`]);
//! - a speaker ([`Query::speaker`]): the facts whose speaker field holds every term of the
//!   name ([`index::speaker_term`]);
//! - a time range ([`Query::time_range`], start `a`, end `b`): a fact spanning at most
//!   [`LONG_SPAN`] that overlaps it starts in `[a - LONG_SPAN, b]`, which
//!   [`Table::FactTimeIndex`] (by start) lists; the longer ones have long-span entries
//!   ([`index::SPAN_PREFIX`], with their span), read whole.
//!
//! The lists are supersets (sessions whose ids hash alike share entries; names are
//! compared by their terms; a fact starting before `a` may end before it too), so
//! [`Query::admits`] still decides each fact. A list is used only when it holds at most
//! `1 / SELECTIVE` of the tenant's facts, and is read no further: a filter most facts pass
//! is cheaper to test one by one, as few need loading before enough pass. For the same
//! reason a time range open at its start (`until`, `as_of`) is not listed.

use std::collections::HashSet;

use memforest_tree::TimeRange;

use crate::memory::record;
use crate::memory::MemoryError;
use crate::recall::bm25::terms;
use crate::recall::index::{
    self, INDEX_VERSION, LONG_SPAN, OCCURRENCES_COMPLETE_KEY, SPANS_COMPLETE_KEY, VERSION_KEY,
};
use crate::recall::postings::List;
use crate::recall::query::Query;
use crate::recall::reader::Reader;
use crate::schema::Table;

/// A list is used when it holds at most `1 / SELECTIVE` of the tenant's facts.
pub const SELECTIVE: u64 = 8;

/// The speaker field terms ([`index::speaker_term`]) of `query`'s speaker filter, whose
/// postings [`admissible`] reads; empty without one.
#[must_use]
pub fn speaker_terms(query: &Query) -> Vec<String> {
    let mut out: Vec<String> = query
        .speaker
        .as_deref()
        .map(terms)
        .unwrap_or_default()
        .iter()
        .map(|t| index::speaker_term(t))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The ids of every fact `query`'s session, speaker and time filters could admit, when
/// the index lists them selectively (module docs); `None` when the query has none of
/// them, the index cannot list them (one written before the occurrence or long-span
/// entries, a name with no terms) or every list is too long to pay.
///
/// `docs`: the tenant's indexed facts. `speakers`: the postings of [`speaker_terms`], in
/// that order.
///
/// # Errors
/// Engine read errors; a corrupt occurrence entry.
pub fn admissible(
    r: &Reader<'_>,
    query: &Query,
    docs: u64,
    speakers: &[List],
) -> Result<Option<HashSet<u64>>, MemoryError> {
    if !query.filtered() {
        return Ok(None);
    }
    let current =
        r.get(Table::Postings, VERSION_KEY)?.as_deref() == Some(&INDEX_VERSION.to_le_bytes()[..]);
    if !current {
        return Ok(None);
    }
    let limit = docs / SELECTIVE;
    let by_session = match &query.sessions {
        Some(sessions) => of_sessions(r, sessions, limit)?,
        None => None,
    };
    let by_speaker = of_speaker(speakers, limit);
    let by_time = match query.time_range {
        // A range open at its start (`until`, `as_of`) passes most facts.
        Some(range) if range.start != i64::MIN => of_time(r, range, limit)?,
        _ => None,
    };
    Ok([by_session, by_speaker, by_time]
        .into_iter()
        .flatten()
        .reduce(|a, b| a.intersection(&b).copied().collect()))
}

/// The facts the occurrence entries of `sessions` name; `None` when the occurrence index
/// does not cover every fact or they are more than `limit`.
fn of_sessions<'a>(
    r: &Reader<'_>,
    sessions: impl IntoIterator<Item = &'a String>,
    limit: u64,
) -> Result<Option<HashSet<u64>>, MemoryError> {
    if r.get(Table::Postings, OCCURRENCES_COMPLETE_KEY)?.is_none() {
        return Ok(None);
    }
    let mut out = HashSet::new();
    for session in sessions {
        let prefix = index::occurrence_prefix(session);
        for kv in r.scan_prefix(Table::Postings, &prefix)? {
            if out.len() as u64 >= limit {
                return Ok(None);
            }
            out.insert(index::entry_fact(&kv?.0, prefix.len(), "occurrence entry")?);
        }
    }
    Ok(Some(out))
}

/// The facts that may overlap `range`: those starting in `[range.start - LONG_SPAN,
/// range.end]` and the long-span facts overlapping it; `None` when the long-span entries
/// do not cover every fact or the facts are more than `limit`.
fn of_time(
    r: &Reader<'_>,
    range: TimeRange,
    limit: u64,
) -> Result<Option<HashSet<u64>>, MemoryError> {
    if r.get(Table::Postings, SPANS_COMPLETE_KEY)?.is_none() {
        return Ok(None);
    }
    let mut out = HashSet::new();
    let lower = record::time_index_key(range.start.saturating_sub(LONG_SPAN), 0);
    let upper = record::time_index_key(range.end, u64::MAX);
    for kv in r.scan(Table::FactTimeIndex, &lower, &upper)? {
        if out.len() as u64 >= limit {
            return Ok(None);
        }
        out.insert(index::entry_fact(&kv?.0, 8, "fact time index entry")?);
    }
    for kv in r.scan_prefix(Table::Postings, &[index::SPAN_PREFIX])? {
        let (k, v) = kv?;
        let (fact, time) = index::span_entry(&k, &v)?;
        if range.overlaps(time) {
            out.insert(fact);
            if out.len() as u64 > limit {
                return Ok(None);
            }
        }
    }
    Ok(Some(out))
}

/// The facts in every one of `lists` (the speaker field postings of a name's terms, each
/// in fact id order); `None` when there are none or the shortest is longer than `limit`.
fn of_speaker(lists: &[List], limit: u64) -> Option<HashSet<u64>> {
    let shortest = lists.iter().min_by_key(|l| l.len())?;
    if shortest.len() as u64 > limit {
        return None;
    }
    let in_all = |fact: u64| {
        lists
            .iter()
            .all(|l| l.binary_search_by_key(&fact, |p| p.fact).is_ok())
    };
    Some(
        shortest
            .iter()
            .map(|p| p.fact)
            .filter(|&f| in_all(f))
            .collect(),
    )
}
