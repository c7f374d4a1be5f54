//! Beam browse of one recalled tree (MemForest paper, "Read path"): from the root, each
//! level keeps the `beam` best children, scored by their summaries (BM25 and/or embedding
//! cosine) plus the best score of any candidate fact whose leaf key routes into them, so a
//! fact in a dirty, not yet summarized subtree is still reached; at the bottom, fact leaves
//! are scored by their fact's postings score for the query (`recall::accumulate`: the
//! words of its statement, its speaker field only adding), so the browse reaches the facts
//! the postings would and scores them the same. Children outside the query's time range
//! are pruned.

use std::collections::HashMap;

use memforest_tree::meta::TreeMeta;
use memforest_tree::{LeafKey, NodeBody, NodeId, PayloadKind, TimeRange};

use crate::memory::embed::cosine;
use crate::memory::MemoryError;
use crate::recall::bm25::Bm25;
use crate::recall::page::Terms;
use crate::recall::reader::Reader;

/// What the browse scores with.
#[derive(Debug)]
pub struct Scorer<'a> {
    /// BM25 statistics.
    pub bm: Bm25,
    /// Query term hashes with their idf.
    pub terms: &'a [(u64, f32)],
    /// The query's embedding (embedding and hybrid modes).
    pub embedding: Option<&'a [f32]>,
    /// Whether node summaries are scored lexically.
    pub lexical: bool,
    /// Time filter.
    pub time: Option<TimeRange>,
    /// Beam width.
    pub beam: usize,
}

/// One tree to browse.
#[derive(Debug)]
pub struct Target<'a> {
    /// Tree id.
    pub tree: u64,
    /// Its meta page.
    pub meta: &'a TreeMeta,
    /// Its heat (for the page cache).
    pub heat: f64,
    /// Candidate facts known to be in it: (leaf key, score).
    pub hits: &'a [(LeafKey, f32)],
    /// `(fact id, postings score)` of every fact sharing a word with the query, in fact id
    /// order: the score of a fact leaf that is not a hit (a fact absent from it is not
    /// reached).
    pub lexical: &'a [(u64, f32)],
}

/// Score of a node's summary (`summary`: its term counts when clean): BM25 when the
/// scorer is lexical, plus the cosine of the node's embedding when the query has one.
///
/// # Errors
/// Engine read errors.
pub fn summary_score(
    r: &Reader<'_>,
    s: &Scorer<'_>,
    tree: u64,
    node: NodeId,
    summary: Option<&Terms>,
) -> Result<f32, MemoryError> {
    let mut score = 0.0;
    if let Some(terms) = summary {
        if s.lexical {
            score += s.bm.score_terms(s.terms, terms);
        }
    }
    if let Some(q) = s.embedding {
        let key = crate::memory::record::pair_key(tree, node.0);
        if let Some(bytes) = r.get(crate::schema::Table::Embeddings, &key)? {
            let v: Vec<f32> = bytes
                .chunks_exact(4)
                .filter_map(|c| c.try_into().ok().map(f32::from_le_bytes))
                .collect();
            score += cosine(q, &v);
        }
    }
    Ok(score)
}

/// Browses `t`; returns `(fact id, leaf score)` for every fact leaf reached that is a
/// candidate or has a postings score ([`Target::lexical`]).
///
/// # Errors
/// Engine errors; corrupt pages.
pub fn browse(
    r: &Reader<'_>,
    s: &Scorer<'_>,
    t: &Target<'_>,
) -> Result<Vec<(u64, f32)>, MemoryError> {
    let Some(root) = t.meta.root else {
        return Ok(Vec::new());
    };
    let known: HashMap<LeafKey, f32> = t.hits.iter().copied().collect();
    let mut frontier = vec![r.node(t.tree, root.id, root.crc, t.heat)?];
    let mut out = Vec::new();
    while !frontier.is_empty() {
        let mut next: Vec<(f32, u64, NodeId, u32)> = Vec::new();
        for node in &frontier {
            match &node.node.body {
                NodeBody::Leaves(leaves) => {
                    for leaf in leaves {
                        if leaf.key.payload.kind != PayloadKind::Fact
                            || s.time.is_some_and(|tr| !tr.overlaps(leaf.key.time))
                        {
                            continue;
                        }
                        let id = leaf.key.payload.id;
                        let score = known.get(&leaf.key).copied().unwrap_or_else(|| {
                            t.lexical
                                .binary_search_by_key(&id, |x| x.0)
                                .ok()
                                .and_then(|i| t.lexical.get(i))
                                .map_or(0.0, |x| x.1)
                        });
                        if score > 0.0 {
                            out.push((id, score));
                        }
                    }
                }
                NodeBody::Children(children) => {
                    for (i, c) in children.iter().enumerate() {
                        if s.time.is_some_and(|tr| !tr.overlaps(c.time)) {
                            continue;
                        }
                        let upper = children.get(i + 1).map(|n| n.first);
                        let routed = t
                            .hits
                            .iter()
                            .filter(|(k, _)| *k >= c.first && upper.is_none_or(|u| *k < u))
                            .map(|h| h.1)
                            .fold(0.0f32, f32::max);
                        next.push((routed, i as u64, c.id, c.crc));
                    }
                }
            }
        }
        // Children are ranked by routed plus summary score (a child's summary counts only
        // when the child is clean: a dirty node's summary may be stale), read from the
        // summary cache; only the `beam` best children's pages are read.
        let mut scored = Vec::with_capacity(next.len());
        for (routed, order, id, crc) in next {
            let summary = r.summary(t.tree, id, crc, t.heat)?;
            let sc = routed + summary_score(r, s, t.tree, id, summary.as_deref())?;
            scored.push((sc, order, id, crc));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(s.beam.max(1));
        frontier = scored
            .into_iter()
            .map(|(_, _, id, crc)| r.node(t.tree, id, crc, t.heat))
            .collect::<Result<_, _>>()?;
    }
    Ok(out)
}
