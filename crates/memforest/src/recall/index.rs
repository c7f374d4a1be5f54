//! The persistent per-tenant lexical index (table [`Table::Postings`], derived): postings
//! `t | term | 0x00 | fact id BE -> tf u32 LE | doc length u32 LE`, collection statistics
//! under `#`, knowledge-update slots `k | entity | 0x00 | attribute | 0x00 | fact id BE
//! -> start time i64 LE`, the occurrence index `o | session hash BE | fact id BE -> ()`
//! (the facts a session sourced, so forgetting a session reads only its facts), the cell
//! index `c | cell id BE | fact id BE -> ()` (the facts a MemCell sourced, so a query can
//! bring the reply to a question, `recall::reply`), the long-span entries `s | fact id BE
//! -> start i64 LE | end i64 LE` (the facts whose time spans more than [`LONG_SPAN`], so
//! a time filter can list the facts it admits, `recall::scope`), the markers saying those
//! three cover every fact (`O`, `C`, `S`), and the version of the terms under `V`
//! ([`INDEX_VERSION`]).
//! Written in
//! the same batch as the fact itself (so a fact is searchable the moment its ingest
//! returns) and removed with it; rebuilt from the facts, by the next query or ingest,
//! when the table was dropped (`Memory::drop_derived`) or holds terms of another
//! [`INDEX_VERSION`] ([`ensure`]).
//! Layout: `docs/format/memory.md`.

use memforest_engine::WriteBatch;
use memforest_tree::TimeRange;
use serde::{Deserialize, Serialize};

use crate::api::UPDATES_SESSION;
use crate::memory::extract::statements;
use crate::memory::record::{self, FactRecord, SessionRecord, SESSION_PREFIX};
use crate::memory::store::{Kv, Staged};
use crate::memory::text::normalize;
use crate::memory::MemoryError;
use crate::recall::bm25::{term_counts, terms};
use crate::recall::reader::Reader;
use crate::schema::Table;

/// Key of the collection statistics.
pub const STATS_KEY: &[u8] = b"#";
/// Prefix of term postings.
pub const TERM_PREFIX: u8 = b't';
/// Prefix of knowledge-update slots.
pub const SLOT_PREFIX: u8 = b'k';
/// Key of the tenant's latest session: `(last turn time, session id)`.
pub const LATEST_SESSION_KEY: &[u8] = b"L";
/// Prefix of occurrence entries (`o | session hash BE | fact id BE`, empty value).
pub const OCCURRENCE_PREFIX: u8 = b'o';
/// Prefix of cell entries (`c | cell id BE | fact id BE`, empty value).
pub const CELL_FACT_PREFIX: u8 = b'c';
/// Present (empty value) once the occurrence index covers every fact: written with the
/// first fact of an empty index; a store indexed before the occurrence index existed lacks
/// it until [`session_facts`] backfills.
pub const OCCURRENCES_COMPLETE_KEY: &[u8] = b"O";

/// Key of the index's version: [`INDEX_VERSION`] as u32 LE, written with the first fact of
/// an empty index.
pub const VERSION_KEY: &[u8] = b"V";
/// What the term postings hold: 3, the terms of `memory::text::tokenize` (UAX #29 words,
/// CJK bigrams) of a fact's text without its speaker prefix, and its participants' names
/// as [`speaker_term`]s. Version 2 indexed the `Speaker: ` prefix as text; an index
/// without [`VERSION_KEY`] holds version 1's terms (runs of alphanumerics: a CJK sentence
/// one term), which a query of this version cannot match and a fact's removal cannot
/// find; [`ensure`] rebuilds an index of any other version.
pub const INDEX_VERSION: u32 = 3;

/// Present (empty value) once the cell index covers every fact: written with the first
/// fact of an empty index; an index written before the cell index existed lacks it until
/// [`ensure`] backfills the cell entries.
pub const CELLS_COMPLETE_KEY: &[u8] = b"C";

/// Prefix of long-span entries (`s | fact id BE -> start i64 LE | end i64 LE`): the facts
/// whose time spans more than [`LONG_SPAN`]. A time filter lists the facts it may admit
/// from the fact time index (the others, by start) and these (`recall::scope`).
pub const SPAN_PREFIX: u8 = b's';

