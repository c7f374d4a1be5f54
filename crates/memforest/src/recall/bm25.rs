//! BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
//! 2009, eq. 3.15 with Lucene's non-negative idf) over the memory layer's tokenizer
//! ([`crate::memory::text::tokenize`]): lower-cased words, stop words dropped, Snowball
//! stems; CJK bigrams as they are.
//!
//! [`Bm25Index`] is a small in-memory index built from `(doc id, text)` pairs (the flat
//! baseline used by benchmarks and the CLI's `eval`); the persistent per-tenant index in
//! [`crate::recall::index`] scores with the same [`Bm25`] formula.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use crate::memory::text::{is_cjk_token, stem, tokenize, STOP_WORDS};

/// [`STOP_WORDS`] as a hash set (the same words as `memory::text::is_stop_word`, looked
/// up in O(1) rather than by a scan of the list: every indexed or scored word is checked).
static STOP: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.iter().copied().collect());

/// The index terms of `text`, with repeats (term frequency counts them): every word that
/// is not a stop word, stemmed, and every CJK bigram or unigram.
#[must_use]
pub fn terms(text: &str) -> Vec<String> {
    tokenize(text).iter().filter_map(|w| word_term(w)).collect()
}

/// The index term of one token from `memory::text::tokenize`: a CJK token as it is, a
/// word's stem, or `None` for a stop word.
#[must_use]
pub fn word_term(word: &str) -> Option<String> {
    if is_cjk_token(word) {
        return Some(word.to_owned());
    }
    (!STOP.contains(word)).then(|| stem(word))
}

/// The distinct terms of a query, in order of first appearance.
#[must_use]
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in terms(text) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// `(term, frequency)` pairs of `text`, sorted by term.
#[must_use]
pub fn term_counts(text: &str) -> Vec<(String, u32)> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for t in terms(text) {
        *counts.entry(t).or_default() += 1;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort();
    v
}

/// BM25 parameters and collection statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25 {
    /// Term-frequency saturation `k1` (Lucene's default 1.2).
    pub k1: f32,
    /// Length normalization `b` (Lucene's default 0.75).
    pub b: f32,
    /// Documents in the collection.
    pub docs: u64,
    /// Mean document length, in terms.
    pub avg_len: f32,
}

impl Bm25 {
    /// Default parameters over a collection of `docs` documents totalling `total_len` terms.
    #[must_use]
    pub fn new(docs: u64, total_len: u64) -> Self {
        let avg_len = if docs == 0 {
            1.0
        } else {
            (total_len as f32 / docs as f32).max(1.0)
        };
        Self {
            k1: 1.2,
            b: 0.75,
            docs,
            avg_len,
        }
    }

    /// Inverse document frequency of a term in `df` documents:
    /// `ln(1 + (N - df + 0.5) / (df + 0.5))` (never negative).
    #[must_use]
    pub fn idf(&self, df: u64) -> f32 {
        let n = self.docs.max(df) as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The contribution of one term with inverse document frequency `idf`, occurring `tf`
    /// times in a document of `len` terms.
    #[must_use]
    pub fn term_score(&self, idf: f32, tf: u32, len: u32) -> f32 {
        let tf = tf as f32;
        let norm = 1.0 - self.b + self.b * len as f32 / self.avg_len;
        idf * tf * (self.k1 + 1.0) / (tf + self.k1 * norm)
    }

    /// The score of a text, given its term counts, for query terms with their idfs
    /// (`(term hash, idf)`, hashes from [`crate::recall::page::term_hash`]): node summaries
    /// during a browse, turns in `recall::fuse`.
    #[must_use]
    pub fn score_terms(&self, query: &[(u64, f32)], terms: &crate::recall::page::Terms) -> f32 {
        query
            .iter()
            .filter_map(|(t, idf)| Some(self.term_score(*idf, terms.tf(*t)?, terms.len)))
            .sum()
    }
}

/// An in-memory BM25 index over `(doc id, text)` pairs.
#[derive(Debug, Default, Clone)]
pub struct Bm25Index {
    postings: HashMap<String, Vec<(u64, u32)>>,
    lens: HashMap<u64, u32>,
    total_len: u64,
}

impl Bm25Index {
    /// An index of `docs`.
    #[must_use]
    pub fn build<'a>(docs: impl IntoIterator<Item = (u64, &'a str)>) -> Self {
        let mut idx = Self::default();
        for (id, text) in docs {
            idx.add(id, text);
        }
        idx
    }

    /// Adds document `id` (a second add of the same id adds its terms again).
    pub fn add(&mut self, id: u64, text: &str) {
        let counts = term_counts(text);
        let len: u32 = counts.iter().map(|c| c.1).sum();
        for (t, tf) in counts {
            self.postings.entry(t).or_default().push((id, tf));
        }
        *self.lens.entry(id).or_default() += len;
        self.total_len += u64::from(len);
    }

    /// Number of documents.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// True when no document was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The `k` best documents for `query` as `(doc id, score)`, best first (ties by id);
    /// documents sharing no term with the query are never returned.
    #[must_use]
    pub fn search(&self, query: &str, k: usize) -> Vec<(u64, f32)> {
        let bm = Bm25::new(self.lens.len() as u64, self.total_len);
        let mut scores: HashMap<u64, f32> = HashMap::new();
        for t in query_terms(query) {
            let Some(list) = self.postings.get(&t) else {
                continue;
            };
            let idf = bm.idf(list.len() as u64);
            for &(id, tf) in list {
                let len = self.lens.get(&id).copied().unwrap_or(1);
                *scores.entry(id).or_default() += bm.term_score(idf, tf, len);
            }
        }
        top_k(scores, k)
    }
}

/// The `k` highest `(id, score)` pairs, best first, ties broken by smaller id.
#[must_use]
pub fn top_k(scores: HashMap<u64, f32>, k: usize) -> Vec<(u64, f32)> {
    top_k_of(scores.into_iter().collect(), k)
}

/// [`top_k`] of pairs with distinct ids.
#[must_use]
pub fn top_k_of(mut v: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let cmp = |a: &(u64, f32), b: &(u64, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if v.len() > k {
        v.select_nth_unstable_by(k, cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_terms_and_more_matches_score_higher() {
        let idx = Bm25Index::build([
            (1, "Alice adopted a cat named Pixel"),
            (2, "Alice went hiking in the Alps"),
            (3, "Bob adopted a dog"),
        ]);
        let hits = idx.search("which cat did Alice adopt?", 10);
        assert_eq!(hits.first().map(|h| h.0), Some(1));
        assert_eq!(hits.len(), 3);
        assert!(idx.search("zebra", 10).is_empty());
        assert_eq!(idx.search("adopted", 1).len(), 1);
    }

    #[test]
    fn stop_words_are_not_terms_and_words_are_stemmed() {
        assert_eq!(terms("The runners were running"), vec!["runner", "run"]);
        assert_eq!(terms("我们 running"), vec!["我们", "run"]);
    }

    #[test]
    fn a_chinese_question_finds_the_turn_that_shares_its_bigrams() {
        let idx = Bm25Index::build([
            (1, "科幻电影，如果你喜欢可以去看一下《流浪地球》"),
            (2, "我最近晚上老是睡不着"),
            (3, "我们去吃了烤鸭"),
        ]);
        let hits = idx.search("我曾经和你推荐过一部科幻电影，它的名字是？", 10);
        assert_eq!(hits.first().map(|h| h.0), Some(1));
    }
}
