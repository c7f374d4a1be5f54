//! Source-turn fusion: the last ranking step of `Memory::query`.
//!
//! The heuristic extractor cuts a turn into one fact per sentence, so the words a question
//! shares with one utterance are often spread over sibling facts ("Nah, no changes for
//! me. Still enjoying my soda and candy, although I know it's not the best habit to
//! have." answers "What habit is Sam trying to change in terms of diet?" with `change` in
//! one sentence and `habit` in the other), and ranking sentences alone loses to BM25 over
//! whole turns. Fusion goes up one level of the memory, from each pooled fact to the raw
//! turns it was extracted from (its occurrences' cells, table `Sessions`, and their turns,
//! table `Turns`), and scores every such turn by combining both granularities (passage
//! and document evidence, Callan, "Passage-level evidence in document retrieval", SIGIR
//! 1994) and the turns next to it in its session:
//!
//! `turn score = BM25(turn text) + NEIGHBOUR_WEIGHT * max BM25(turn just before or just
//! after it) + PASSAGE_WEIGHT * max over the turn's pooled facts of the fact's own BM25
//! score`, an assistant's neighbouring turn counting [`ASSISTANT_NEIGHBOUR_WEIGHT`] of
//! its BM25 unless the question asks what the assistant said
//!
//! A pooled cell is read with the turn just before it and the turn just after it in its
//! session, so the neighbours of its first and last turns are known even when they belong
//! to other cells. The turn's BM25 uses the fact collection's idf and, as average length,
//! the mean length of the pooled cells' turns (the tenant keeps fact statistics, not turn
//! statistics). A fact's fused score is the best score of its source turns; facts of the
//! same turn keep their own order (own score, then id).
//!
//! Temporal questions ([`Asked::temporal`]: "when ...", "how long ago ...", "what year
//! ...", `什么时候`, `いつ`, `언제` ...) add [`TIME_BONUS`] times the best turn score to facts that carry a date or
//! relative time phrase (the extractor's time mentions, found again in the fact text):
//! the sentence that says "last week" or "May 2022" dates the event the question asks
//! about, its undated paraphrases do not. A question that names a calendar day or month
//! with its year ([`Asked::named_times`]: "in August 2023") adds [`NAMED_TIME_BONUS`]
//! times the best score to facts said then (a week either side) that share a word with
//! it.

use std::collections::{HashMap, HashSet};

use crate::api::UPDATES_SESSION;
use crate::memory::extract::dates;
use crate::memory::extract::Origin;
use crate::memory::record::{self, CellRecord, FactRecord, TurnRecord, CELL_PREFIX};
use crate::memory::session::Role;
use crate::memory::MemoryError;
use crate::recall::bm25::Bm25;
use crate::recall::hybrid;
use crate::recall::intent::Asked;
use crate::recall::page::Terms;
use crate::recall::reader::Reader;
use crate::recall::reply::{self, Reply};
use crate::recall::turn_cache::{CachedCell, CachedTurn, TurnCache};
use crate::schema::Table;

/// Facts pooled for fusion per fact wanted (`k + beam`): the best `POOL_FACTOR * (k +
/// beam)` facts reached, by their own score, are taken to their source turns (each
/// pooled cell costs a few point reads and the tokenizing of its turns, so query time
/// grows linearly with it).
pub const POOL_FACTOR: usize = 2;

/// Weight of the best sentence's score in a turn's score (see the module docs).
pub const PASSAGE_WEIGHT: f32 = 0.5;

/// Weight of the time bonus of [`Asked::temporal`] questions, as a fraction of the best
/// turn score of the query (see the module docs).
pub const TIME_BONUS: f32 = 0.25;

/// Length normalisation `b` of the turn-level BM25: half Lucene's 0.75, because a turn's
/// length says less about its topicality than a sentence's (chatty turns bury one
/// informative clause among pleasantries).
pub const TURN_B: f32 = 0.375;

