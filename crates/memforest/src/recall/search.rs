//! `Memory::query`: candidate facts from the postings and the fact vectors, forest
//! recall, beam browse, knowledge updates, time filter, short-term memory.
//!
//! 1. Every query term's postings give BM25 scores; the best `k + beam` facts (within the
//!    filters) are the lexical candidates. A term that is in a speaker's name adds its
//!    speaker field score ([`index::speaker_term`]) to the facts its other terms found.
//!    In hybrid and embedding modes the query's related terms join at a lower weight
//!    ([`crate::recall::expand`]). Only these terms' postings are read. A session,
//!    speaker or time filter that few facts pass is served from the index
//!    ([`crate::recall::scope`]): only the facts it lists are scored and loaded.
//! 2. In hybrid and embedding modes the question is embedded once and the tenant's fact
//!    vectors ([`crate::recall::vector_cache`], an exact flat scan, or the listed facts'
//!    vectors alone) give the `POOL_FACTOR * (k + beam)` nearest facts that pass the
//!    filters.
//! 3. Forest recall: the trees holding candidates of either kind (from `Memberships`),
//!    plus `entity:user`, plus the hottest visited trees; ranked by hits + root-summary
//!    score (BM25, plus the summary vector's cosine when the query has one) + heat, the
//!    best `beam` are recalled.
//! 4. Each recalled tree is browsed ([`crate::recall::browse`]) when the query has a time
//!    filter: the browse prunes subtrees outside the range. Without one it is skipped:
//!    steps 1 and 2 already hold the exact top facts under the scores the browse gives
//!    leaves, so a browse could neither add nor reorder a returned fact
//!    (`docs/retrieval-quality.md`); facts are then reported through the recalled trees
//!    that hold them.
//! 5. The best `POOL_FACTOR * (k + beam)` facts reached by the browse or the postings,
//!    the nearest by vector and, for a question that names a calendar time ("in August
//!    2023"), as many of that time (`of_time`), are loaded, filtered, and ranked by
//!    [`crate::recall::fuse`] (their source turns' text, neighbour turns and best
//!    sentence; in hybrid mode combined with the cosine by [`crate::recall::hybrid`];
//!    dated facts first for "when" questions, facts of the named time higher); the first
//!    `k` that pass `latest_only` are returned, each fact whose turn asks a question
//!    followed by the facts of the turn that replies ([`crate::recall::reply`]), and the
//!    recalled trees they came through get a visit (heat).

use std::collections::{BTreeSet, HashMap, VecDeque};

use memforest_tree::{LeafKey, Payload, TimeRange, TreeKind, USER_ENTITY};

use crate::memory::limits::MAX_TURN_TEXT_BYTES;
use crate::memory::record::{self, FactRecord, SessionRecord, TurnRecord, SESSION_PREFIX};
use crate::memory::MemoryError;
use crate::recall::bm25::{query_terms, top_k, top_k_of, Bm25};
use crate::recall::browse::{browse, summary_score, Scorer, Target};
use crate::recall::page::term_hash;
use crate::recall::query::{Mode, Provenance, Query, QueryResult, RecalledFact, RecentTurn};
use crate::recall::reader::Reader;
use crate::recall::{
    accumulate, expand, fuse, hybrid, index, intent, postings, reply, scope, update, vector_cache,
    vectors,
};
use crate::schema::Table;
use crate::Memory;
use memforest_engine::{check_len, TenantId};

fn range(t: (i64, i64)) -> TimeRange {
    TimeRange {
        start: t.0,
        end: t.1.max(t.0),
    }
}

/// Candidates of the calendar times a question names ([`intent::Asked::named_times`]),
/// per fact wanted in the pool: among the best `NAMED_SCAN * pool` by postings score and
/// the as many nearest by vector, the first `pool` of each said at such a time join the
/// fusion. The bound keeps a time that holds few facts from loading the tenant's facts.
const NAMED_SCAN: usize = 4;

