//! The facts a filtered query may return, listed from the index rather than found by
//! loading facts in score order until enough pass ([`Query::admits`]).
//!
//! A query restricted to one session of many, or to a rarely heard speaker, passes few
//! facts; testing candidates one by one then loads most of the tenant's facts. The index
//! lists them directly:
//! - sessions ([`Query::sessions`]): the occurrence entries of each session
//!   ([`index::occurrence_prefix`]);
//! - a speaker ([`Query::speaker`]): the facts whose speaker field holds every term of the
//!   name ([`index::speaker_term`]).
//!
//! Both lists are supersets (sessions whose ids hash alike share entries; names are
//! compared by their terms), so [`Query::admits`] still decides each fact. A list is used
//! only when it holds at most `1 / SELECTIVE` of the tenant's facts: a filter most facts
//! pass is cheaper to test one by one, as few need loading before enough pass. The time
//! filter has no such list (a fact's time is a span, and [`Table::FactTimeIndex`] orders facts
//! by start only).

use std::collections::HashSet;

use crate::memory::record;
use crate::memory::MemoryError;
use crate::recall::bm25::terms;
use crate::recall::index::{self, INDEX_VERSION, OCCURRENCES_COMPLETE_KEY, VERSION_KEY};
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

/// The ids of every fact `query`'s session and speaker filters could admit, when the
/// index lists them selectively (module docs); `None` when the query has neither filter,
/// the index cannot list them (one written before the occurrence entries, a name with no
/// terms) or every list is too long to pay.
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
    if query.sessions.is_none() && query.speaker.is_none() {
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
    Ok(match (by_session, by_speaker) {
        (Some(a), Some(b)) => Some(a.intersection(&b).copied().collect()),
        (a, b) => a.or(b),
    })
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
            let (k, _) = kv?;
            let fact = k
                .get(prefix.len()..)
                .and_then(record::be_u64)
                .ok_or_else(|| MemoryError::Corrupt {
                    what: "occurrence entry",
                    detail: format!("key of {} bytes", k.len()),
                })?;
            out.insert(fact);
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