/// Weight of the bonus of a fact said at a calendar time the question names
/// ([`Asked::names_time_of`]), as a fraction of the best score of the query, when its
/// turn, the turns next to it or its own text share a word with the question: "What
/// injury did Evan suffer from in August 2023?" is answered by what Evan said then
/// ("Twisted my knee last Friday"), which shares no word with the date. A fact found
/// only by vector gets none, so the nearest facts of that time do not crowd out the
/// answers of other times.
pub const NAMED_TIME_BONUS: f32 = 0.5;

/// Weight of the better of a turn's neighbours (the turns just before and just after it in
/// its session, in its cell or not; the turns of `Memory::update`'s session have none) in
/// the turn's score: the turn that answers is often next to the one that asks ("Did they
/// sign it for a special reason?" / "They signed it to show our friendship"), sharing the
/// question's words only with it.
pub const NEIGHBOUR_WEIGHT: f32 = 0.5;

/// Weight of a fact the assistant stated ([`Origin::Assistant`]) in its final score,
/// unless the question asks what the assistant said ([`Asked::about_the_assistant`]):
/// the user's own statements are the memory, and an assistant's lists of tips and ideas,
/// often longer and richer in words, would crowd them out. The assistant's facts and
/// turns stay stored and found; they rank after the user's of a similar score.
pub const ASSISTANT_WEIGHT: f32 = 0.5;

/// Weight of an assistant's turn in the neighbour score of the turns next to it, unless
/// the question asks what the assistant said: without it the assistant's words, whose
/// facts' final scores [`ASSISTANT_WEIGHT`] weights, lifted every user turn next to it
/// at full weight, so in a session of short user prompts and long assistant replies the
/// user's turns all ranked before the one reply that answers ("What was the designation
/// on my jumpsuit?" in a role-play the assistant narrates). Between 1 and
/// [`ASSISTANT_WEIGHT`]: the assistant's reply to a user's statement still helps find
/// that statement. Chosen on LongMemEval (`docs/retrieval-quality.md`).
pub const ASSISTANT_NEIGHBOUR_WEIGHT: f32 = 0.75;

/// One pooled fact: id, own BM25 score, record.
pub type Pooled<'a> = (u64, f32, &'a FactRecord);

/// A source turn: `(session, turn id)`.
type TurnKey<'a> = (&'a str, &'a str);

/// The turns of the pooled facts' cells and their neighbours, by cell id, each with its
/// key when it is a pooled source turn (`None` for the others), in turn order (see
/// [`load_cells`]).
type Cells<'a> = HashMap<u64, (CachedCell, Vec<Option<TurnKey<'a>>>)>;

/// Every occurrence's source turns of `rec`, with the cell holding them.
fn turns_of(rec: &FactRecord) -> impl Iterator<Item = (TurnKey<'_>, u64)> {
    rec.occurrences.iter().flat_map(|o| {
        o.turns
            .iter()
            .map(move |t| ((o.session.as_str(), t.as_str()), o.cell))
    })
}

/// Where `load_cells` keeps turn term counts: the cache and the generation read with the
/// query's seqno (`None` for a snapshot read, which bypasses the cache).
pub type TurnCaching<'c> = Option<(&'c TurnCache, u64)>;

/// The turns of cell `cell` that exist and the turns just before and just after it in its
/// session (term counts of `speaker: text`; [`CachedTurn::cell`] tells them apart), in
/// turn order: from the cache when `caching` allows it, else read (the cell record, then
/// each turn), tokenized and (with `caching`) cached; `None` when the cell is gone.
///
/// A cell whose turn after does not exist is not cached: a later ingest of its session
/// may still write it.
///
/// # Errors
/// Engine errors; a corrupt cell or turn record.
fn load_cell(
    r: &Reader<'_>,
    cell: u64,
    caching: TurnCaching<'_>,
) -> Result<Option<CachedCell>, MemoryError> {
    if let Some(turns) = caching.and_then(|(c, g)| c.get(r.tenant(), cell, g)) {
        return Ok(Some(turns));
    }
    let key = record::prefixed(CELL_PREFIX, &cell.to_be_bytes());
    let Some(bytes) = r.get(Table::Sessions, &key)? else {
        return Ok(None);
    };
    let c: CellRecord = record::decode(&bytes, "cell")?;
    let end = c.first.saturating_add(c.count);
    let mut turns = Vec::new();
    let mut followed = false;
    for i in c.first.saturating_sub(1)..=end {
        let Some(bytes) = r.get(Table::Turns, &record::turn_key(&c.session, i))? else {
            continue;
        };
        let t: TurnRecord = record::decode(&bytes, "turn")?;
        followed |= i == end;
        let holder = if i < c.first {
            record::cell_id(&c.session, c.index.saturating_sub(1))
        } else if i < end {
            cell
        } else {
            record::cell_id(&c.session, c.index.saturating_add(1))
        };
        turns.push(CachedTurn {
            terms: Terms::of(&format!("{}: {}", t.speaker, t.text)),
            cell: holder,
            index: (c.session != UPDATES_SESSION).then_some(i),
            asks: reply::asks(&t.text),
            role: t.role,
            id: t.id,
        });
    }
    let turns: CachedCell = turns.into();
    if let Some((c, g)) = caching.filter(|_| followed) {
        c.insert(r.tenant(), cell, g, &turns);
    }
    Ok(Some(turns))
}