/// Present (empty value) once the long-span entries cover every fact: written with the
/// first fact of an empty index; an index written before them lacks it until [`ensure`]
/// backfills them.
pub const SPANS_COMPLETE_KEY: &[u8] = b"S";

/// A fact whose time spans more than this (microseconds: 7 days) has a long-span entry.
/// Most facts are a point in time (the turn's); few span longer (a fact said again on
/// another day, "last month"). A shorter span narrows what a time filter lists by start,
/// and lengthens the list of long ones every such query reads.
pub const LONG_SPAN: i64 = 7 * 86_400_000_000;

/// First character of a speaker field term (ASCII unit separator): the tokenizer never
/// yields it, so a word of a question or a fact's text never matches a speaker's name.
pub const SPEAKER_MARK: char = '\u{1f}';

/// The speaker field term of text term `term`: the postings of the facts one of whose
/// participants ([`FactRecord::participants`], the speaker for the heuristic extractor)
/// has `term` in their name. Queries use them to boost, never to find, facts
/// (`recall::accumulate`): a question naming Alice prefers Alice's facts among those that
/// share its other words, and does not match every fact she said.
#[must_use]
pub fn speaker_term(term: &str) -> String {
    let mut s = String::with_capacity(term.len() + 1);
    s.push(SPEAKER_MARK);
    s.push_str(term);
    s
}

/// Collection statistics: indexed facts and their total length in terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Indexed facts.
    pub docs: u64,
    /// Sum of their lengths, in terms.
    pub total_len: u64,
}

/// One posting: a fact, the term's frequency in it and its length in terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// Fact id.
    pub fact: u64,
    /// Term frequency.
    pub tf: u32,
    /// Fact length, in terms.
    pub len: u32,
}

/// `t | term | 0x00` (the prefix of a term's postings).
#[must_use]
pub fn term_prefix(term: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(term.len() + 2);
    k.push(TERM_PREFIX);
    k.extend_from_slice(term.as_bytes());
    k.push(0);
    k
}

/// The knowledge-update slots of a fact, normalized: a key `subject/attribute` (what
/// `memory::extract::statements` writes) is the slot `(subject, attribute)`; any other
/// attribute/domain/collection key gives `(entity, key)` for each entity (or `user` when
/// the fact names none). A key with the past mark ([`states_past`]) gives no slot.
#[must_use]
pub fn slots(rec: &FactRecord) -> Vec<String> {
    let mut entities: Vec<String> = rec.entities.iter().map(|e| normalize(e)).collect();
    if entities.is_empty() {
        entities.push(memforest_tree::USER_ENTITY.to_owned());
    }
    let mut out = Vec::new();
    let mut push = |e: &str, a: &str| {
        let s = format!("{e}\0{a}");
        if !e.is_empty() && !a.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    };
    for key in rec.keys.iter().filter(|k| !k.ends_with(statements::PAST)) {
        match key.split_once('/') {
            Some((subject, attribute)) => push(&normalize(subject), &normalize(attribute)),
            None => {
                let a = normalize(key);
                for e in &entities {
                    push(e, &a);
                }
            }
        }
    }
    out
}

/// True when fact `rec` states a past value ("used to": a key with the
/// [`statements::PAST`] mark): it is in no slot and never current.
#[must_use]
pub fn states_past(rec: &FactRecord) -> bool {
    rec.keys.iter().any(|k| k.ends_with(statements::PAST))
}

/// When fact `rec` was last stated: the latest start among its occurrences. It orders a
/// slot's facts, so saying an older value again ("I live in Paris" after "I moved to
/// Berlin") makes it current again, though its text merges into the older fact.
#[must_use]
pub fn slot_start(rec: &FactRecord) -> i64 {
    rec.occurrences
        .iter()
        .map(|o| o.time.0)
        .max()
        .unwrap_or(rec.time.0)
}

/// Stages fact `id`'s slot entries with its current [`slot_start`] (after its occurrences
/// changed).
pub fn stamp_slots(st: &mut Staged<'_>, id: u64, rec: &FactRecord) {
    for slot in slots(rec) {
        let key = with_id(slot_prefix(&slot), id);
        st.put(
            Table::Postings,
            &key,
            slot_start(rec).to_le_bytes().to_vec(),
        );
    }
}