/// The first `want` of the best `NAMED_SCAN * want` of `ranked` (`(fact id, score)`, any
/// order) that `query` admits and that were said at a time `asked` names
/// ([`intent::Asked::names_time_of`]), each loaded into `facts`.
///
/// # Errors
/// Engine errors; a corrupt fact record.
fn of_time(
    r: &Reader<'_>,
    query: &Query,
    asked: &intent::Asked,
    ranked: Vec<(u64, f32)>,
    want: usize,
    facts: &mut HashMap<u64, (f32, FactRecord)>,
) -> Result<Vec<(u64, f32)>, MemoryError> {
    let fits = |rec: &FactRecord| asked.names_time_of(rec) && query.admits(rec);
    let mut out = Vec::new();
    for (id, score) in top_k_of(ranked, want.saturating_mul(NAMED_SCAN)) {
        if out.len() >= want {
            break;
        }
        let fit = match facts.get(&id) {
            Some((_, rec)) => fits(rec),
            None => match load_fact(r, id)? {
                Some(rec) if fits(&rec) => {
                    facts.insert(id, (score, rec));
                    true
                }
                _ => false,
            },
        };
        if fit {
            out.push((id, score));
        }
    }
    Ok(out)
}

/// A fact record at the reader's seqno.
pub(crate) fn load_fact(r: &Reader<'_>, id: u64) -> Result<Option<FactRecord>, MemoryError> {
    r.get(Table::Facts, &id.to_be_bytes())?
        .map(|b| record::decode(&b, "fact"))
        .transpose()
}

/// How many facts are in `a` or `b` (each sorted by fact id).
fn union_len(a: &[index::Posting], b: &[index::Posting]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0u64);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.fact.cmp(&y.fact) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
        n += 1;
    }
    n + (a.len().saturating_sub(i) + b.len().saturating_sub(j)) as u64
}

/// The trees fact `id` belongs to.
pub(crate) fn fact_trees(r: &Reader<'_>, id: u64) -> Result<Vec<u64>, MemoryError> {
    let mut out = Vec::new();
    for kv in r.scan_prefix(Table::Memberships, &id.to_be_bytes())? {
        let (k, _) = kv?;
        if let Some(t) = k.get(8..).and_then(record::be_u64) {
            out.push(t);
        }
    }
    Ok(out)
}

