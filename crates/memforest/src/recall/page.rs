//! [`IndexedNode`]: a decoded MemTree node with the BM25 term counts of its clean summary,
//! computed on first use and kept with it in the page cache, so a browse scores children
//! without re-tokenizing (fact leaves are scored from the postings, `recall::browse`).

use std::sync::{Arc, OnceLock};

use memforest_tree::Node;

use crate::memory::text::tokenize;
use crate::recall::bm25::word_term;

/// The 64-bit FNV-1a hash of a term: nodes keep term hashes, not strings, so a browse
/// compares integers (a collision, about 2^-64 per pair, only perturbs a browse score;
/// fact scores come from the exact postings).
#[must_use]
pub fn term_hash(term: &str) -> u64 {
    let mut h = memforest_tree::hash::StableHasher::new();
    h.write(term.as_bytes());
    h.finish()
}

/// Term counts of one text, sorted by term hash.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Terms {
    /// `(term hash, frequency)`, sorted by hash.
    pub counts: Vec<(u64, u32)>,
    /// Length in terms.
    pub len: u32,
}

impl Terms {
    /// The term counts of `text`.
    #[must_use]
    pub fn of(text: &str) -> Self {
        let mut hashes: Vec<u64> = tokenize(text)
            .iter()
            .filter_map(|w| word_term(w))
            .map(|t| term_hash(&t))
            .collect();
        hashes.sort_unstable();
        let mut counts: Vec<(u64, u32)> = Vec::with_capacity(hashes.len());
        for h in &hashes {
            match counts.last_mut() {
                Some(last) if last.0 == *h => last.1 += 1,
                _ => counts.push((*h, 1)),
            }
        }
        let len = u32::try_from(hashes.len()).unwrap_or(u32::MAX);
        Self { counts, len }
    }

    /// The frequency of the term with hash `term`.
    #[must_use]
    pub fn tf(&self, term: u64) -> Option<u32> {
        let i = self.counts.binary_search_by(|c| c.0.cmp(&term)).ok()?;
        self.counts.get(i).map(|c| c.1)
    }
}

/// A node with its summary's term counts.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedNode {
    /// The node.
    pub node: Node,
    /// Term counts of its clean summary: see [`IndexedNode::summary`].
    summary: OnceLock<Option<Arc<Terms>>>,
}

impl IndexedNode {
    /// Indexes `node`.
    #[must_use]
    pub fn new(node: Node) -> Self {
        Self {
            node,
            summary: OnceLock::new(),
        }
    }

    /// Term counts of the summary; `None` when the node has none or is dirty (a dirty
    /// node's summary may describe removed leaves and is never served). Computed on first
    /// use.
    #[must_use]
    pub fn summary(&self) -> Option<&Arc<Terms>> {
        self.summary
            .get_or_init(|| self.clean_summary().map(|s| Arc::new(Terms::of(s))))
            .as_ref()
    }

    /// The summary text when the node is clean.
    #[must_use]
    pub fn clean_summary(&self) -> Option<&str> {
        self.node
            .summary
            .as_ref()
            .filter(|_| !self.node.dirty)
            .map(|s| s.text.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::bm25::term_counts;

    #[test]
    fn term_counts_by_hash_match_the_string_counts() {
        let text = "The runners ran; a runner runs, runs again and RUNS with the Runners' dogs.";
        let mut want: Vec<(u64, u32)> = term_counts(text)
            .into_iter()
            .map(|(t, n)| (term_hash(&t), n))
            .collect();
        want.sort_unstable();
        let got = Terms::of(text);
        assert_eq!(got.counts, want);
        assert_eq!(got.len, want.iter().map(|c| c.1).sum::<u32>());
        assert_eq!(got.tf(term_hash("run")), Some(3));
        assert_eq!(got.tf(term_hash("the")), None, "stop word");
    }
}