/// `k | slot | 0x00`.
#[must_use]
pub fn slot_prefix(slot: &str) -> Vec<u8> {
    let mut k = record::prefixed(SLOT_PREFIX, slot.as_bytes());
    k.push(0);
    k
}

/// The term and fact of a term posting's key (`t | term | 0x00 | fact BE`); `None` for
/// any other key of the table.
#[must_use]
pub fn term_posting_key(key: &[u8]) -> Option<(&str, u64)> {
    let rest = key.strip_prefix(&[TERM_PREFIX])?;
    let (term, fact) = rest.split_at(rest.len().checked_sub(9)?);
    let (&0, fact) = fact.split_first()? else {
        return None;
    };
    Some((std::str::from_utf8(term).ok()?, record::be_u64(fact)?))
}

/// The posting of `fact` from its value (`tf: u32 LE | len: u32 LE`); `None` when
/// malformed.
#[must_use]
pub fn posting(fact: u64, value: &[u8]) -> Option<Posting> {
    let word = |at: usize| {
        value
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    };
    Some(Posting {
        fact,
        tf: word(0)?,
        len: word(4)?,
    })
}

fn with_id(mut prefix: Vec<u8>, id: u64) -> Vec<u8> {
    prefix.extend_from_slice(&id.to_be_bytes());
    prefix
}

/// `o | session hash BE` (the prefix of `session`'s occurrence entries; sessions whose
/// ids hash alike share it, so callers check each fact's occurrences).
#[must_use]
pub fn occurrence_prefix(session: &str) -> Vec<u8> {
    record::prefixed(
        OCCURRENCE_PREFIX,
        &record::session_hash(session).to_be_bytes(),
    )
}

/// `c | cell id BE` (the prefix of cell `cell`'s entries).
#[must_use]
pub fn cell_prefix(cell: u64) -> Vec<u8> {
    record::prefixed(CELL_FACT_PREFIX, &cell.to_be_bytes())
}

/// Stages the occurrence entry saying `session` sourced fact `fact` and the cell entry
/// saying cell `cell` (of `session`) did (called for a fact that gains an occurrence:
/// [`add_fact`] covers the occurrences of a new fact).
pub fn note_occurrence(st: &mut Staged<'_>, session: &str, cell: u64, fact: u64) {
    st.put(
        Table::Postings,
        &with_id(occurrence_prefix(session), fact),
        Vec::new(),
    );
    note_cell(st, cell, fact);
}

/// Stages the cell entry saying cell `cell` sourced fact `fact`.
fn note_cell(st: &mut Staged<'_>, cell: u64, fact: u64) {
    st.put(
        Table::Postings,
        &with_id(cell_prefix(cell), fact),
        Vec::new(),
    );
}

/// A `Facts` row decoded: `(fact id, record)`.
///
/// # Errors
/// [`MemoryError::Invariant`] for a short key; a corrupt record.
fn fact_row(key: &[u8], value: &[u8]) -> Result<(u64, FactRecord), MemoryError> {
    let id = record::be_u64(key).ok_or(MemoryError::Invariant("short fact key"))?;
    Ok((id, record::decode(value, "fact")?))
}

/// Key of fact `fact`'s long-span entry.
fn span_key(fact: u64) -> Vec<u8> {
    with_id(vec![SPAN_PREFIX], fact)
}

/// Whether a fact of time `time` (start, end; an end before the start counts as the
/// start) has a long-span entry.
fn is_long(time: (i64, i64)) -> bool {
    time.1.max(time.0).saturating_sub(time.0) > LONG_SPAN
}

/// Stages fact `fact`'s long-span entry for its time changing from `before` (`None`: a
/// new fact) to `after` (`None`: removed): written when `after` is long, deleted when
/// only `before` was.
pub fn note_span(
    st: &mut Staged<'_>,
    fact: u64,
    before: Option<(i64, i64)>,
    after: Option<(i64, i64)>,
) {
    match after {
        Some(t) if is_long(t) => {
            let mut v = Vec::with_capacity(16);
            v.extend_from_slice(&t.0.to_le_bytes());
            v.extend_from_slice(&t.1.max(t.0).to_le_bytes());
            st.put(Table::Postings, &span_key(fact), v);
        }
        _ if before.is_some_and(is_long) => st.delete(Table::Postings, &span_key(fact)),
        _ => {}
    }
}