impl Memory {
    /// Answers `query` from `tenant`'s memory (see the module docs of
    /// `memforest::recall` for the steps). Reads only `tenant`'s keys.
    ///
    /// # Errors
    /// [`MemoryError::Engine`] for storage errors; [`MemoryError::Corrupt`] for a corrupt
    /// record or page; [`MemoryError::Model`] when the mode needs an embedder and none is
    /// configured or it fails; [`MemoryError::SnapshotNotHeld`] for a `query.snapshot` no
    /// live snapshot holds; [`MemoryError::Name`] for a question over
    /// [`MAX_TURN_TEXT_BYTES`] (the limit of a message's text), before any work;
    /// [`MemoryError::Stopped`] while closing.
    pub fn query(&self, tenant: &TenantId, query: &Query) -> Result<QueryResult, MemoryError> {
        check_len("question", query.text.len(), MAX_TURN_TEXT_BYTES)?;
        let shared = self.runtime().ok_or(MemoryError::Stopped)?.shared();
        let embedder = shared.opts.embedder.as_ref();
        let mode = match (query.mode, embedder) {
            (Mode::Auto, Some(_)) => Mode::Hybrid,
            (Mode::Auto, None) => Mode::Lexical,
            (m, _) => m,
        };
        let embedding = match (mode, embedder) {
            (Mode::Lexical | Mode::Auto, _) => None,
            (Mode::Embedding | Mode::Hybrid, None) => {
                return Err(MemoryError::Model("no embedder configured".into()))
            }
            (Mode::Embedding | Mode::Hybrid, Some(e)) => Some(vectors::unit(
                &crate::memory::embed::checked_query(e.as_ref(), &query.text)
                    .map_err(|e| MemoryError::Model(e.to_string()))?,
            )),
        };
        let state = self.recall_state();
        // The query's terms, then, when it embeds, its related terms (`recall::expand`);
        // each term's text postings, then its speaker field postings.
        let own = query_terms(&query.text);
        let related = match (&embedding, embedder) {
            (Some(_), Some(e)) => expand::related(&own, e.as_ref()),
            _ => Vec::new(),
        };
        let own_count = own.len();
        let lookups: Vec<String> = own
            .into_iter()
            .chain(related.iter().map(|r| r.term.clone()))
            .flat_map(|t| {
                let speaker = index::speaker_term(&t);
                [t, speaker]
            })
            .collect();
        let filter_terms = scope::speaker_terms(query);
        // The latest state: the seqno and the postings and turn generations are read
        // together under the forest lock (no ingest or forget commits meanwhile; see
        // `recall::postings`, `recall::turn_cache`).
        let (r, generations, turn_caching, vector_generation) = if query.snapshot.is_none() {
            let _guard = shared.forest.lock();
            index::ensure(&shared.kv, tenant)?;
            let vector_generation = vector_cache::generation(tenant);
            let generations: Vec<Option<u64>> = lookups
                .iter()
                .chain(&filter_terms)
                .map(|t| Some(postings::generation(tenant, t)))
                .collect();
            (
                Reader::new(&self.db, tenant, None, state)?,
                generations,
                Some((&state.turns, state.turns.generation(tenant))),
                Some(vector_generation),
            )
        } else {
            let r = Reader::new(&self.db, tenant, query.snapshot, state)?;
            (
                r,
                vec![None; lookups.len() + filter_terms.len()],
                None,
                None,
            )
        };
        if let (Some(_), Some(e)) = (&embedding, embedder) {
            vectors::check_embedder(&r, e.name())?;
        }
        let mut result = QueryResult {
            reference_time: query.reference_time,
            ..QueryResult::default()
        };
        recent(&r, query, query.recent_turns, &mut result)?;
        if query.k == 0 {
            return Ok(result);
        }
        let st = index::stats(&r)?;
        let bm = Bm25::new(st.docs, st.total_len);
        let (generations, filter_generations) =
            generations.split_at(lookups.len().min(generations.len()));
        let speakers = filter_terms
            .iter()
            .zip(filter_generations)
            .map(|(t, g)| state.postings.fetch(&r, t, *g))
            .collect::<Result<Vec<_>, _>>()?;
        // The facts the session, speaker and time filters can admit, when the index lists
        // them for less than testing facts one by one (`recall::scope`).
        let admissible = scope::admissible(&r, query, st.docs, &speakers)?;
        let may = |id: u64| admissible.as_ref().is_none_or(|a| a.contains(&id));
        // `terms`: each query or related term's hash and idf for the text of turns and
        // summaries, which hold speakers' names as words: a query term's facts are those
        // with the term in their text or speaker field. `lists`: the speaker field lists
        // (they only boost, see `recall::accumulate`), then the text lists, each with its
        // own idf. A related term's idf is its weight times its own, at most its query
        // term's; one in a speaker's name is left out (`recall::expand`).
        let mut terms = Vec::new();
        let mut speaker_lists = Vec::new();
        let mut text_lists = Vec::new();
        let mut own_idf = Vec::with_capacity(own_count);
        for (i, (pair, gens)) in lookups.chunks(2).zip(generations.chunks(2)).enumerate() {
            let ([t, field], [g, field_g]) = (pair, gens) else {
                continue;
            };
            let text = state.postings.fetch(&r, t, *g)?;
            let names = state.postings.fetch(&r, field, *field_g)?;
            let either = union_len(&text, &names);
            let idf = match i.checked_sub(own_count).and_then(|j| related.get(j)) {
                None => {
                    own_idf.push(bm.idf(either));
                    bm.idf(either)
                }
                Some(_) if !names.is_empty() => continue,
                Some(rel) => {
                    let cap = own_idf.get(rel.source).copied().unwrap_or(0.0);
                    rel.weight * bm.idf(either).min(cap)
                }
            };
            if either == 0 {
                continue;
            }
            terms.push((term_hash(t), idf));
            if !names.is_empty() {
                speaker_lists.push((names, idf));
            }
            if !text.is_empty() {
                text_lists.push((text, idf));
            }
        }
        let boost = speaker_lists.len();
        let term_lists: Vec<accumulate::TermList<'_>> = speaker_lists
            .iter()
            .chain(&text_lists)
            .map(|(l, idf)| (&l[..], *idf))
            .collect();
        let want = query.k.saturating_add(query.beam);
        let pool = want.saturating_mul(fuse::POOL_FACTOR);
        let mut facts: HashMap<u64, (f32, FactRecord)> = HashMap::new();
        // Without a filter the best `want` are the candidates; with one (time, sessions),
        // facts are taken in score order until `want` pass it. The best `pool` that pass
        // join the fusion (without a filter they are all that is needed: MaxScore,
        // `accumulate::top`).
        // `totals`: every fact's postings score, in fact id order, computed once when more
        // than the best `pool` is needed: for a filter, for a browse (with a time filter,
        // below: it scores a fact leaf by its postings score) and for a named time's scan.
        let asked = intent::Asked::of(&query.text);
        let browsing = query.trees && query.time_range.is_some();
        let mut totals = if query.filtered() || !asked.named_times.is_empty() {
            accumulate::totals(&bm, &term_lists, boost)
        } else {
            Vec::new()
        };
        let by_score = if query.filtered() {
            let admitted = totals.iter().copied().filter(|&(id, _)| may(id)).collect();
            top_k_of(admitted, usize::MAX)
        } else {
            accumulate::top(&bm, &term_lists, boost, pool)
        };
        for &(id, score) in &by_score {
            if facts.len() >= want {
                break;
            }
            let Some(rec) = load_fact(&r, id)? else {
                continue;
            };
            if query.admits(&rec) {
                facts.insert(id, (score, rec));
            }
        }
        // Dense candidates: the facts nearest the query by vector, filtered as above.
        let mut dense: HashMap<u64, f32> = HashMap::new();
        let mut nearest = Vec::new();
        let fact_vectors = match embedding {
            Some(_) => Some(state.vectors.fetch(&r, vector_generation)?),
            None => None,
        };
        if let (Some(q), Some(fv)) = (embedding.as_deref(), &fact_vectors) {
            let ranked = match &admissible {
                Some(ids) => fv.nearest_among(q, ids.iter().copied(), usize::MAX),
                None if query.filtered() => fv.nearest(q, usize::MAX),
                None => fv.nearest(q, pool),
            };
            for (id, cos) in ranked {
                if nearest.len() >= pool {
                    break;
                }
                if query.filtered() && !load_fact(&r, id)?.is_some_and(|f| query.admits(&f)) {
                    continue;
                }
                nearest.push(id);
                dense.insert(id, cos);
            }
        }
        // Forest recall. The nearest facts count as hits of their trees; their score 0
        // keeps them from standing in for a leaf's lexical score in a browse.
        for &id in nearest.iter().take(want) {
            if let std::collections::hash_map::Entry::Vacant(slot) = facts.entry(id) {
                if let Some(rec) = load_fact(&r, id)? {
                    slot.insert((0.0, rec));
                }
            }
        }
        let mut hits: HashMap<u64, Vec<(LeafKey, f32)>> = HashMap::new();
        for (&id, (score, rec)) in &facts {
            for t in fact_trees(&r, id)? {
                hits.entry(t).or_default().push((
                    LeafKey {
                        time: range(rec.time),
                        payload: Payload::fact(id),
                    },
                    *score,
                ));
            }
        }
        let user = record::tree_id(TreeKind::Entity, USER_ENTITY);
        let mut cands: BTreeSet<u64> = hits.keys().copied().collect();
        cands.insert(user);
        cands.extend(state.heat.hottest(tenant, query.beam));
        let scorer = Scorer {
            bm,
            terms: &terms,
            embedding: embedding.as_deref(),
            lexical: mode != Mode::Embedding,
            time: query.time_range,
            beam: query.beam.max(1),
        };
        let mut ranked = Vec::new();
        for tree in cands {
            let Some(meta) = r.tree_meta(tree)? else {
                continue;
            };
            let heat = state.heat.heat(tenant, tree, meta.items);
            let n = hits.get(&tree).map_or(0, Vec::len) as f32;
            let root_score = match meta.root {
                Some(root) => {
                    let summary = r.summary(tree, root.id, root.crc, heat)?;
                    summary_score(&r, &scorer, tree, root.id, summary.as_deref())?
                }
                None => continue,
            };
            ranked.push((n + root_score, heat, tree, meta));
        }
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then(a.2.cmp(&b.2))
        });
        ranked.truncate(query.beam.max(1));
        // Browse, unless the postings already decided: without a time filter their exact
        // top `pool` facts carry the scores the browse gives a leaf (their postings
        // scores), so a browse could neither add nor reorder a returned fact. Then a fact is
        // reported through the recalled trees that hold it (its memberships).
        let mut through: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut found: HashMap<u64, f32> = HashMap::new();
        for (_, heat, tree, meta) in ranked.iter().filter(|_| query.trees) {
            let tree_hits = hits.get(tree).map_or(&[][..], Vec::as_slice);
            if !browsing {
                for (leaf, _) in tree_hits {
                    through.entry(leaf.payload.id).or_default().push(*tree);
                }
                continue;
            }
            let target = Target {
                tree: *tree,
                meta,
                heat: *heat,
                hits: tree_hits,
                lexical: &totals,
            };
            for (id, score) in browse(&r, &scorer, &target)? {
                through.entry(id).or_default().push(*tree);
                found.insert(id, score);
            }
        }
        let mut admitted = 0;
        for &(id, score) in &by_score {
            if admitted >= pool {
                break;
            }
            if query.filtered() && !facts.contains_key(&id) {
                match load_fact(&r, id)? {
                    Some(rec) if query.admits(&rec) => {
                        facts.insert(id, (score, rec));
                    }
                    _ => continue,
                }
            }
            found.entry(id).or_insert(score);
            admitted += 1;
        }
        let labels: HashMap<u64, String> = ranked
            .iter()
            .map(|(_, _, t, m)| (*t, format!("{}:{}", m.kind, m.label)))
            .collect();
        // Fusion over the best `pool` facts reached, the `pool` nearest by vector and the
        // facts of a time the question names (source turns, temporal intent, named time),
        // then the hybrid combination.
        let mut pooled: HashMap<u64, (f32, FactRecord)> = HashMap::new();
        let mut reached = top_k(found, pool);
        let mut named = Vec::new();
        if !asked.named_times.is_empty() {
            // Every fact's score, not only the admitted ones `by_score` holds: the scan is
            // the same whichever way a filter ran.
            named = of_time(
                &r,
                query,
                &asked,
                std::mem::take(&mut totals),
                pool,
                &mut facts,
            )?;
            if let (Some(q), Some(fv)) = (embedding.as_deref(), &fact_vectors) {
                let near = fv.nearest(q, pool.saturating_mul(NAMED_SCAN));
                let dense_named = of_time(&r, query, &asked, near, pool, &mut facts)?;
                named.extend(dense_named.into_iter().map(|(id, _)| (id, 0.0)));
            }
        }
        for (id, score) in nearest.iter().map(|&id| (id, 0.0)).chain(named) {
            if !reached.iter().any(|x| x.0 == id) {
                reached.push((id, score));
            }
        }
        for (id, score) in reached {
            let rec = match facts.remove(&id) {
                Some((_, rec)) => rec,
                None => match load_fact(&r, id)? {
                    Some(rec) => rec,
                    None => continue,
                },
            };
            if query.admits(&rec) {
                pooled.insert(id, (score, rec));
            }
        }
        let refs: Vec<fuse::Pooled<'_>> =
            pooled.iter().map(|(&id, (s, rec))| (id, *s, rec)).collect();
        if let (Some(q), Some(fv)) = (embedding.as_deref(), &fact_vectors) {
            for &(id, _, _) in &refs {
                if let (false, Some(cos)) = (dense.contains_key(&id), fv.cosine(q, id)) {
                    dense.insert(id, cos);
                }
            }
        }
        let weight = if mode == Mode::Embedding {
            1.0
        } else {
            hybrid::DENSE_WEIGHT
        };
        let cosines = embedding.as_ref().map(|_| (&dense, weight));
        let fuse::Ranking { order, replies } =
            fuse::rank(&r, bm, &terms, &refs, cosines, &asked, turn_caching)?;
        let mut out: Vec<RecalledFact> = Vec::new();
        let mut supersession = update::Supersession::new(&r);
        // A reply's facts go right after the fact whose turn asked, at its score
        // (`recall::reply`); a fact reached both ways is reported once, where first met.
        let mut queue: VecDeque<(u64, f32)> = order.into();
        while let Some((id, score)) = queue.pop_front() {
            if out.len() >= query.k {
                break;
            }
            let Some((_, rec)) = pooled.remove(&id) else {
                continue;
            };
            let time = range(rec.time);
            let valid_until = supersession.until(id, &rec, query.as_of)?;
            if query.latest_only && valid_until.is_some() {
                continue;
            }
            let mut trees = through.remove(&id).unwrap_or_default();
            if trees.is_empty() {
                trees = fact_trees(&r, id)?
                    .into_iter()
                    .filter(|t| labels.contains_key(t))
                    .collect();
            }
            trees.sort_unstable();
            trees.dedup();
            if r.is_latest() {
                state.heat.visit(tenant, trees.iter().copied());
            }
            out.push(RecalledFact {
                id,
                score,
                time,
                current: valid_until.is_none(),
                valid_until,
                provenance: rec
                    .occurrences
                    .iter()
                    .map(|o| Provenance {
                        session: o.session.clone(),
                        turns: o.turns.clone(),
                    })
                    .collect(),
                trees: trees
                    .iter()
                    .filter_map(|t| labels.get(t).cloned())
                    .collect(),
                text: rec.text,
            });
            if let Some(reply) = replies.get(&id) {
                for (fact, rec) in reply::facts(&r, reply, query)?.into_iter().rev() {
                    if fact != id && !out.iter().any(|f| f.id == fact) {
                        pooled.insert(fact, (score, rec));
                        queue.push_front((fact, score));
                    }
                }
            }
        }
        result.facts = out;
        Ok(result)
    }
}

