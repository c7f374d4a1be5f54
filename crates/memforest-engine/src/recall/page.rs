//! [`IndexedNode`]: a decoded MemTree node with the BM25 term counts of its clean summary
//! and of each leaf text, computed once when the page is read (and kept with it in the page
//! cache), so a browse scores children and leaves without re-tokenizing.

use memforest_tree::{Node, NodeBody};

use crate::recall::bm25::term_counts;

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
        let mut counts: Vec<(u64, u32)> = term_counts(text)
            .into_iter()
            .map(|(t, n)| (term_hash(&t), n))
            .collect();
        counts.sort_unstable();
        let len = counts.iter().map(|c| c.1).sum();
        Self { counts, len }
    }

    /// The frequency of the term with hash `term`.
    #[must_use]
    pub fn tf(&self, term: u64) -> Option<u32> {
        let i = self.counts.binary_search_by(|c| c.0.cmp(&term)).ok()?;
        self.counts.get(i).map(|c| c.1)
    }
}

/// A node with its texts' term counts.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedNode {
    /// The node.
    pub node: Node,
    /// Term counts of its summary; `None` when it has none or is dirty (a dirty node's
    /// summary may describe removed leaves and is never served).
    pub summary: Option<Terms>,
    /// Term counts of each leaf text (level-1 nodes), in leaf order.
    pub leaves: Vec<Terms>,
}

impl IndexedNode {
    /// Indexes `node`.
    #[must_use]
    pub fn new(node: Node) -> Self {
        let summary = node
            .summary
            .as_ref()
            .filter(|_| !node.dirty)
            .map(|s| Terms::of(&s.text));
        let leaves = match &node.body {
            NodeBody::Leaves(l) => l.iter().map(|e| Terms::of(&e.text)).collect(),
            NodeBody::Children(_) => Vec::new(),
        };
        Self {
            node,
            summary,
            leaves,
        }
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