/// A long-span entry decoded: `(fact id, its time)`.
///
/// # Errors
/// [`MemoryError::Corrupt`] for a key or value of the wrong length.
pub fn span_entry(key: &[u8], value: &[u8]) -> Result<(u64, TimeRange), MemoryError> {
    let fact = entry_fact(key, 1, "long-span entry")?;
    let word = |at: usize| {
        value
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes)
    };
    match (word(0), word(8)) {
        (Some(start), Some(end)) => Ok((fact, TimeRange { start, end })),
        _ => Err(MemoryError::Corrupt {
            what: "long-span entry",
            detail: format!("value of {} bytes", value.len()),
        }),
    }
}

/// The fact id that ends an entry key after its `prefix_len` bytes of prefix (occurrence,
/// cell and long-span entries, fact time index keys); `what` names the entry in the error.
///
/// # Errors
/// [`MemoryError::Corrupt`] for a key too short to hold one.
pub fn entry_fact(key: &[u8], prefix_len: usize, what: &'static str) -> Result<u64, MemoryError> {
    key.get(prefix_len..)
        .and_then(record::be_u64)
        .ok_or_else(|| MemoryError::Corrupt {
            what,
            detail: format!("key of {} bytes", key.len()),
        })
}

/// Stages the removal of the entry saying `session` sourced fact `fact`.
pub fn drop_occurrence(st: &mut Staged<'_>, session: &str, fact: u64) {
    st.delete(Table::Postings, &with_id(occurrence_prefix(session), fact));
}

/// Stages the removal of the entry saying cell `cell` sourced fact `fact`.
pub fn drop_cell(st: &mut Staged<'_>, cell: u64, fact: u64) {
    st.delete(Table::Postings, &with_id(cell_prefix(cell), fact));
}

/// The ids of the facts cell `cell` sourced, in id order (cell entries; none yet for the
/// facts of an index written before the cell index, until [`ensure`] backfills it).
///
/// # Errors
/// Engine read errors; a corrupt entry key.
pub fn cell_facts(r: &Reader<'_>, cell: u64) -> Result<Vec<u64>, MemoryError> {
    let prefix = cell_prefix(cell);
    r.scan_prefix(Table::Postings, &prefix)?
        .map(|kv| entry_fact(&kv?.0, prefix.len(), "cell entry"))
        .collect()
}

/// The ids of the facts with an occurrence in `session` (a superset when another session
/// id hashes alike), in id order. Reads the occurrence index; on a store indexed before it
/// existed, scans every fact once and stages the backfilled index (committed with the
/// caller's batch). Call with the forest lock held.
///
/// # Errors
/// Engine read errors; corrupt fact records.
pub fn session_facts(st: &mut Staged<'_>, session: &str) -> Result<Vec<u64>, MemoryError> {
    if st.get(Table::Postings, OCCURRENCES_COMPLETE_KEY)?.is_some() {
        let prefix = occurrence_prefix(session);
        return st
            .scan_prefix(Table::Postings, &prefix)?
            .iter()
            .map(|(k, _)| entry_fact(k, prefix.len(), "occurrence entry"))
            .collect();
    }
    let mut out = Vec::new();
    for (k, v) in st.scan_prefix(Table::Facts, &[])? {
        let (id, rec) = fact_row(&k, &v)?;
        for o in &rec.occurrences {
            note_occurrence(st, &o.session, o.cell, id);
        }
        if rec.occurrences.iter().any(|o| o.session == session) {
            out.push(id);
        }
    }
    st.put(Table::Postings, OCCURRENCES_COMPLETE_KEY, Vec::new());
    Ok(out)
}

fn read_stats(bytes: Option<Vec<u8>>) -> Result<IndexStats, MemoryError> {
    bytes.map_or(Ok(IndexStats::default()), |b| {
        record::decode(&b, "postings stats")
    })
}

/// Stages the postings, slots and statistics of fact `id` (its text: `rec.text`).
///
/// # Errors
/// Engine read errors; a corrupt statistics record.
pub fn add_fact(st: &mut Staged<'_>, id: u64, rec: &FactRecord) -> Result<(), MemoryError> {
    change(st, id, rec, true)
}