/// Fills the short-term memory: the last `n` turns of the latest session (of
/// `query.sessions` when set, by last turn time), said at or before `query.as_of`.
fn recent(
    r: &Reader<'_>,
    query: &Query,
    n: usize,
    out: &mut QueryResult,
) -> Result<(), MemoryError> {
    if n == 0 {
        return Ok(());
    }
    let session = |id: &str| -> Result<Option<SessionRecord>, MemoryError> {
        r.get(
            Table::Sessions,
            &record::prefixed(SESSION_PREFIX, id.as_bytes()),
        )?
        .map(|b| record::decode(&b, "session"))
        .transpose()
    };
    let latest = match &query.sessions {
        None => match index::latest_session(r)? {
            Some(id) => session(&id)?,
            None => None,
        },
        Some(ids) => {
            let mut best: Option<SessionRecord> = None;
            for id in ids {
                if let Some(s) = session(id)? {
                    if best.as_ref().is_none_or(|b| s.last_time > b.last_time) {
                        best = Some(s);
                    }
                }
            }
            best
        }
    };
    let Some(s) = latest else {
        return Ok(());
    };
    let mut turns = Vec::new();
    for i in (0..s.turns).rev() {
        if turns.len() >= n {
            break;
        }
        if let Some(b) = r.get(Table::Turns, &record::turn_key(&s.id, i))? {
            let t: TurnRecord = record::decode(&b, "turn")?;
            if query.as_of.is_some_and(|at| t.time > at) {
                continue;
            }
            turns.push(RecentTurn {
                speaker: t.speaker_name().to_owned(),
                id: t.id,
                text: t.text,
                time: t.time,
            });
        }
    }
    turns.reverse();
    if !turns.is_empty() {
        out.recent_turns = turns;
        out.recent_session = Some(s.id);
    }
    Ok(())
}
