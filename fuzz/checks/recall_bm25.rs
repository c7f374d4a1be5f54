//! Fuzz check `recall_bm25`: bytes split at 0xFF into documents and a final query
//! (lossy UTF-8) go through the read path's tokenizer and the in-memory BM25 index:
//! nothing panics; a search returns at most k distinct documents, best first, with finite
//! positive scores, each sharing a term with the query; with k >= the document count every
//! document sharing a term is returned; a document's hashed term counts (what a browse
//! scores tree pages with) agree with its string term counts.

use std::collections::BTreeSet;

use memforest::recall::bm25::{query_terms, term_counts, terms};
use memforest::recall::page::{term_hash, Terms};
use memforest::recall::Bm25Index;

/// Runs the check on one input.
pub fn check(data: &[u8]) {
    let parts: Vec<String> = data
        .split(|b| *b == 0xFF)
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let Some((query, docs)) = parts.split_last() else {
        return;
    };
    let idx = Bm25Index::build(docs.iter().enumerate().map(|(i, d)| (i as u64, d.as_str())));
    let q: BTreeSet<String> = query_terms(query).into_iter().collect();
    let matching: BTreeSet<u64> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| terms(d).iter().any(|t| q.contains(t)))
        .map(|(i, _)| i as u64)
        .collect();
    for d in docs {
        let mut want: Vec<(u64, u32)> = term_counts(d)
            .into_iter()
            .map(|(t, n)| (term_hash(&t), n))
            .collect();
        want.sort_unstable();
        let got = Terms::of(d);
        assert_eq!(got.len, want.iter().map(|c| c.1).sum::<u32>());
        assert_eq!(got.counts, want);
    }
    for k in [1, 3, docs.len().max(1)] {
        let hits = idx.search(query, k);
        assert!(hits.len() <= k);
        let ids: BTreeSet<u64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(ids.len(), hits.len(), "duplicate ids");
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1), "not best first");
        for (id, score) in &hits {
            assert!(score.is_finite() && *score > 0.0, "score {score}");
            assert!(matching.contains(id), "doc {id} shares no query term");
        }
        if k >= docs.len() {
            assert_eq!(ids, matching, "a matching document is missing");
        }
    }
}