/// Stages the removal of everything [`add_fact`] wrote for fact `id`.
///
/// # Errors
/// As [`add_fact`].
pub fn remove_fact(st: &mut Staged<'_>, id: u64, rec: &FactRecord) -> Result<(), MemoryError> {
    change(st, id, rec, false)
}

/// What a fact's text terms are taken from: its text without the `Speaker: ` prefix the
/// heuristic extractor writes (the speaker is indexed as a field, [`speaker_term`]) and
/// the question words of its knowledge-update attributes
/// (`memory::extract::statements::index_words`). `speaker`: the terms of the first
/// participant's name.
fn indexed_text(rec: &FactRecord, speaker: Option<&[String]>) -> String {
    // The prefix is the first participant's name as the extractor wrote it, which may
    // differ in spacing: compare their terms.
    let text = speaker
        .and_then(|speaker| {
            let (head, rest) = rec.text.split_once(": ")?;
            (terms(head) == speaker).then_some(rest)
        })
        .unwrap_or(&rec.text);
    let extra = statements::index_words(&rec.keys);
    if extra.is_empty() {
        text.to_owned()
    } else {
        format!("{text} {extra}")
    }
}

/// The postings of fact `rec`: `(term, tf)` of its text terms ([`indexed_text`]), then
/// its participants' name terms as [`speaker_term`]s (tf 1 each), and its length (of the
/// text terms only).
fn fact_terms(rec: &FactRecord) -> (Vec<(String, u32)>, u32) {
    let names: Vec<Vec<String>> = rec.participants.iter().map(|p| terms(p)).collect();
    let mut counts = term_counts(&indexed_text(rec, names.first().map(Vec::as_slice)));
    let len: u32 = counts.iter().map(|c| c.1).sum();
    let mut names: Vec<String> = names.iter().flatten().map(|t| speaker_term(t)).collect();
    names.sort_unstable();
    names.dedup();
    counts.extend(names.into_iter().map(|t| (t, 1)));
    (counts, len)
}

fn change(st: &mut Staged<'_>, id: u64, rec: &FactRecord, add: bool) -> Result<(), MemoryError> {
    let (counts, len) = fact_terms(rec);
    for (term, tf) in &counts {
        let key = with_id(term_prefix(term), id);
        if add {
            let mut v = Vec::with_capacity(8);
            v.extend_from_slice(&tf.to_le_bytes());
            v.extend_from_slice(&len.to_le_bytes());
            st.put(Table::Postings, &key, v);
        } else {
            st.delete(Table::Postings, &key);
        }
    }
    for slot in slots(rec) {
        let key = with_id(slot_prefix(&slot), id);
        if add {
            st.put(
                Table::Postings,
                &key,
                slot_start(rec).to_le_bytes().to_vec(),
            );
        } else {
            st.delete(Table::Postings, &key);
        }
    }
    for o in &rec.occurrences {
        if add {
            note_occurrence(st, &o.session, o.cell, id);
        } else {
            drop_occurrence(st, &o.session, id);
            drop_cell(st, o.cell, id);
        }
    }
    if add {
        note_span(st, id, None, Some(rec.time));
    } else {
        note_span(st, id, Some(rec.time), None);
    }
    let stats_bytes = st.get(Table::Postings, STATS_KEY)?;
    if add && stats_bytes.is_none() {
        st.put(
            Table::Postings,
            VERSION_KEY,
            INDEX_VERSION.to_le_bytes().to_vec(),
        );
    }
    let mut stats = read_stats(stats_bytes)?;
    if add && stats.docs == 0 {
        st.put(Table::Postings, OCCURRENCES_COMPLETE_KEY, Vec::new());
        st.put(Table::Postings, CELLS_COMPLETE_KEY, Vec::new());
        st.put(Table::Postings, SPANS_COMPLETE_KEY, Vec::new());
    }
    if add {
        stats.docs += 1;
        stats.total_len += u64::from(len);
    } else {
        stats.docs = stats.docs.saturating_sub(1);
        stats.total_len = stats.total_len.saturating_sub(u64::from(len));
    }
    st.put(Table::Postings, STATS_KEY, record::encode(&stats)?);
    Ok(())
}