/// The turns of every cell holding a source turn of a pooled fact (see [`Cells`]), each
/// cell read once however many pooled facts share it, through [`load_cell`]. Cells or
/// turns gone after a forget are left out.
///
/// # Errors
/// Engine errors; corrupt cell or turn records.
fn load_cells<'a>(
    r: &Reader<'_>,
    pool: &[Pooled<'a>],
    caching: TurnCaching<'_>,
) -> Result<Cells<'a>, MemoryError> {
    let mut wanted: HashMap<u64, Vec<TurnKey<'a>>> = HashMap::new();
    for (_, _, rec) in pool {
        for (key, cell) in turns_of(rec) {
            let keys = wanted.entry(cell).or_default();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    let mut out = HashMap::new();
    for (cell, keys) in wanted {
        let Some(turns) = load_cell(r, cell, caching)? else {
            continue;
        };
        let pooled = turns
            .iter()
            .map(|t| {
                (t.cell == cell)
                    .then(|| keys.iter().find(|k| k.1 == t.id).copied())
                    .flatten()
            })
            .collect();
        out.insert(cell, (turns, pooled));
    }
    Ok(out)
}

/// What [`rank`] returns.
#[derive(Debug)]
pub struct Ranking {
    /// The pooled facts by fused score, best first (ties by own score, then id): `(id,
    /// fused score)`.
    pub order: Vec<(u64, f32)>,
    /// The reply to each pooled fact one of whose source turns asks (`recall::reply`): the
    /// next turn of its session, when a user said it, or the assistant and the question
    /// asks what the assistant said.
    pub replies: HashMap<u64, Reply>,
}

/// Ranks the pooled facts by fused score and finds their replies (see [`Ranking`]).
/// `bm`: the fact collection's BM25; `terms`: the query's `(term hash, idf)`; `dense`:
/// for a hybrid or embedding query, each pooled fact's cosine to the query and the dense
/// weight, combined with the lexical score by `recall::hybrid` before the time bonus;
/// `asked`: what the question asks for (a time adds the time bonus; unless it asks what
/// the assistant said, the assistant's facts are weighted by [`ASSISTANT_WEIGHT`] and an
/// assistant's turn is no reply); `caching`: where turn term counts are cached (see
/// [`TurnCaching`]; the ranking is the same either way).
///
/// # Errors
/// As the loads of the source turns: engine errors, corrupt records.
pub fn rank(
    r: &Reader<'_>,
    bm: Bm25,
    terms: &[(u64, f32)],
    pool: &[Pooled<'_>],
    dense: Option<(&HashMap<u64, f32>, f32)>,
    asked: &Asked,
    caching: TurnCaching<'_>,
) -> Result<Ranking, MemoryError> {
    let cells = load_cells(r, pool, caching)?;
    let (count, total) = cells
        .iter()
        .flat_map(|(cell, (turns, _))| turns.iter().filter(move |t| t.cell == *cell))
        .fold((0u64, 0u64), |(n, l), t| {
            (n + 1, l + u64::from(t.terms.len))
        });
    let doc = Bm25 {
        b: TURN_B,
        avg_len: Bm25::new(count, total).avg_len,
        ..bm
    };
    // Document score of every turn read, and of the better of each pooled turn's
    // neighbours; the reply to each pooled turn that asks.
    let mut turn_score: HashMap<TurnKey<'_>, f32> = HashMap::new();
    let mut turn_reply: HashMap<TurnKey<'_>, Reply> = HashMap::new();
    for (turns, keys) in cells.values() {
        let scores: Vec<f32> = turns
            .iter()
            .map(|t| doc.score_terms(terms, &t.terms))
            .collect();
        for (i, key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            let own = scores.get(i).copied().unwrap_or(0.0);
            let Some(turn) = turns.get(i) else { continue };
            let before = i
                .checked_sub(1)
                .and_then(|j| turns.get(j).zip(scores.get(j)));
            let after = turns.get(i + 1).zip(scores.get(i + 1));
            let neighbour = [
                before.filter(|(b, _)| b.precedes(turn)),
                after.filter(|(a, _)| turn.precedes(a)),
            ]
            .into_iter()
            .flatten()
            .map(|(n, s)| match n.role {
                Role::Assistant if !asked.about_the_assistant => ASSISTANT_NEIGHBOUR_WEIGHT * s,
                _ => *s,
            })
            .fold(0.0, f32::max);
            turn_score.insert(*key, own + NEIGHBOUR_WEIGHT * neighbour);
            let next = after.map(|(a, _)| a).filter(|a| {
                turn.asks
                    && turn.precedes(a)
                    && (a.role == Role::User
                        || (a.role == Role::Assistant && asked.about_the_assistant))
            });
            if let Some(next) = next {
                let reply = Reply {
                    session: key.0.to_owned(),
                    cell: next.cell,
                    turn: next.id.clone(),
                };
                turn_reply.insert(*key, reply);
            }
        }
    }
    let replies = pool
        .iter()
        .filter_map(|(id, _, rec)| {
            turns_of(rec)
                .find_map(|(k, _)| turn_reply.get(&k))
                .map(|reply| (*id, reply.clone()))
        })
        .collect();
    let mut passage: HashMap<TurnKey<'_>, f32> = HashMap::new();
    for (_, own, rec) in pool {
        for (key, _) in turns_of(rec) {
            let p = passage.entry(key).or_default();
            *p = p.max(*own);
        }
    }
    for (key, p) in passage {
        *turn_score.entry(key).or_default() += PASSAGE_WEIGHT * p;
    }
    let lexical: Vec<(u64, f32)> = pool
        .iter()
        .map(|(id, own, rec)| {
            let fused = turns_of(rec)
                .filter_map(|(k, _)| turn_score.get(&k).copied())
                .fold(*own, f32::max);
            (*id, fused)
        })
        .collect();
    // Facts whose turn, turns next to it or own text share a word with the question
    // (or a related word, `recall::expand`).
    let worded: HashSet<u64> = lexical
        .iter()
        .filter(|(_, l)| *l > 0.0)
        .map(|(id, _)| *id)
        .collect();
    let scores: HashMap<u64, f32> = match dense {
        Some((cosines, weight)) => hybrid::combine(&lexical, cosines, weight)
            .into_iter()
            .collect(),
        None => lexical.into_iter().collect(),
    };
    let best = scores.values().copied().fold(0.0, f32::max);
    let mut out: Vec<(u64, f32, f32)> = pool
        .iter()
        .map(|(id, own, rec)| {
            let mut fused = scores.get(id).copied().unwrap_or(0.0);
            if asked.temporal && !dates::find(&rec.text, 0).is_empty() {
                fused += TIME_BONUS * best;
            }
            if worded.contains(id) && asked.names_time_of(rec) {
                fused += NAMED_TIME_BONUS * best;
            }
            if rec.origin == Origin::Assistant && !asked.about_the_assistant {
                fused *= ASSISTANT_WEIGHT;
            }
            (*id, fused, *own)
        })
        .collect();
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then(b.2.total_cmp(&a.2))
            .then(a.0.cmp(&b.0))
    });
    Ok(Ranking {
        order: out.into_iter().map(|(id, fused, _)| (id, fused)).collect(),
        replies,
    })
}