/// Records that `session`'s last turn is at `last_time` (microseconds); keeps the latest
/// session by `(last_time, id)` under [`LATEST_SESSION_KEY`] (the short-term memory's
/// session, found without scanning the sessions). The session of `Memory::update`'s texts
/// ([`UPDATES_SESSION`]) is no conversation and is never the latest.
///
/// # Errors
/// Engine read errors; a corrupt record.
pub fn note_session(st: &mut Staged<'_>, session: &str, last_time: i64) -> Result<(), MemoryError> {
    if session == UPDATES_SESSION {
        return Ok(());
    }
    let cur: Option<(i64, String)> = st
        .get(Table::Postings, LATEST_SESSION_KEY)?
        .map(|b| record::decode(&b, "latest session"))
        .transpose()?;
    if cur
        .as_ref()
        .is_none_or(|c| (last_time, session) >= (c.0, c.1.as_str()))
    {
        let v = record::encode(&(last_time, session.to_owned()))?;
        st.put(Table::Postings, LATEST_SESSION_KEY, v);
    }
    Ok(())
}

/// The latest session id at the reader's seqno (`None` when no session was recorded).
///
/// # Errors
/// Engine read errors; a corrupt record.
pub fn latest_session(r: &Reader<'_>) -> Result<Option<String>, MemoryError> {
    r.get(Table::Postings, LATEST_SESSION_KEY)?
        .map(|b| record::decode::<(i64, String)>(&b, "latest session").map(|x| x.1))
        .transpose()
}

/// The latest session id as staged in `st` (the forget path's view of
/// [`latest_session`]).
///
/// # Errors
/// Engine read errors; a corrupt record.
pub fn latest_session_staged(st: &Staged<'_>) -> Result<Option<String>, MemoryError> {
    st.get(Table::Postings, LATEST_SESSION_KEY)?
        .map(|b| record::decode::<(i64, String)>(&b, "latest session").map(|x| x.1))
        .transpose()
}

/// The collection statistics at the reader's seqno.
///
/// # Errors
/// Engine read errors; a corrupt record.
pub fn stats(r: &Reader<'_>) -> Result<IndexStats, MemoryError> {
    read_stats(r.get(Table::Postings, STATS_KEY)?.map(|b| b.to_vec()))
}

/// Every posting of `term`.
///
/// # Errors
/// Engine read errors; a malformed posting (named by its key length).
pub fn postings(r: &Reader<'_>, term: &str) -> Result<Vec<Posting>, MemoryError> {
    let prefix = term_prefix(term);
    let mut out = Vec::new();
    for kv in r.scan_prefix(Table::Postings, &prefix)? {
        let (k, v) = kv?;
        match k
            .get(prefix.len()..)
            .and_then(record::be_u64)
            .and_then(|fact| posting(fact, &v))
        {
            Some(p) => out.push(p),
            None => {
                return Err(MemoryError::Corrupt {
                    what: "posting",
                    detail: format!("key of {} bytes, value of {} bytes", k.len(), v.len()),
                })
            }
        }
    }
    Ok(out)
}

/// The facts in `slot` with their start times.
///
/// # Errors
/// As [`postings`].
pub fn slot_members(r: &Reader<'_>, slot: &str) -> Result<Vec<(u64, i64)>, MemoryError> {
    Ok(slot_entries(r, &slot_prefix(slot))?
        .into_iter()
        .map(|(_, fact, start)| (fact, start))
        .collect())
}

/// Every slot entry whose key starts with `prefix` (`[SLOT_PREFIX]` for all of them), as
/// `(slot, fact id, start)`; the slot is `subject \0 attribute` (lossy UTF-8).
///
/// # Errors
/// Engine errors; [`MemoryError::Corrupt`] for an entry whose key or value is cut short.
pub fn slot_entries(r: &Reader<'_>, prefix: &[u8]) -> Result<Vec<(String, u64, i64)>, MemoryError> {
    let mut out = Vec::new();
    for kv in r.scan_prefix(Table::Postings, prefix)? {
        let (k, v) = kv?;
        // `k | slot | 0x00 | fact id BE`
        let split = k.len().checked_sub(8).filter(|&at| at >= 2);
        let slot = split.and_then(|at| k.get(1..at - 1));
        let fact = split.and_then(|at| k.get(at..)).and_then(record::be_u64);
        let start = v
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(i64::from_le_bytes);
        match (slot, fact, start) {
            (Some(slot), Some(f), Some(s)) => {
                out.push((String::from_utf8_lossy(slot).into_owned(), f, s));
            }
            _ => {
                return Err(MemoryError::Corrupt {
                    what: "slot entry",
                    detail: format!("key of {} bytes, value of {} bytes", k.len(), v.len()),
                })
            }
        }
    }
    Ok(out)
}

/// Rebuilds `tenant`'s index from its facts when it is not of [`INDEX_VERSION`]: when the
/// statistics record is missing but facts exist (after `Memory::drop_derived`), or when an
/// index of another version exists (it is deleted first, in its own batch: a crash
/// between the two leaves no index, which the next call rebuilds). An index of this
/// version without [`CELLS_COMPLETE_KEY`] or [`SPANS_COMPLETE_KEY`] gets the cell or
/// long-span entries of every fact, unless the store is read-only (its queries then bring
/// no replies, and list no facts for a time filter, until a writer backfills).
/// Otherwise reads two keys and returns. Returns whether it wrote. Call with the memory
/// layer's forest lock held so no ingest commits meanwhile.
///
/// # Errors
/// Engine errors; corrupt fact records.
pub fn ensure(kv: &Kv, tenant: &memforest_engine::TenantId) -> Result<bool, MemoryError> {
    let version = kv.get(tenant, Table::Postings, VERSION_KEY)?;
    if version.as_deref() == Some(&INDEX_VERSION.to_le_bytes()[..]) {
        return backfill(kv, tenant);
    }
    let stale = kv.get(tenant, Table::Postings, STATS_KEY)?.is_some();
    if stale {
        let mut b = WriteBatch::new();
        b.delete_table(tenant, Table::Postings.into());
        kv.write(&b, memforest_wal::Durability::Buffered)?;
        crate::recall::postings::bump_all();
    }
    let facts = kv.scan_prefix(tenant, Table::Facts, &[])?;
    if facts.is_empty() {
        return Ok(stale);
    }
    let mut st = Staged::new(kv, tenant.clone());
    for (_, v) in kv.scan_prefix(tenant, Table::Sessions, &[SESSION_PREFIX])? {
        let s: SessionRecord = record::decode(&v, "session")?;
        note_session(&mut st, &s.id, s.last_time)?;
    }
    for (k, v) in facts {
        let (id, rec) = fact_row(&k, &v)?;
        add_fact(&mut st, id, &rec)?;
    }
    st.commit(memforest_wal::Durability::Buffered)?;
    Ok(true)
}

/// Writes the cell entries and the long-span entries of every fact of `tenant`, each kind
/// with its marker ([`CELLS_COMPLETE_KEY`], [`SPANS_COMPLETE_KEY`]) unless the marker is
/// there, and nothing on a read-only store (see [`ensure`]). Returns whether it wrote.
///
/// # Errors
/// Engine errors; corrupt fact records.
fn backfill(kv: &Kv, tenant: &memforest_engine::TenantId) -> Result<bool, MemoryError> {
    if kv.is_read_only() {
        return Ok(false);
    }
    let missing =
        |key| -> Result<bool, MemoryError> { Ok(kv.get(tenant, Table::Postings, key)?.is_none()) };
    let (cells, spans) = (missing(CELLS_COMPLETE_KEY)?, missing(SPANS_COMPLETE_KEY)?);
    if !cells && !spans {
        return Ok(false);
    }
    let mut st = Staged::new(kv, tenant.clone());
    for (k, v) in kv.scan_prefix(tenant, Table::Facts, &[])? {
        let (id, rec) = fact_row(&k, &v)?;
        if cells {
            for o in &rec.occurrences {
                note_cell(&mut st, o.cell, id);
            }
        }
        if spans {
            note_span(&mut st, id, None, Some(rec.time));
        }
    }
    for (key, wanted) in [(CELLS_COMPLETE_KEY, cells), (SPANS_COMPLETE_KEY, spans)] {
        if wanted {
            st.put(Table::Postings, key, Vec::new());
        }
    }
    st.commit(memforest_wal::Durability::Buffered)?;
    Ok(true)
}
